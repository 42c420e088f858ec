/**
 * Configuration: the ONLY reader of `process.env`. Merges `.env` (project root; real environment
 * wins), validates the environment and the optional JSON settings file with zod, and reports
 * every bad or missing field by name in one message. Secret values are never part of an error.
 * `loadConfigOrExit` prints that message and exits non-zero; `loadConfig` throws ConfigError.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import type { z } from 'zod';
import { GiftdropError } from '../shared/errors.js';
import { settingsGuide, thisInvocation, type Invocation } from '../platform/invocation.js';
import { envSchema, fileSchema, type FileSettings } from './schema.js';
import { closest, knownKeysAt } from './suggest.js';
import { httpProblems, httpSettings, type HttpSettings } from './http.js';
import { parse as parseJsonc, type ParseError } from 'jsonc-parser';
import { parseRateLimitSpec } from './rate-limit-spec.js';
import { LIVE_CREDENTIAL_ENV, modeDataDir, partialCredentialsProblem } from './mode.js';
import { builtInTwitchClientId, readSavedSetup, SAVED_ENV_NAMES } from './saved-setup.js';

export type { FileSettings } from './schema.js';
export { takeModeFlag } from './mode.js';
export { parseRateLimitSpec } from './rate-limit-spec.js';

const DEFAULT_TWITCH_IRC_URL = 'wss://irc-ws.chat.twitch.tv:443';
const DEFAULT_TWITCH_AUTH_URL = 'https://id.twitch.tv/oauth2';

/**
 * TWITCH_AUTH_URL when unset: the contract default, except for a chat server on this machine
 * (`ws://127.0.0.1:PORT`, `ws://localhost:PORT`, `ws://[::1]:PORT`), whose own HTTP port then
 * answers for it (`http://host:PORT/oauth2`, as the sandbox chat server does).
 */
export function defaultTwitchAuthUrl(ircUrl: string): string {
  try {
    const u = new URL(ircUrl);
    if (u.protocol === 'ws:' && isLoopbackHost(u.hostname)) return `http://${u.host}/oauth2`;
  } catch {
    // an invalid TWITCH_IRC_URL is reported elsewhere
  }
  return DEFAULT_TWITCH_AUTH_URL;
}

/** This machine only: `localhost`, 127.0.0.0/8 or ::1 (bare or in brackets, as URL hostnames are). */
function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Settings that work but expose more than the docs advise, one line each (the entry prints
 * them at start-up): an HTTP_HOST other machines can reach, and an http:// GIFTDROP_PUBLIC_URL
 * in live mode (the claim page's login and the winners' prizes would cross the internet unencrypted).
 */
export function riskySettings(
  config: Pick<Config, 'mode' | 'publicUrl'> & { http: Pick<HttpSettings, 'host' | 'port'> },
): string[] {
  const lines: string[] = [];
  if (!isLoopbackHost(config.http.host)) {
    lines.push(
      `HTTP_HOST=${config.http.host}: the bot's HTTP server answers other machines of your network directly; keep HTTP_HOST=127.0.0.1 and let an HTTPS tunnel carry the public routes (docs/security.md).`,
    );
  }
  if (config.mode === 'live' && config.publicUrl?.toLowerCase().startsWith('http://')) {
    lines.push(
      `GIFTDROP_PUBLIC_URL=${config.publicUrl} is http://: winners' logins and prize links would travel unencrypted; use your tunnel's https:// address.`,
    );
  }
  return lines;
}
const DEFAULT_TWITCH_API_URL = 'https://api.twitch.tv/helix';

/** TWITCH_API_URL when unset: like defaultTwitchAuthUrl, a loopback chat server's `/helix` (the Helix sandbox). */
function defaultTwitchApiUrl(ircUrl: string): string {
  const auth = defaultTwitchAuthUrl(ircUrl);
  return auth === DEFAULT_TWITCH_AUTH_URL ? DEFAULT_TWITCH_API_URL : auth.replace(/\/oauth2$/, '/helix');
}
const DEFAULT_FOURTHWALL_API_URL = 'https://api.fourthwall.com/open-api/v1.0';

type FourthwallAuthConfig =
  | { kind: 'basic'; username: string; password: string }
  | {
      kind: 'oauth';
      accessToken?: string;
      refreshToken?: string;
      clientId?: string;
      clientSecret?: string;
    }
  | { kind: 'none' };

export interface Config {
  mode: 'sandbox' | 'live';
  /** Absolute path of this mode's data: DATA_DIR in live mode, DATA_DIR/sandbox in sandbox mode. */
  dataDir: string;
  /** Absolute path of DATA_DIR itself. */
  dataRoot?: string;
  /** DATA_DIR was set (environment or .env), not the default `./data`. */
  dataDirSet?: boolean;
  /** The two listeners' settings (src/config/http.ts). */
  http: HttpSettings;
  /** GIFTDROP_OVERLAY_KEY (secret): turns on the overlay for another machine, at /overlay?key=<key>. */
  overlayKey?: string;
  logLevel: string;
  /** True when LOG_LEVEL was set (sandbox mode keeps its logs at warn otherwise). */
  logLevelExplicit?: boolean;
  /** LOG_FILE: absolute path of a file the log lines are appended to (besides stderr). */
  logFile?: string;
  twitch: {
    channel?: string;
    username?: string;
    token?: string;
    ircUrl: string;
    /** TWITCH_AUTH_URL (or its default, see defaultTwitchAuthUrl); unset: derived from ircUrl. */
    authUrl?: string;
    /** TWITCH_REFRESH_TOKEN + TWITCH_CLIENT_SECRET (with clientId): refresh TWITCH_TOKEN. */
    refreshToken?: string;
    clientId?: string;
    clientSecret?: string;
    /** TWITCH_API_URL (or its default, see defaultTwitchApiUrl); used only with clientId. */
    apiUrl?: string;
    /** TWITCH_OUTBOX_MAX: chat lines kept while disconnected (default 100). */
    outboxMax?: number;
    /** The setup page saved the bot's login (DATA_DIR/twitch-logins.jsonl) and TWITCH_TOKEN is not set. */
    savedLogin?: boolean;
    /** The Public application the device code logins use: TWITCH_CLIENT_ID, the page's field, or the release's. */
    deviceClientId?: { id: string; source: 'env' | 'page' | 'build' };
    /** TWITCH_BROADCASTER_TOKEN / _REFRESH_TOKEN: the broadcaster's login (channel points, bits). */
    broadcasterToken?: string;
    broadcasterRefreshToken?: string;
    /** TWITCH_EVENTSUB_URL (default wss://eventsub.wss.twitch.tv/ws). */
    eventSubUrl?: string;
  };
  fourthwall: {
    apiUrl: string;
    tokenUrl: string;
    auth: FourthwallAuthConfig;
    webhookSecret?: string;
    appHmacKey?: string;
    rateLimit: { limit: number; intervalMs: number };
    shopUrl?: string;
    /** Seconds between `GET /webhook-events` catch-up polls in live mode; 0 = off (default 5). */
    eventPollSeconds?: number;
  };
  /** drand HTTP relay (GIFTDROP_BEACON_URL); default https://api.drand.sh. */
  beaconUrl?: string;
  /** Public base URL of the bot's HTTP server (an HTTPS tunnel), for registering the webhook. */
  publicUrl?: string;
  /** GIFTDROP_DASHBOARD_TOKEN (secret); when unset the dashboard generates one into DATA_DIR/dashboard.token. */
  dashboardToken?: string;
  /** The JSON settings file's path, when one was loaded. */
  configFile?: string;
  settings: FileSettings;
  /** The setup page's values (src/config/saved-setup.ts): whether they are in use, and which the environment or .env override. */
  savedSetup?: { live: boolean; overridden: string[] };
}

export class ConfigError extends GiftdropError {
  readonly problems: string[];
  constructor(problems: string[]) {
    super('CONFIG_INVALID', `Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

export interface LoadOptions {
  /** Environment to read (default: process.env). */
  env?: Record<string, string | undefined>;
  /** Project root where `.env` and `config/` live (default: process.cwd()). */
  cwd?: string;
  /** Load `<cwd>/.env` (default true). */
  dotenv?: boolean;
  /**
   * Forces the mode without requiring live credentials: for the read-only scripts' `--sandbox` /
   * `--live` (they only pick the data directory). Never use it to run the bot.
   */
  readOnlyMode?: 'sandbox' | 'live';
  /** Read the setup page's saved values from DATA_DIR/setup.json (default true). */
  savedSetup?: boolean;
}

function issueLines(prefix: string, error: z.ZodError, schema?: z.ZodType): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.length ? issue.path.map(String).join('.') : '(root)';
    if (schema && issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(schema, issue.path);
      const hints = issue.keys.map((key) => {
        const near = closest(key, known);
        return near ? `"${key}" (did you mean "${near}"?)` : `"${key}"`;
      });
      const choices = known.length ? `; known here: ${known.join(', ')}` : '';
      return `${prefix}${path}: unknown key${issue.keys.length > 1 ? 's' : ''} ${hints.join(', ')}${choices}`;
    }
    return `${prefix}${path}: ${issue.message}`;
  });
}

/**
 * `.env` as the dotenv format reads it (as Windows editors write it too: a UTF-8 byte-order mark,
 * CRLF line ends), with two exceptions streamers expect:
 * - `TWITCH_CHANNEL=#name` (the channel as Twitch writes it). Unquoted, `#` starts a comment
 *   there, so the format reads it as empty; the raw line's `#name` is taken instead. Any other
 *   variable whose unquoted value starts with `#` (read as empty) is listed in `hashed`, so its
 *   error can say why and how to quote it.
 * - a double-quoted value on one line is taken as written: the format turns `\n` in it into a line
 *   break, and a Windows path holds one (`DATA_DIR="C:\new streams\giftdrop"`); no setting here
 *   is multi-line. Unquoted and single-quoted values keep their backslashes anyway.
 */
function readDotEnv(cwd: string): { values: Record<string, string>; hashed: string[] } {
  const file = resolve(cwd, '.env');
  if (!existsSync(file)) return { values: {}, hashed: [] };
  const text = readFileSync(file, 'utf8').replace(/^\uFEFF/, ''); // a byte-order mark is not part of the first name
  const parsed = parseEnv(text);
  const values: Record<string, string> = {};
  for (const [k, v] of Object.entries(parsed)) if (v !== undefined) values[k] = v;
  const hashed: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const quoted = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"([^"\n]*)"\s*(?:#.*)?$/.exec(line);
    if (quoted) values[quoted[1]!] = quoted[2]!;
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(#.*)$/.exec(line);
    if (!m || values[m[1]!]) continue;
    const [, key, rest] = m;
    // `#name`, alone or followed by a comment
    const channel = /^(#[A-Za-z0-9_]{2,25})(?:\s+#.*|\s*)$/.exec(rest!);
    if (key === 'TWITCH_CHANNEL' && channel) values[key] = channel[1]!;
    else hashed.push(key!);
  }
  return { values, hashed };
}

/** The fix for a variable whose `.env` value started with `#` and so was read as empty. */
function hashHint(name: string): string {
  return ` (in .env, ${name}=#... is read as empty because an unquoted # starts a comment: write ${name}="#..." in quotes)`;
}

/**
 * Loads and validates everything; throws ConfigError listing every problem. Each step below reads
 * what the one before it produced and adds its problems; every problem is collected before one
 * ConfigError is thrown, so one run reports everything.
 */
export function loadConfig(options: LoadOptions = {}): Config {
  const cwd = options.cwd ?? process.cwd();
  const sources = mergeEnvironment(options, cwd);
  const saved = savedSetupLayer(cwd, sources, options.savedSetup !== false);
  const envCheck = validateEnvironment(sources.merged);
  const settingsFile = readSettingsFile(cwd, sources.merged, envCheck.env);
  const raw = rawEnvironment(sources.merged, envCheck.env);
  // A bot login saved by the page stands for TWITCH_TOKEN in the mode and credential checks.
  const e = saved.botLogin && !raw.TWITCH_TOKEN ? { ...raw, TWITCH_TOKEN: '(saved login)' } : raw;
  const credentials = credentialsPresent(e);
  const mode = chooseMode(e, credentials, options.readOnlyMode);
  const rateLimit = fourthwallRateLimit(e);
  const problems = [
    ...saved.problems,
    ...envCheck.problems,
    ...settingsFile.problems,
    ...(options.readOnlyMode ? [] : liveModeProblems(e, credentials, mode)),
    ...formatProblems(e),
    ...rateLimit.problems,
    ...(options.readOnlyMode || !envCheck.env ? [] : httpProblems(envCheck.env)),
  ];
  if (problems.length || !envCheck.env) throw configError(problems, sources);
  const config = buildConfig({ cwd, env: envCheck.env, mode, credentials, rateLimit: rateLimit.window, settingsFile });
  const { envClientId, pageClientId } = saved;
  const built = builtInTwitchClientId();
  const deviceClientId = envClientId
    ? { id: envClientId, source: 'env' as const }
    : pageClientId
      ? { id: pageClientId, source: 'page' as const }
      : built
        ? { id: built, source: 'build' as const }
        : undefined;
  return {
    ...config,
    twitch: {
      ...config.twitch,
      ...(saved.botLogin && !config.twitch.token ? { savedLogin: true } : {}),
      // A saved login's application is the client id the Twitch API features use (Helix, EventSub).
      ...(saved.botLogin && !config.twitch.token && !config.twitch.clientId && deviceClientId
        ? { clientId: deviceClientId.id }
        : {}),
      ...(deviceClientId ? { deviceClientId } : {}),
    },
    ...(saved.present ? { savedSetup: { live: saved.live, overridden: saved.overridden } } : {}),
  };
}

/**
 * The setup page's values (DATA_DIR/setup.json) put UNDER the environment and `.env` in
 * `sources.merged`, once the page was finished (`live`); the client id the page names is known
 * before that too (the device code logins need it while the page runs). A damaged file is a problem.
 */
function savedSetupLayer(cwd: string, sources: EnvironmentSources, enabled: boolean) {
  const envClientId = sources.merged.TWITCH_CLIENT_ID?.trim() || undefined;
  const none = {
    problems: [] as string[],
    botLogin: false,
    live: false,
    present: false,
    overridden: [] as string[],
    envClientId,
    pageClientId: undefined as string | undefined,
  };
  if (!enabled) return none;
  const dataRoot = resolve(cwd, sources.merged.DATA_DIR?.trim() || 'data');
  const { setup, problem } = readSavedSetup(dataRoot);
  if (problem) return { ...none, problems: [problem] };
  if (!setup) return none;
  const overridden = SAVED_ENV_NAMES.filter((n) => setup.env[n] !== undefined && sources.merged[n]?.trim());
  const pageValues: Record<string, string> = {};
  if (setup.live) for (const [k, v] of Object.entries(setup.env)) if (!sources.merged[k]?.trim()) pageValues[k] = v;
  sources.merged = { ...pageValues, ...sources.merged };
  const pageClientId = envClientId ? undefined : setup.env.TWITCH_CLIENT_ID;
  return {
    problems: [],
    botLogin: setup.live && setup.botLogin,
    live: setup.live,
    present: true,
    overridden,
    envClientId,
    pageClientId,
  };
}

/** The environment the config reads: `.env` (unless `dotenv: false`) under the real environment, which wins. */
interface EnvironmentSources {
  realEnv: Record<string, string | undefined>;
  merged: Record<string, string | undefined>;
  /** Variables the `.env` set as `NAME=#...` (read as empty; see readDotEnv). */
  hashed: string[];
}

export function mergeEnvironment(options: Pick<LoadOptions, 'env' | 'dotenv'>, cwd: string): EnvironmentSources {
  const realEnv = options.env ?? process.env;
  const dotenv = options.dotenv === false ? { values: {}, hashed: [] } : readDotEnv(cwd);
  return { realEnv, merged: { ...dotenv.values, ...realEnv }, hashed: dotenv.hashed };
}

type Env = z.infer<typeof envSchema>;

/** The environment through its zod schema: the typed values, or the problems (one per field). */
export function validateEnvironment(merged: Record<string, string | undefined>): { env?: Env; problems: string[] } {
  const result = envSchema.safeParse(merged);
  return result.success ? { env: result.data, problems: [] } : { problems: issueLines('', result.error) };
}

/**
 * The JSON settings file: GIFTDROP_CONFIG (relative to cwd) or `config/giftdrop.json` when it
 * exists; the schema's defaults without one. Invalid JSON is reported with its line and column.
 */
export function readSettingsFile(
  cwd: string,
  merged: Record<string, string | undefined>,
  env: Env | undefined,
): { settings: FileSettings; configFile?: string; problems: string[] } {
  const named = env?.GIFTDROP_CONFIG ?? (merged.GIFTDROP_CONFIG || undefined);
  const candidate = named ? (isAbsolute(named) ? named : resolve(cwd, named)) : resolve(cwd, 'config/giftdrop.json');
  const defaults = fileSchema.parse({});
  if (!existsSync(candidate))
    return { settings: defaults, problems: named ? [`GIFTDROP_CONFIG: file not found: ${candidate}`] : [] };
  // (a byte-order mark, as Windows Notepad writes one, is not an error)
  const text = readFileSync(candidate, 'utf8').replace(/^\uFEFF/, '');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    const label = named ? `GIFTDROP_CONFIG (${candidate})` : `settings file ${candidate}`;
    const at = jsonErrorAt(text);
    const problem = at
      ? `${label}: not valid JSON at line ${at.line}, column ${at.column}: ${at.problem}`
      : `${label}: not valid JSON: ${(err as Error).message}`;
    return { settings: defaults, configFile: candidate, problems: [problem] };
  }
  const fileResult = fileSchema.safeParse(json);
  return fileResult.success
    ? { settings: fileResult.data, configFile: candidate, problems: [] }
    : {
        settings: defaults,
        configFile: candidate,
        problems: issueLines(`${candidate}: `, fileResult.error, fileSchema),
      };
}

/**
 * Where a settings file's JSON breaks, as the line and column a text editor shows, and the text
 * found there; asked only after JSON.parse failed (its message names a character position at best).
 * jsonc-parser (VS Code's JSON parser) finds the place, with comments and trailing commas refused
 * as JSON.parse refuses them.
 */
function jsonErrorAt(text: string): { line: number; column: number; problem: string } | undefined {
  const errors: ParseError[] = [];
  parseJsonc(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  if (!first) return undefined;
  const before = text.slice(0, first.offset).split(/\r?\n/);
  const found = text.slice(first.offset, first.offset + Math.max(1, first.length));
  const problem = first.offset >= text.length ? 'unexpected end of the file' : `unexpected ${JSON.stringify(found)}`;
  return { line: before.length, column: before[before.length - 1]!.length + 1, problem };
}

/**
 * The variables the mode and credential checks read, as trimmed raw strings, so those checks
 * still run when some other field failed its schema (one run reports everything).
 */
export function rawEnvironment(merged: Record<string, string | undefined>, env: Env | undefined) {
  const raw = (k: string) => merged[k]?.trim() || undefined;
  const rawMode = raw('GIFTDROP_MODE')?.toLowerCase();
  return {
    GIFTDROP_MODE: env ? env.GIFTDROP_MODE : rawMode === 'sandbox' || rawMode === 'live' ? rawMode : undefined,
    TWITCH_CHANNEL: raw('TWITCH_CHANNEL'),
    TWITCH_USERNAME: raw('TWITCH_USERNAME'),
    TWITCH_TOKEN: raw('TWITCH_TOKEN'),
    TWITCH_IRC_URL: raw('TWITCH_IRC_URL'),
    TWITCH_REFRESH_TOKEN: raw('TWITCH_REFRESH_TOKEN'),
    TWITCH_CLIENT_ID: raw('TWITCH_CLIENT_ID'),
    TWITCH_CLIENT_SECRET: raw('TWITCH_CLIENT_SECRET'),
    FOURTHWALL_API_URL: raw('FOURTHWALL_API_URL'),
    FOURTHWALL_USERNAME: raw('FOURTHWALL_USERNAME'),
    FOURTHWALL_PASSWORD: raw('FOURTHWALL_PASSWORD'),
    FOURTHWALL_ACCESS_TOKEN: raw('FOURTHWALL_ACCESS_TOKEN'),
    FOURTHWALL_REFRESH_TOKEN: raw('FOURTHWALL_REFRESH_TOKEN'),
    FOURTHWALL_CLIENT_ID: raw('FOURTHWALL_CLIENT_ID'),
    FOURTHWALL_CLIENT_SECRET: raw('FOURTHWALL_CLIENT_SECRET'),
    FOURTHWALL_WEBHOOK_SECRET: raw('FOURTHWALL_WEBHOOK_SECRET'),
    FOURTHWALL_APP_HMAC_KEY: raw('FOURTHWALL_APP_HMAC_KEY'),
    FOURTHWALL_RATE_LIMIT: env ? env.FOURTHWALL_RATE_LIMIT : undefined,
  };
}
type RawEnv = ReturnType<typeof rawEnvironment>;

/** Which complete credential sets are present: Twitch chat, Fourthwall basic auth, Fourthwall OAuth. */
interface CredentialsPresent {
  twitch: boolean;
  basic: boolean;
  oauth: boolean;
  fourthwall: boolean;
}

export function credentialsPresent(e: RawEnv): CredentialsPresent {
  const basic = Boolean(e.FOURTHWALL_USERNAME && e.FOURTHWALL_PASSWORD);
  const oauth = Boolean(
    e.FOURTHWALL_ACCESS_TOKEN || (e.FOURTHWALL_REFRESH_TOKEN && e.FOURTHWALL_CLIENT_ID && e.FOURTHWALL_CLIENT_SECRET),
  );
  return {
    twitch: Boolean(e.TWITCH_CHANNEL && e.TWITCH_USERNAME && e.TWITCH_TOKEN),
    basic,
    oauth,
    fourthwall: basic || oauth,
  };
}

/** The mode: forced (read-only scripts), GIFTDROP_MODE, or live as soon as any live credential is set (never a silent demo). */
export function chooseMode(e: RawEnv, has: CredentialsPresent, readOnlyMode?: 'sandbox' | 'live'): 'sandbox' | 'live' {
  const anyLive = LIVE_CREDENTIAL_ENV.some((name) => e[name]);
  return readOnlyMode ?? e.GIFTDROP_MODE ?? (anyLive || (has.twitch && has.fourthwall) ? 'live' : 'sandbox');
}

/** What live mode needs and is missing: a partial credential set, chat login, Fourthwall auth, webhook verification. */
export function liveModeProblems(e: RawEnv, has: CredentialsPresent, mode: 'sandbox' | 'live'): string[] {
  if (mode !== 'live') return [];
  const problems: string[] = [];
  if (!e.GIFTDROP_MODE && !(has.twitch && has.fourthwall))
    problems.push(partialCredentialsProblem(LIVE_CREDENTIAL_ENV.filter((name) => e[name])));
  for (const name of ['TWITCH_CHANNEL', 'TWITCH_USERNAME', 'TWITCH_TOKEN'] as const) {
    if (!e[name]) problems.push(`${name}: required in live mode`);
  }
  problems.push(...fourthwallAuthProblems(e, has));
  if (!e.FOURTHWALL_WEBHOOK_SECRET && !e.FOURTHWALL_APP_HMAC_KEY)
    problems.push('FOURTHWALL_WEBHOOK_SECRET: required in live mode (or FOURTHWALL_APP_HMAC_KEY) to verify webhooks');
  return problems;
}

function fourthwallAuthProblems(e: RawEnv, has: CredentialsPresent): string[] {
  const refreshNeeds = () =>
    (['FOURTHWALL_CLIENT_ID', 'FOURTHWALL_CLIENT_SECRET'] as const)
      .filter((name) => !e[name])
      .map((name) => `${name}: required with FOURTHWALL_REFRESH_TOKEN`);
  if (has.fourthwall) {
    // With an access token too: without the client credentials the refresh token would go unused.
    return !has.basic && e.FOURTHWALL_REFRESH_TOKEN ? refreshNeeds() : [];
  }
  if (e.FOURTHWALL_USERNAME && !e.FOURTHWALL_PASSWORD)
    return ['FOURTHWALL_PASSWORD: required with FOURTHWALL_USERNAME'];
  if (e.FOURTHWALL_PASSWORD && !e.FOURTHWALL_USERNAME)
    return ['FOURTHWALL_USERNAME: required with FOURTHWALL_PASSWORD'];
  if (e.FOURTHWALL_REFRESH_TOKEN) return refreshNeeds();
  return [
    'FOURTHWALL_USERNAME / FOURTHWALL_PASSWORD: required in live mode (or FOURTHWALL_ACCESS_TOKEN / FOURTHWALL_REFRESH_TOKEN with client id and secret)',
  ];
}

/** Values in the wrong shape (logins, URLs) and a Twitch refresh token without its client. */
export function formatProblems(e: RawEnv): string[] {
  const problems: string[] = [];
  if (e.TWITCH_CHANNEL && !/^#?[a-z0-9_]{2,25}$/i.test(e.TWITCH_CHANNEL))
    problems.push('TWITCH_CHANNEL: must be a Twitch login (letters, digits, underscore)');
  if (e.TWITCH_USERNAME && !/^[a-z0-9_]{2,25}$/i.test(e.TWITCH_USERNAME))
    problems.push('TWITCH_USERNAME: must be a Twitch login (letters, digits, underscore)');
  if (e.TWITCH_REFRESH_TOKEN) {
    for (const name of ['TWITCH_CLIENT_ID', 'TWITCH_CLIENT_SECRET'] as const)
      if (!e[name]) problems.push(`${name}: required with TWITCH_REFRESH_TOKEN (to refresh TWITCH_TOKEN)`);
  }
  if (e.TWITCH_IRC_URL && !/^wss?:\/\//i.test(e.TWITCH_IRC_URL))
    problems.push('TWITCH_IRC_URL: must start with ws:// or wss://');
  if (e.FOURTHWALL_API_URL && !/^https?:\/\//i.test(e.FOURTHWALL_API_URL))
    problems.push('FOURTHWALL_API_URL: must start with http:// or https://');
  return problems;
}

/** FOURTHWALL_RATE_LIMIT as a window (default 100 requests per 10 s, Fourthwall's limit). */
export function fourthwallRateLimit(e: Pick<RawEnv, 'FOURTHWALL_RATE_LIMIT'>): {
  window: { limit: number; intervalMs: number };
  problems: string[];
} {
  if (!e.FOURTHWALL_RATE_LIMIT) return { window: { limit: 100, intervalMs: 10_000 }, problems: [] };
  const window = parseRateLimitSpec(e.FOURTHWALL_RATE_LIMIT);
  const positive = window.limit >= 1 && window.intervalMs >= 1;
  return { window, problems: positive ? [] : ['FOURTHWALL_RATE_LIMIT: both numbers must be positive'] };
}

/** One ConfigError for every problem; a variable the .env set as `NAME=#...` that is still empty gets the fix. */
function configError(problems: string[], sources: EnvironmentSources): ConfigError {
  const hashed = sources.hashed.filter((name) => !sources.realEnv[name]);
  return new ConfigError(
    problems.map((p) => {
      const name = hashed.find((n) => p.startsWith(`${n}:`));
      return name ? p + hashHint(name) : p;
    }),
  );
}

/** The Config from validated values: defaults filled in, URLs without trailing slashes, paths absolute. */
function buildConfig(v: {
  cwd: string;
  env: Env;
  mode: 'sandbox' | 'live';
  credentials: CredentialsPresent;
  rateLimit: { limit: number; intervalMs: number };
  settingsFile: { settings: FileSettings; configFile?: string };
}): Config {
  const { cwd, env, mode } = v;
  const dataRoot = resolve(cwd, env.DATA_DIR ?? 'data');
  return {
    mode,
    dataDir: modeDataDir(dataRoot, mode),
    dataRoot,
    ...(env.DATA_DIR !== undefined ? { dataDirSet: true } : {}),
    http: httpSettings(env),
    ...(env.GIFTDROP_OVERLAY_KEY ? { overlayKey: env.GIFTDROP_OVERLAY_KEY } : {}),
    logLevel: env.LOG_LEVEL ?? 'info',
    logLevelExplicit: env.LOG_LEVEL !== undefined,
    ...(env.LOG_FILE ? { logFile: resolve(cwd, env.LOG_FILE) } : {}),
    twitch: twitchConfig(env),
    fourthwall: fourthwallConfig(env, v.credentials, v.rateLimit),
    publicUrl: env.GIFTDROP_PUBLIC_URL?.replace(/\/+$/, ''),
    dashboardToken: env.GIFTDROP_DASHBOARD_TOKEN,
    beaconUrl: env.GIFTDROP_BEACON_URL?.replace(/\/+$/, ''),
    configFile: v.settingsFile.configFile,
    settings: v.settingsFile.settings,
  };
}

function twitchConfig(env: Env): Config['twitch'] {
  const ircUrl = env.TWITCH_IRC_URL ?? DEFAULT_TWITCH_IRC_URL;
  return {
    channel: env.TWITCH_CHANNEL?.replace(/^#/, '').toLowerCase(),
    username: env.TWITCH_USERNAME?.toLowerCase(),
    token: env.TWITCH_TOKEN,
    ircUrl,
    authUrl: (env.TWITCH_AUTH_URL ?? defaultTwitchAuthUrl(ircUrl)).replace(/\/+$/, ''),
    apiUrl: (env.TWITCH_API_URL ?? defaultTwitchApiUrl(ircUrl)).replace(/\/+$/, ''),
    refreshToken: env.TWITCH_REFRESH_TOKEN,
    clientId: env.TWITCH_CLIENT_ID,
    clientSecret: env.TWITCH_CLIENT_SECRET,
    outboxMax: env.TWITCH_OUTBOX_MAX,
    broadcasterToken: env.TWITCH_BROADCASTER_TOKEN,
    broadcasterRefreshToken: env.TWITCH_BROADCASTER_REFRESH_TOKEN,
    eventSubUrl: env.TWITCH_EVENTSUB_URL,
  };
}

function fourthwallConfig(
  env: Env,
  has: CredentialsPresent,
  rateLimit: { limit: number; intervalMs: number },
): Config['fourthwall'] {
  const apiUrl = (env.FOURTHWALL_API_URL ?? DEFAULT_FOURTHWALL_API_URL).replace(/\/+$/, '');
  const auth: FourthwallAuthConfig = has.basic
    ? { kind: 'basic', username: env.FOURTHWALL_USERNAME!, password: env.FOURTHWALL_PASSWORD! }
    : has.oauth
      ? {
          kind: 'oauth',
          accessToken: env.FOURTHWALL_ACCESS_TOKEN,
          refreshToken: env.FOURTHWALL_REFRESH_TOKEN,
          clientId: env.FOURTHWALL_CLIENT_ID,
          clientSecret: env.FOURTHWALL_CLIENT_SECRET,
        }
      : { kind: 'none' };
  return {
    apiUrl,
    tokenUrl: env.FOURTHWALL_TOKEN_URL ?? `${apiUrl}/platform/token`,
    auth,
    webhookSecret: env.FOURTHWALL_WEBHOOK_SECRET,
    appHmacKey: env.FOURTHWALL_APP_HMAC_KEY,
    rateLimit,
    shopUrl: env.FOURTHWALL_SHOP_URL?.replace(/\/+$/, ''),
    eventPollSeconds: env.FOURTHWALL_EVENT_POLL_SECONDS ?? 5,
  };
}

/** Every secret value in a config (and derived forms), for the log scrubber. */
export function secretValues(config: Config): string[] {
  const out: string[] = [];
  const push = (v?: string) => {
    if (v) out.push(v);
  };
  push(config.twitch.token);
  push(config.twitch.token?.replace(/^oauth:/, ''));
  push(config.twitch.refreshToken);
  push(config.twitch.clientSecret);
  push(config.twitch.broadcasterToken);
  push(config.twitch.broadcasterToken?.replace(/^oauth:/, ''));
  push(config.twitch.broadcasterRefreshToken);
  push(config.fourthwall.webhookSecret);
  push(config.fourthwall.appHmacKey);
  push(config.dashboardToken);
  push(config.overlayKey);
  const a = config.fourthwall.auth;
  if (a.kind === 'basic') {
    push(a.password);
    push(Buffer.from(`${a.username}:${a.password}`).toString('base64'));
  } else if (a.kind === 'oauth') {
    push(a.accessToken);
    push(a.refreshToken);
    push(a.clientSecret);
  }
  return out;
}

/**
 * Where to read about the settings that failed: the settings-file example, .env.example, or both;
 * for the single executable (`inv`), which comes without them, the repository's docs.
 */
export function configHint(err: ConfigError, inv: Invocation = thisInvocation()): string {
  if (inv.executable) return settingsGuide(inv);
  const fileProblem = (p: string) =>
    p.startsWith('settings file ') || p.startsWith('GIFTDROP_CONFIG (') || p.startsWith('/');
  const inFile = err.problems.some(fileProblem);
  const inEnv = err.problems.some((p) => !fileProblem(p));
  if (inFile && !inEnv)
    return 'See config/giftdrop.example.json and docs/settings.md for every setting of the settings file.';
  if (inFile)
    return 'See .env.example (environment) and config/giftdrop.example.json (settings file), and docs/settings.md.';
  return settingsGuide(inv);
}

/** For CLIs and main: load, or print every problem (never a secret) and exit non-zero. */
export function loadConfigOrExit(options: LoadOptions = {}): Config {
  try {
    return loadConfig(options);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`giftdrop: ${err.message}\n${configHint(err)}\n`);
      process.exit(1);
    }
    throw err;
  }
}
