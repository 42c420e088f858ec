/**
 * End-to-end test helpers: the two local servers (Fourthwall sandbox + Twitch chat server) in the
 * test process, and the bot either as the REAL process (`node --import tsx src/main.ts`, live mode,
 * clean environment, stdout/stderr captured, HTTP port learnt from its startup log line) or
 * in-process through startLocalStack. Plus small readers of the sandbox state, the bot's data
 * directory and a signed webhook sender.
 *
 * Contract: every server listens on 127.0.0.1 with an OS-chosen port; nothing reaches the
 * internet; waits are on predicates/events with timeouts, never sleeps. Helpers do not clean up
 * behind the caller's back: tests call `close()` / `kill()` / `cleanup()`.
 * Shared with the issue-5 e2e tests (test/e2e-link-*): keep the exported API stable.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { loadConfig, type Config } from '../../src/config/index.js';
import { fileSchema } from '../../src/config/schema.js';
import { createLogger, type Logger } from '../../src/logging/index.js';
import {
  BOT_WEBHOOK_TYPES,
  startLocalStack,
  type LocalStack,
  type LocalStackOptions,
} from '../../src/local/local-stack.js';
import { signWebhookBody, SHOP_SIGNATURE_HEADER } from '../../src/fourthwall/webhooks.js';
import type { DrawRecord, Entrant } from '../../src/giveaway/model.js';
import type { HealthReport } from '../../src/http/server.js';
import {
  startChatServer,
  type ChatServer,
  type ChatServerOptions,
  type SimViewer,
} from '../../src/sandbox/chat/index.js';
import {
  startFourthwallSandbox,
  type FourthwallSandbox,
  type FourthwallSandboxOptions,
  type RequestRecord,
} from '../../src/sandbox/fourthwall/index.js';
import type { OutboxLimits } from '../../src/twitch/index.js';
import { FileDrawRepository } from '../../src/storage/index.js';
import { parseJournal } from '../../src/storage/journal.js';
import { LogCapture } from './log-capture.js';

/** The project root (where `src/main.ts` and `node_modules` live). */
export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every environment variable the bot reads (contract); unset ones are passed empty so a `.env` cannot leak in. */
export const BOT_ENV_NAMES = [
  'GIFTDROP_MODE',
  'GIFTDROP_CONFIG',
  'GIFTDROP_PUBLIC_URL',
  'GIFTDROP_BEACON_URL',
  'DATA_DIR',
  'HTTP_HOST',
  'HTTP_PORT',
  'GIFTDROP_LOCAL_PORT',
  'GIFTDROP_LOCAL_BIND',
  'GIFTDROP_TRUST_PROXY',
  'LOG_LEVEL',
  'TWITCH_CHANNEL',
  'TWITCH_USERNAME',
  'TWITCH_TOKEN',
  'TWITCH_IRC_URL',
  'TWITCH_AUTH_URL',
  'TWITCH_REFRESH_TOKEN',
  'TWITCH_CLIENT_ID',
  'TWITCH_CLIENT_SECRET',
  'TWITCH_OUTBOX_MAX',
  'FOURTHWALL_API_URL',
  'FOURTHWALL_USERNAME',
  'FOURTHWALL_PASSWORD',
  'FOURTHWALL_ACCESS_TOKEN',
  'FOURTHWALL_REFRESH_TOKEN',
  'FOURTHWALL_CLIENT_ID',
  'FOURTHWALL_CLIENT_SECRET',
  'FOURTHWALL_TOKEN_URL',
  'FOURTHWALL_WEBHOOK_SECRET',
  'FOURTHWALL_APP_HMAC_KEY',
  'FOURTHWALL_RATE_LIMIT',
  'FOURTHWALL_SHOP_URL',
  'FOURTHWALL_EVENT_POLL_SECONDS',
  'GIFTDROP_DASHBOARD_TOKEN',
] as const;

// ---------------------------------------------------------------------------------------------
// Waiting and temp dirs
// ---------------------------------------------------------------------------------------------

/** Resolves once `predicate` holds (checked every `everyMs`); rejects naming `what` after `timeoutMs`. */
export async function waitUntil(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
  what = 'condition',
  everyMs = 10,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline) throw new Error(`waitUntil(${what}) timed out after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** A fresh temporary directory and its remover. */
export async function makeTempDir(prefix = 'giftdrop-e2e-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A TCP port that was free a moment ago (for restarting the bot on the same port). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Writes a settings file (validated against the config schema) and returns its path (for
 * GIFTDROP_CONFIG). The public drand beacon is off unless `settings.fairness` says otherwise: these
 * bots run in live mode against local servers, and no test may reach the internet.
 */
export async function writeSettingsFile(dir: string, settings: Record<string, unknown> = {}): Promise<string> {
  const body = { fairness: { beacon: 'off' }, ...settings };
  fileSchema.parse(body);
  const file = join(dir, 'giftdrop.e2e.json');
  await writeFile(file, JSON.stringify(body, null, 2));
  return file;
}

// ---------------------------------------------------------------------------------------------
// The two local servers
// ---------------------------------------------------------------------------------------------

export interface LocalServers {
  fourthwall: FourthwallSandbox;
  chat: ChatServer;
  close(): Promise<void>;
}

/** Starts the Fourthwall sandbox (short draws by default: 3 s) and the chat server (bot is a mod by default). */
export async function startLocalServers(
  options: { fourthwall?: FourthwallSandboxOptions; chat?: ChatServerOptions } = {},
): Promise<LocalServers> {
  const fourthwall = await startFourthwallSandbox({ drawDurationSeconds: 3, ...options.fourthwall });
  try {
    const chat = await startChatServer({ botIsMod: true, ...options.chat });
    return {
      fourthwall,
      chat,
      async close() {
        await chat.close();
        await fourthwall.close();
      },
    };
  } catch (err) {
    await fourthwall.close();
    throw err;
  }
}

/** Marks the sandbox shop live for the chat server's channel (gift purchases need it). */
export function setShopLive(servers: Pick<LocalServers, 'fourthwall' | 'chat'>): void {
  servers.fourthwall.control.setLive(true, {
    broadcasterId: servers.chat.channelId,
    broadcasterLogin: servers.chat.channel,
  });
}

/** Registers `url` as a webhook for the bot's event types through the sandbox API (Basic auth); no-op when present. */
export async function registerWebhook(
  fw: FourthwallSandbox,
  url: string,
  types: readonly string[] = BOT_WEBHOOK_TYPES,
): Promise<string> {
  const auth = `Basic ${Buffer.from(`${fw.username}:${fw.password}`).toString('base64')}`;
  const list = await fetch(`${fw.apiUrl}/webhooks`, { headers: { authorization: auth } });
  if (list.status !== 200) throw new Error(`listing webhooks answered ${list.status}`);
  const existing = ((await list.json()) as { results: { id: string; url: string }[] }).results.find(
    (w) => w.url === url,
  );
  if (existing) return existing.id;
  const res = await fetch(`${fw.apiUrl}/webhooks`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify({ url, allowedTypes: types }),
  });
  if (res.status !== 200 && res.status !== 201)
    throw new Error(`creating the webhook answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

// ---------------------------------------------------------------------------------------------
// The real bot process
// ---------------------------------------------------------------------------------------------

export interface BotEnvOptions {
  dataDir: string;
  /** Default 0 (the OS picks; read it from the startup line). */
  httpPort?: number;
  /** GIFTDROP_CONFIG; default: a path that is set but absent is an error, so pass undefined for none. */
  configFile?: string;
  logLevel?: string;
  /** Extra or overriding variables. */
  extra?: Record<string, string>;
}

/** The clean environment of a live-mode bot talking to the two local servers. */
export function botProcessEnv(
  servers: Pick<LocalServers, 'fourthwall' | 'chat'>,
  o: BotEnvOptions,
): Record<string, string> {
  const { fourthwall: fw, chat } = servers;
  const env: Record<string, string> = {};
  for (const name of BOT_ENV_NAMES) env[name] = '';
  Object.assign(env, {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIFTDROP_MODE: 'live',
    DATA_DIR: o.dataDir,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(o.httpPort ?? 0),
    GIFTDROP_LOCAL_PORT: '0',
    LOG_LEVEL: o.logLevel ?? 'info',
    TWITCH_CHANNEL: chat.channel,
    TWITCH_USERNAME: chat.botLogin,
    TWITCH_TOKEN: chat.token,
    TWITCH_IRC_URL: chat.url,
    FOURTHWALL_API_URL: fw.apiUrl,
    FOURTHWALL_USERNAME: fw.username,
    FOURTHWALL_PASSWORD: fw.password,
    FOURTHWALL_WEBHOOK_SECRET: fw.webhookSecret,
    FOURTHWALL_SHOP_URL: fw.shopUrl,
    ...(o.configFile ? { GIFTDROP_CONFIG: o.configFile } : {}),
    ...o.extra,
  });
  return env;
}

/**
 * The bot's webhook URL from its startup log line: a pino JSON line with a `webhooks` field, or a
 * text line saying `webhooks: <url>` / `webhooks at <url>`. Undefined for any other line.
 */
export function parseWebhookUrl(line: string): string | undefined {
  const text = line.trim();
  if (text.startsWith('{')) {
    try {
      const obj = JSON.parse(text) as Record<string, unknown>;
      if (typeof obj['webhooks'] === 'string' && /^https?:\/\//.test(obj['webhooks'])) return obj['webhooks'];
    } catch {
      // not JSON after all: fall through to the text form
    }
  }
  const m = /\bwebhooks(?::|\s+at)\s*"?(https?:\/\/[^\s",]+)/.exec(text);
  return m?.[1];
}

interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface BotProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** `http://127.0.0.1:PORT/webhooks/fourthwall`, from the startup line. */
  readonly webhookUrl: string;
  /** `http://127.0.0.1:PORT` */
  readonly baseUrl: string;
  readonly port: number;
  /** Captured stdout / stderr lines so far (live arrays). */
  readonly stdout: string[];
  readonly stderr: string[];
  /** Everything captured, stdout then stderr. */
  output(): string;
  /** Resolves with the first stdout/stderr line matching; rejects after `timeoutMs` or when the process exits first. */
  waitForLine(predicate: (line: string) => boolean, timeoutMs?: number, what?: string): Promise<string>;
  /** GET /healthz. */
  health(): Promise<{ status: number; body: HealthReport }>;
  /** Sends `signal` (default SIGTERM) and resolves when the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<ExitInfo>;
  /** Resolves when the process exits. */
  readonly exited: Promise<ExitInfo>;
}

export interface SpawnBotOptions extends BotEnvOptions {
  /** Register the webhook URL at the sandbox (default true). */
  register?: boolean;
  /** How long startup may take (default 20 s; tsx compiles on the first run). */
  startTimeoutMs?: number;
  /** Run it as the user does, `npm start` (the returned pid is npm's), instead of node + tsx. */
  npmStart?: boolean;
}

/**
 * Spawns `node --import tsx src/main.ts` (or `npm start`) in live mode against the two servers, waits for its
 * startup line, registers its webhook and waits for /healthz to show chat connected.
 */
export async function spawnBot(
  servers: Pick<LocalServers, 'fourthwall' | 'chat'>,
  o: SpawnBotOptions,
): Promise<BotProcess> {
  const env = botProcessEnv(servers, o);
  const child = o.npmStart
    ? spawn('npm', ['start'], {
        cwd: PROJECT_ROOT,
        env: { HOME: process.env.HOME ?? '/tmp', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: PROJECT_ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const listeners = new Set<(line: string) => void>();
  const exitListeners = new Set<(e: ExitInfo) => void>();
  let exit: ExitInfo | undefined;
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      for (const l of exitListeners) l(exit);
      resolve(exit);
    });
  });
  const pipe = (stream: NodeJS.ReadableStream, into: string[]) => {
    createInterface({ input: stream }).on('line', (line) => {
      into.push(line);
      for (const l of listeners) l(line);
    });
  };
  pipe(child.stdout, stdout);
  pipe(child.stderr, stderr);
  const output = () => [...stdout, ...stderr].join('\n');

  const waitForLine = (predicate: (line: string) => boolean, timeoutMs = 10_000, what = 'line'): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      const done = (err: Error | undefined, line?: string) => {
        clearTimeout(timer);
        listeners.delete(onLine);
        exitListeners.delete(onExit);
        if (err) reject(err);
        else resolve(line!);
      };
      const onLine = (line: string) => {
        if (predicate(line)) done(undefined, line);
      };
      const onExit = (e: ExitInfo) =>
        done(
          new Error(
            `bot exited (code ${e.code}, signal ${e.signal}) before ${what}; output:\n${output().slice(-4000)}`,
          ),
        );
      const timer = setTimeout(
        () => done(new Error(`no ${what} from the bot within ${timeoutMs} ms; output:\n${output().slice(-4000)}`)),
        timeoutMs,
      );
      const seen = [...stdout, ...stderr].find(predicate);
      if (seen !== undefined) return done(undefined, seen);
      if (exit) return onExit(exit);
      listeners.add(onLine);
      exitListeners.add(onExit);
    });

  const kill = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<ExitInfo> => {
    if (!exit) child.kill(signal);
    return exited;
  };

  try {
    const line = await waitForLine((l) => parseWebhookUrl(l) !== undefined, o.startTimeoutMs ?? 20_000, 'startup line');
    const webhookUrl = parseWebhookUrl(line)!;
    const url = new URL(webhookUrl);
    const baseUrl = url.origin;
    const health = async () => {
      const res = await fetch(`${baseUrl}/healthz`);
      return { status: res.status, body: (await res.json()) as HealthReport };
    };
    if (o.register !== false) await registerWebhook(servers.fourthwall, webhookUrl);
    await waitUntil(async () => (await health()).body.chat === 'connected', 5000, 'healthz chat connected', 25);
    return {
      child,
      pid: child.pid!,
      webhookUrl,
      baseUrl,
      port: Number(url.port),
      stdout,
      stderr,
      output,
      waitForLine,
      health,
      kill,
      exited,
    };
  } catch (err) {
    await kill('SIGKILL');
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// The in-process stack
// ---------------------------------------------------------------------------------------------

export interface InProcessStack extends LocalStack {
  dataDir: string;
  /** Lines the bot sent to the streamer's console (links appear here). */
  operatorLines: string[];
  /** The bot's pino output. */
  logs: LogCapture;
  logger: Logger;
  /** Closes the stack, then removes the data dir (unless `keepDataDir`). */
  close(): Promise<void>;
}

export interface InProcessOptions {
  fourthwall?: FourthwallSandboxOptions;
  chat?: ChatServerOptions;
  /** The JSON settings file's content (validated). */
  settings?: Record<string, unknown>;
  /** Reuse this data dir (it is then not removed on close). */
  dataDir?: string;
  outbox?: Partial<OutboxLimits>;
  logLevel?: string;
  /** Event intake tuning and storage fault injection. */
  bot?: LocalStackOptions['bot'];
  /** More environment for the bot's config (e.g. GIFTDROP_OVERLAY_KEY). */
  env?: Record<string, string>;
}

/** The whole stack in this process (startLocalStack): sandbox with 3 s draws, chat server with the bot as mod. */
export async function startInProcessStack(o: InProcessOptions = {}): Promise<InProcessStack> {
  const temp = o.dataDir ? undefined : await makeTempDir();
  const dataDir = o.dataDir ?? temp!.dir;
  const base: Config = loadConfig({
    env: { ...o.env, DATA_DIR: dataDir, HTTP_PORT: '0', LOG_LEVEL: o.logLevel ?? 'info' },
    dotenv: false,
    cwd: dataDir,
  });
  // The bot's data folder is `dataDir` itself (not DATA_DIR/sandbox), so tests read it directly.
  const config: Config = { ...base, dataDir, settings: fileSchema.parse(o.settings ?? {}) };
  const logs = new LogCapture();
  const logger = createLogger({ level: config.logLevel, destination: logs });
  const operatorLines: string[] = [];
  try {
    const stack = await startLocalStack({
      config,
      logger,
      operator: { notify: (line) => operatorLines.push(line) },
      fourthwall: { drawDurationSeconds: 3, ...o.fourthwall },
      chat: { botIsMod: true, ...o.chat },
      ...(o.outbox ? { outbox: o.outbox } : {}),
      ...(o.bot ? { bot: o.bot } : {}),
    });
    return {
      ...stack,
      dataDir,
      operatorLines,
      logs,
      logger,
      async close() {
        await stack.close();
        await temp?.cleanup();
      },
    };
  } catch (err) {
    await temp?.cleanup();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Chat, webhooks, sandbox and data-dir readers
// ---------------------------------------------------------------------------------------------

/** Injects `!enter` (or `text`) for each login; returns the viewers. */
export function enterAll(chat: ChatServer, logins: readonly string[], text = '!enter'): SimViewer[] {
  return logins.map((login) => {
    const v = chat.viewer(login);
    chat.inject(v, text);
    return v;
  });
}

/** `count` distinct viewer logins `prefix0..prefixN-1`. */
export function logins(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${i}`);
}

/** POSTs `body` to `url` signed with `secret` (or with `signature` verbatim). */
export async function postWebhook(
  url: string,
  body: string | Buffer,
  opts: { secret?: string; signature?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; text: string; retryAfter: string | null }> {
  const signature = opts.signature ?? (opts.secret !== undefined ? signWebhookBody(body, opts.secret) : undefined);
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(signature !== undefined ? { [SHOP_SIGNATURE_HEADER]: signature } : {}),
      ...opts.headers,
    },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  return { status: res.status, text: await res.text(), retryAfter: res.headers.get('retry-after') };
}

/** A Fourthwall webhook envelope (as the sandbox sends them). */
export function webhookEnvelope(
  type: string,
  data: unknown,
  id = `weve_e2e_${Math.random().toString(36).slice(2)}`,
): string {
  return JSON.stringify({
    testMode: false,
    id,
    webhookId: 'wcon_e2e',
    shopId: 'sh_e2e',
    type,
    apiVersion: 'V1',
    createdAt: new Date().toISOString(),
    data,
  });
}

/** The finish calls the sandbox received (for one draw when `drawId` is given). */
export function finishCalls(fw: FourthwallSandbox, drawId?: string): RequestRecord[] {
  return fw.control.requests.filter(
    (r) => r.operation === 'finishDraw' && (drawId === undefined || r.path.includes(`/gifting/draw/${drawId}/`)),
  );
}

/** What the sandbox saw of a draw's finish: the statuses of its finish calls, its status and its winners' user ids (sorted). */
export function finishSeen(
  fw: FourthwallSandbox,
  drawId: string,
): { finishStatuses: RequestRecord['status'][]; status: string; winnerIds: string[] } {
  const d = sandboxDraw(fw, drawId);
  return {
    finishStatuses: finishCalls(fw, drawId).map((r) => r.status),
    status: d.status,
    winnerIds: d.winners.map((w) => w.userId ?? '').sort(),
  };
}

/** Requests of one API operation. */
export function callsOf(fw: FourthwallSandbox, operation: string): RequestRecord[] {
  return fw.control.requests.filter((r) => r.operation === operation);
}

/** The sandbox's view of a draw: status and the winners on its gifts (user id, username, redeem link). */
export function sandboxDraw(
  fw: FourthwallSandbox,
  drawId: string,
): {
  status: 'OPEN' | 'FINISHED' | 'EXPIRED';
  type: 'INITIAL' | 'REDO';
  giftIds: string[];
  winners: { giftId: string; userId?: string; username?: string; redeemUri: string }[];
} {
  const d = fw.state.draw(drawId);
  const purchase = fw.state.giftPurchase(d.giveawayId);
  const winners = purchase.gifts
    .filter((g) => d.giftIds.includes(g.id) && g.winner)
    .map((g) => ({
      giftId: g.id,
      userId: g.winner!.userId,
      username: g.winner!.username,
      redeemUri: g.winner!.redeemUri,
    }));
  return { status: d.status, type: d.type, giftIds: [...d.giftIds], winners };
}

/** Reads one draw from a data dir (read-only; safe beside a running bot). */
export async function readDraw(dataDir: string, id: string): Promise<DrawRecord | undefined> {
  const repo = await FileDrawRepository.open(dataDir, { readOnly: true });
  try {
    return await repo.getDraw(id);
  } finally {
    await repo.close();
  }
}

/** Every draw in a data dir, newest first (read-only). */
export async function readHistory(dataDir: string): Promise<DrawRecord[]> {
  const repo = await FileDrawRepository.open(dataDir, { readOnly: true });
  try {
    return await repo.listDraws();
  } finally {
    await repo.close();
  }
}

/** Waits until the draw in `dataDir` has one of `statuses` and returns it. */
export async function waitForDrawStatus(
  dataDir: string,
  id: string,
  statuses: readonly DrawRecord['status'][] = ['finished', 'failed', 'cancelled'],
  timeoutMs = 15_000,
): Promise<DrawRecord> {
  let found: DrawRecord | undefined;
  await waitUntil(
    async () => {
      found = await readDraw(dataDir, id).catch(() => undefined);
      return !!found && statuses.includes(found.status);
    },
    timeoutMs,
    `draw ${id} ${statuses.join('/')}`,
    25,
  );
  return found!;
}

/** The entrants written to a draw's journal file on disk (what survives a SIGKILL). */
export function journaledEntrants(dataDir: string, drawId: string): Entrant[] {
  const file = join(dataDir, 'journal', `${drawId}.jsonl`);
  if (!existsSync(file)) return [];
  // (the journal's own reader: both line formats; a torn last line is not durable yet)
  return parseJournal(readFileSync(file, 'utf8')).entrants;
}

/**
 * Runs `npm run <script> -- --live <args>` (the live data in DATA_DIR, no credentials needed) in
 * the project root with a clean environment (PATH, HOME, DATA_DIR; every other bot variable empty
 * so a `.env` cannot leak in) and collects its output.
 */
export function runNpmScript(
  script: string,
  args: readonly string[],
  o: { dataDir: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: Record<string, string> = {};
  for (const name of BOT_ENV_NAMES) env[name] = '';
  Object.assign(env, {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? tmpdir(),
    DATA_DIR: o.dataDir,
    ...o.env,
  });
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', script, '--', '--live', ...args], {
      cwd: PROJECT_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`npm run ${script} did not finish within ${o.timeoutMs ?? 20_000} ms:\n${stdout}\n${stderr}`));
    }, o.timeoutMs ?? 20_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
