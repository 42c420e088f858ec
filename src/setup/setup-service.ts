/**
 * The setup page's server side: the rows a streamer fills in to go live (Fourthwall API user and
 * password, webhook secret, Twitch by device code for the bot and optionally the broadcaster, the
 * channel, the public address), each checked live as it is entered, saved in DATA_DIR (setup.json
 * and twitch-logins.jsonl, owner-only, by the disk protocol), and "Go live" / "Apply", which asks
 * the process to (re)start the bot with them (main.ts). It lives for the whole process (the page
 * survives the bot's restarts); the HTTP routes are setup-routes.ts.
 *
 * Contract: `state()` describes every row (ok / to do / off, and what to fix) and never contains a
 * secret (passwords, the webhook secret, tokens: only "saved"); values the environment or `.env`
 * set win over the page and are shown as such. Each action checks before it saves: the Fourthwall
 * user with `GET /shops/current` (setup/checks.ts, as `setup` does), the client id by asking Twitch
 * to start a login with it, a device login by polling Twitch (twitch/device-login.ts; its tokens
 * saved durably the moment Twitch grants them), the public address by fetching a one-time nonce
 * back through it from this bot's public listener (`publicRoute`). The first write takes the live
 * DATA_DIR lock (held from then on: the live bot runs under it). `applied()` resolves each time the
 * streamer asks to go live or to apply changes. Does not: start or stop the bot, serve HTTP.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import {
  SAVED_ENV_NAMES,
  SETUP_FILE,
  readSavedSetup,
  type SavedEnvName,
  type SavedSetup,
} from '../config/saved-setup.js';
import { FourthwallClient } from '../fourthwall/index.js';
import { undici } from '../http-client/undici.js';
import { registerSecret, type Logger } from '../logging/index.js';
import { sameSecret } from '../shared/constant-time.js';
import type { Clock } from '../shared/clock.js';
import { acquireDataDirLock, nodeDisk, type DataDirLock } from '../storage/index.js';
import { TwitchAuthClient } from '../twitch/auth.js';
import { startDeviceLogin, type DeviceLogin } from '../twitch/device-login.js';
import { LoginStore, type TwitchRole } from '../twitch/login-store.js';
import { claimPageFacts, claimPageReach, whisperReach, type Reach } from '../delivery/winner-reach.js';
import { checkFourthwall, checkWebhookSecret } from './checks.js';
import { BOT_SCOPES, BROADCASTER_SCOPES, scopeList, transportNote } from './scopes.js';
import { chatScopesOf } from '../twitch/scopes.js';
import { twitchFeatureRows, type TwitchFeatureRow } from './twitch-features.js';

/** What the running bot's Twitch features report (app/twitch-events.ts TwitchEvents, structurally). */
export interface RunningTwitchFeatures {
  channelPoints?: { health(): { state: string; problem?: string } };
  bits?: { health(): { state: string; problem?: string } };
  notStarted: Partial<Record<'channelPoints' | 'bits', string>>;
}

/** `checking`: known once the running bot has logged in (the whispers of a TWITCH_TOKEN). */
export type RowStatus = 'ok' | 'todo' | 'error' | 'pending' | 'off' | 'optional' | 'checking';

export interface SetupRow {
  id:
    | 'fourthwall'
    | 'secret'
    | 'client-id'
    | 'bot'
    | 'broadcaster'
    | TwitchFeatureRow['id']
    | 'channel'
    | 'public-url'
    | 'claim-page'
    | 'whispers';
  title: string;
  status: RowStatus;
  detail: string;
  /** Set by the environment or .env (which win over the page). */
  fromEnv?: boolean;
  /** Going live needs it ok. */
  required?: boolean;
  /** Where the page shows it: with what going live needs (above "Go live"), or with what the bot can do besides (below). */
  group?: 'go-live' | 'more';
  /** A value safe to show (a login, a URL, a client id): never a secret. */
  value?: string;
  /** A device login waiting for the user. */
  pending?: { userCode: string; verificationUri: string; expiresAt: number };
  /** The scopes asked for, in plain words. */
  scopes?: { scope: string; words: string }[];
}

export interface SetupState {
  mode: 'sandbox' | 'live';
  rows: SetupRow[];
  /** Every required row is ok. */
  ready: boolean;
  /** What is still missing before going live. */
  missing: string[];
  /** Saved changes the running bot does not use yet (Apply restarts it). */
  changed: boolean;
  /** Problems the running bot reports (a login Twitch ended...). */
  problems: string[];
}

export interface SetupServiceOptions {
  /** The process's configuration (its URLs and what the environment sets). */
  config: Config;
  logger: Logger;
  clock: Clock;
  /** The live DATA_DIR lock is held already (live mode). */
  lockHeld: boolean;
  /** Where the data lock's warnings go. */
  warn?: (line: string) => void;
}

const REQUIRED: SetupRow['id'][] = ['fourthwall', 'secret', 'bot', 'channel', 'public-url'];
/** The page's order: what going live needs (with the client id the bot's login needs), then what the bot can do besides. */
const GO_LIVE_ROWS: SetupRow['id'][] = ['fourthwall', 'secret', 'client-id', 'bot', 'channel', 'public-url'];
const ROW_ORDER: SetupRow['id'][] = [
  ...GO_LIVE_ROWS,
  'whispers',
  'claim-page',
  'broadcaster',
  'channel-points',
  'bits',
  'bot-badge',
];
const CHECK_PATH = '/.well-known/giftdrop-check/';

export class SetupService extends EventEmitter {
  private readonly dataRoot: string;
  private readonly log: Logger;
  private config: Config;
  private saved: SavedSetup;
  private store: LoginStore | undefined;
  private lock: DataDirLock | undefined;
  private lockHeld: boolean;
  private readonly auth: TwitchAuthClient;
  private readonly device = new Map<TwitchRole, { login: DeviceLogin; abort: AbortController; error?: string }>();
  private readonly notes = new Map<SetupRow['id'], { status: RowStatus; detail: string }>();
  private readonly nonces = new Map<string, number>();
  private changed = false;
  private problems: () => string[] = () => [];
  private reach: () => readonly Reach[] = () => [];
  private features: () => RunningTwitchFeatures | undefined = () => undefined;

  constructor(private readonly o: SetupServiceOptions) {
    super();
    this.config = o.config;
    this.dataRoot = o.config.dataRoot ?? o.config.dataDir;
    this.log = o.logger.child({ module: 'setup' });
    this.lockHeld = o.lockHeld;
    this.saved = readSavedSetup(this.dataRoot).setup ?? {
      version: 1,
      env: {},
      live: false,
      botLogin: false,
      savedAt: new Date(0).toISOString(),
    };
    this.auth = new TwitchAuthClient({ authUrl: o.config.twitch.authUrl ?? 'https://id.twitch.tv/oauth2' });
  }

  /** The process's saved logins (opened once; the live bot uses the same store). */
  async loginStore(): Promise<LoginStore> {
    this.store ??= await LoginStore.open(this.dataRoot);
    return this.store;
  }

  /**
   * The running bot: its problems are shown on the page, what its Twitch features do now, and its
   * claim page and whispers; `config` is what it runs with.
   */
  attach(
    config: Config,
    problems: () => string[],
    features?: () => RunningTwitchFeatures,
    reach: () => readonly Reach[] = () => [],
  ): void {
    this.config = config;
    this.problems = problems;
    this.features = features ?? (() => undefined);
    this.reach = reach;
    this.changed = false;
  }

  /** The configuration after a (re)start asked from the page: only then is `changed` cleared. */
  async close(): Promise<void> {
    for (const d of this.device.values()) d.abort.abort();
    await this.auth.close();
    await this.store?.close();
  }

  /** `GET /.well-known/giftdrop-check/<nonce>` on the public listener: proves an address reaches this bot. */
  readonly publicRoute = (req: IncomingMessage, res: ServerResponse): boolean => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (!path.startsWith(CHECK_PATH) || req.method !== 'GET') return false;
    const nonce = path.slice(CHECK_PATH.length);
    const known = [...this.nonces.keys()].some((n) => sameSecret(n, nonce));
    res.writeHead(known ? 200 : 404, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
    res.end(known ? `giftdrop ${nonce}` : 'not found');
    return true;
  };

  state(): SetupState {
    // What going live needs first, in the order it is filled in; then what the bot can do besides.
    const rows = this.rows()
      .map((r): SetupRow => ({
        ...r,
        ...(REQUIRED.includes(r.id) ? { required: true } : {}),
        group: GO_LIVE_ROWS.includes(r.id) ? 'go-live' : 'more',
      }))
      .sort((a, b) => ROW_ORDER.indexOf(a.id) - ROW_ORDER.indexOf(b.id));
    const missing = rows.filter((r) => r.required && r.status !== 'ok').map((r) => r.title);
    return {
      mode: this.config.mode,
      rows,
      ready: missing.length === 0,
      missing,
      changed: this.changed,
      problems: this.problems(),
    };
  }

  private env(name: SavedEnvName): { value?: string; fromEnv: boolean } {
    const overridden = this.envValue(name);
    if (overridden !== undefined) return { value: overridden, fromEnv: true };
    return { value: this.saved.env[name], fromEnv: false };
  }

  /** What the environment or .env set (the process config in sandbox mode has them as loaded). */
  private envValue(name: SavedEnvName): string | undefined {
    const c = this.o.config;
    const fromSaved = c.savedSetup?.live && !c.savedSetup.overridden.includes(name);
    if (fromSaved) return undefined;
    const map: Record<SavedEnvName, string | undefined> = {
      TWITCH_CHANNEL: c.twitch.channel,
      TWITCH_USERNAME: c.twitch.username,
      TWITCH_CLIENT_ID: c.twitch.deviceClientId?.source === 'env' ? c.twitch.deviceClientId.id : undefined,
      FOURTHWALL_USERNAME: c.fourthwall.auth.kind === 'basic' ? c.fourthwall.auth.username : undefined,
      FOURTHWALL_PASSWORD: c.fourthwall.auth.kind === 'basic' ? c.fourthwall.auth.password : undefined,
      FOURTHWALL_WEBHOOK_SECRET: c.fourthwall.webhookSecret,
      GIFTDROP_PUBLIC_URL: c.mode === 'live' ? c.publicUrl : undefined,
    };
    // In sandbox mode the stack's own addresses are not the streamer's: only real settings count.
    return c.mode === 'sandbox' && name === 'GIFTDROP_PUBLIC_URL' ? undefined : map[name];
  }

  private note(id: SetupRow['id']): { status: RowStatus; detail: string } | undefined {
    return this.notes.get(id);
  }

  private clientId(): { id: string; source: string } | undefined {
    const env = this.env('TWITCH_CLIENT_ID');
    if (env.value) return { id: env.value, source: env.fromEnv ? 'TWITCH_CLIENT_ID' : 'this page' };
    const d = this.o.config.twitch.deviceClientId;
    return d
      ? {
          id: d.id,
          source: d.source === 'build' ? 'this release' : d.source === 'page' ? 'this page' : 'TWITCH_CLIENT_ID',
        }
      : undefined;
  }

  private rows(): SetupRow[] {
    const rows: SetupRow[] = [];
    const user = this.env('FOURTHWALL_USERNAME');
    const pass = this.env('FOURTHWALL_PASSWORD');
    const fw = this.note('fourthwall');
    rows.push({
      id: 'fourthwall',
      title: 'Fourthwall API user',
      status: fw?.status ?? (user.value && pass.value ? 'ok' : 'todo'),
      detail:
        fw?.detail ??
        (user.value && pass.value
          ? 'saved'
          : 'In your Fourthwall dashboard: Settings > For developers > Open API > create an API user (as SUPER ADMIN); copy its username and password here.'),
      ...(user.value ? { value: user.value } : {}),
      ...(user.fromEnv ? { fromEnv: true } : {}),
    });
    const secret = this.env('FOURTHWALL_WEBHOOK_SECRET');
    const sn = this.note('secret');
    rows.push({
      id: 'secret',
      title: 'Webhook secret',
      status: sn?.status ?? (secret.value ? 'ok' : 'todo'),
      detail:
        sn?.detail ??
        (secret.value
          ? 'saved (the first signed webhook confirms it)'
          : 'In your Fourthwall dashboard: Settings > For developers > Webhooks: copy the secret shown there.'),
      ...(secret.fromEnv ? { fromEnv: true } : {}),
    });
    const cid = this.clientId();
    const cn = this.note('client-id');
    rows.push({
      id: 'client-id',
      title: 'Twitch application (client id)',
      status: cn?.status ?? (cid ? 'ok' : 'todo'),
      detail:
        cn?.detail ??
        (cid
          ? `${cid.source === 'this release' ? "giftdrop's own Public Twitch application, built into this release" : `from ${cid.source}`}`
          : 'This build has no Twitch application built in. Register one (free): dev.twitch.tv/console/apps > Register Your Application (Twitch first asks you to turn on two-factor authentication: Settings > Security and Privacy), any name, OAuth Redirect URL https://localhost, Category "Chat Bot", Client Type "Public". Copy its Client ID into this field.'),
      ...(cid ? { value: cid.id } : {}),
      ...(cid?.source === 'TWITCH_CLIENT_ID' ? { fromEnv: true } : {}),
    });
    rows.push(this.loginRow('bot'));
    rows.push(this.loginRow('broadcaster'));
    rows.push(...this.featureRows());
    const channel = this.env('TWITCH_CHANNEL');
    rows.push({
      id: 'channel',
      title: 'Your channel',
      status: this.note('channel')?.status ?? (channel.value ? 'ok' : 'todo'),
      detail:
        this.note('channel')?.detail ??
        (channel.value
          ? `the bot joins #${channel.value}`
          : "Your Twitch login (the channel the bot joins); the broadcaster's login below fills it in too."),
      ...(channel.value ? { value: channel.value } : {}),
      ...(channel.fromEnv ? { fromEnv: true } : {}),
    });
    const url = this.env('GIFTDROP_PUBLIC_URL');
    rows.push({
      id: 'public-url',
      title: 'Public address (your tunnel)',
      status: this.note('public-url')?.status ?? (url.value ? 'ok' : 'todo'),
      detail:
        this.note('public-url')?.detail ??
        (url.value
          ? `Fourthwall sends its webhooks to ${url.value}/webhooks/fourthwall (the bot keeps that configuration at this address itself)`
          : `The https:// address of a tunnel to this bot's port ${this.config.http.port} (ngrok's free static domain or a named Cloudflare tunnel keep one address). The page checks it reaches this bot.`),
      ...(url.value ? { value: url.value } : {}),
      ...(url.fromEnv ? { fromEnv: true } : {}),
    });
    rows.push(...this.reachRows(url.value));
    return rows;
  }

  /**
   * The claim page and the whispers in delivery/winner-reach.ts's words (the dashboard's): what the
   * running bot reports while the page holds no change, else what the saved setup will give.
   */
  private reachRows(publicUrl: string | undefined): SetupRow[] {
    const row = (r: Reach): SetupRow => ({
      id: r.id,
      title: r.title,
      status: r.status === 'on' ? 'ok' : r.status === 'off' ? 'off' : 'checking',
      detail: r.detail,
    });
    const running = this.changed ? undefined : this.reach();
    if (running?.length) return running.map(row);
    // The address the page holds, not the one the process started with (the sandbox's own, in the demo).
    const { publicUrl: _started, ...facts } = claimPageFacts(this.config);
    const claim = claimPageReach(publicUrl ? { ...facts, publicUrl } : facts);
    const envToken = Boolean(this.o.config.twitch.token);
    const saved = this.store?.get('bot');
    const whispers = whisperReach({
      setting: this.config.settings.delivery.whispers,
      token: envToken ? 'env' : saved ? 'login' : 'none',
      ...(saved && !envToken ? { scopes: saved.scopes } : {}),
      clientId: envToken ? Boolean(this.config.twitch.clientId) : true,
      claimPage: claim.status === 'on',
    });
    return [row(claim), row(whispers)];
  }

  /** What the broadcaster's login turns on (channel points, bits, the Chat Bot badge), on or off now (twitch-features.ts). */
  private featureRows(): SetupRow[] {
    const t = this.config.twitch;
    const savedBot = this.store?.get('bot');
    const savedBroadcaster = this.store?.get('broadcaster');
    const running = this.features();
    const broadcaster = t.broadcasterToken
      ? { login: t.channel ?? 'the channel' } // TWITCH_BROADCASTER_TOKEN: its scopes are the bot's to check at start
      : savedBroadcaster && { login: savedBroadcaster.login, scopes: savedBroadcaster.scopes };
    const bot = t.token
      ? { login: t.username ?? 'the bot', ...(t.clientId ? { clientId: t.clientId } : {}) }
      : savedBot && { login: savedBot.login, scopes: savedBot.scopes, clientId: savedBot.clientId };
    return twitchFeatureRows({
      settings: this.config.settings,
      ...(broadcaster ? { broadcaster } : {}),
      ...(bot ? { bot } : {}),
      app: { ...(t.clientId ? { clientId: t.clientId } : {}), secret: Boolean(t.clientSecret) },
      ...(running
        ? {
            running: {
              ...(running.channelPoints ? { channelPoints: running.channelPoints.health() } : {}),
              ...(running.bits ? { bits: running.bits.health() } : {}),
              notStarted: running.notStarted,
            },
          }
        : {}),
    });
  }

  private loginRow(role: TwitchRole): SetupRow {
    const saved = this.store?.get(role);
    const d = this.device.get(role);
    const envBot = role === 'bot' && this.o.config.twitch.token;
    const transport = this.config.settings.chat.transport;
    const scopes = scopeList(role === 'bot' ? BOT_SCOPES : BROADCASTER_SCOPES, transport);
    const title = role === 'bot' ? 'Twitch: the bot account' : "Twitch: the broadcaster's account (optional)";
    if (envBot)
      return {
        id: role,
        title,
        status: 'ok',
        detail: `TWITCH_TOKEN is set (it wins over a login made here) for ${this.o.config.twitch.username ?? 'the bot'}`,
        fromEnv: true,
        scopes,
      };
    if (d && !d.error)
      return {
        id: role,
        title,
        status: 'pending',
        detail: `Open ${d.login.verificationUri} and enter the code ${d.login.userCode}, logged in to Twitch as ${role === 'bot' ? 'the bot account' : 'yourself (the broadcaster)'}.`,
        pending: { userCode: d.login.userCode, verificationUri: d.login.verificationUri, expiresAt: d.login.expiresAt },
        scopes,
      };
    if (d?.error) return { id: role, title, status: 'error', detail: `${d.error}. Log in again.`, scopes };
    if (saved && role === 'bot') {
      // A login made before the transport changed may lack its scopes: the bot would refuse it at start.
      const lacks = chatScopesOf(transport).filter((s) => !saved.scopes.includes(s));
      if (lacks.length)
        return {
          id: role,
          title,
          status: 'error',
          detail: `logged in as ${saved.login}, but that login lacks ${lacks.join(' ')}. ${transportNote(transport)} Log in again.`,
          value: saved.login,
          scopes,
        };
      return {
        id: role,
        title,
        status: 'ok',
        detail: `logged in as ${saved.login} (renewed automatically). ${transportNote(transport)}`,
        value: saved.login,
        scopes,
      };
    }
    if (saved)
      return {
        id: role,
        title,
        status: 'ok',
        detail: `logged in as ${saved.login} (renewed automatically)`,
        value: saved.login,
        scopes,
      };
    return {
      id: role,
      title,
      status: role === 'bot' ? 'todo' : 'optional',
      detail:
        role === 'bot'
          ? 'Log in with the Twitch account the bot chats as (your own, or a second account for the bot).'
          : "Optional: your own account, for what only the broadcaster's login can do (channel points, Bits, the Chat Bot badge, follower checks as the broadcaster: the rows below say what each needs and whether it is on).",
      scopes,
    };
  }

  private async takeLock(): Promise<void> {
    if (this.lockHeld) return;
    this.lock = await acquireDataDirLock(this.dataRoot, {
      warn: this.o.warn ?? ((l) => this.log.warn(l)),
      platform: process.platform,
    });
    this.lockHeld = true;
  }

  private async saveEnv(values: Partial<Record<SavedEnvName, string>>, extra: Partial<SavedSetup> = {}): Promise<void> {
    await this.takeLock();
    const env = { ...this.saved.env };
    for (const [k, v] of Object.entries(values))
      if (v !== undefined && (SAVED_ENV_NAMES as readonly string[]).includes(k)) env[k] = v;
    this.saved = { ...this.saved, ...extra, env, savedAt: new Date(this.o.clock.now()).toISOString() };
    await nodeDisk.mkdirs(this.dataRoot);
    await nodeDisk.writeAtomic(join(this.dataRoot, SETUP_FILE), `${JSON.stringify(this.saved, null, 2)}\n`);
    this.changed = true;
  }

  /** Checks the Fourthwall API user live (`GET /shops/current`); saves it when it works. */
  async setFourthwall(username: string, password: string): Promise<SetupRow> {
    username = username.trim();
    if (!username || !password) return this.fail('fourthwall', 'Enter the API username and password.');
    registerSecret(this.o.logger, password);
    const client = new FourthwallClient({
      apiUrl: this.config.fourthwall.apiUrl,
      auth: { basic: { username, password } },
      rateLimit: this.config.fourthwall.rateLimit,
      logger: this.log,
      retry: { maxAttempts: 2 },
      deadlineMs: 20_000,
    });
    try {
      const item = await checkFourthwall(
        { ...this.config, fourthwall: { ...this.config.fourthwall, auth: { kind: 'basic', username, password } } },
        client,
      );
      if (item.status !== 'ok')
        return this.fail(
          'fourthwall',
          item.detail.replace(
            'FOURTHWALL_USERNAME/FOURTHWALL_PASSWORD rejected',
            'The username and password were rejected',
          ),
        );
      await this.saveEnv({ FOURTHWALL_USERNAME: username, FOURTHWALL_PASSWORD: password });
      this.log.info('setup page: the Fourthwall API user works and was saved');
      return this.ok('fourthwall', `works: ${item.detail}`);
    } finally {
      await client.close().catch(() => undefined);
    }
  }

  async setSecret(secret: string): Promise<SetupRow> {
    secret = secret.trim();
    const item = checkWebhookSecret({
      ...this.config,
      fourthwall: { ...this.config.fourthwall, webhookSecret: secret || undefined, appHmacKey: undefined },
    });
    if (item.status !== 'ok' || secret.length < 8)
      return this.fail(
        'secret',
        'Paste the webhook secret shown in the Fourthwall dashboard (Settings > For developers > Webhooks).',
      );
    registerSecret(this.o.logger, secret);
    await this.saveEnv({ FOURTHWALL_WEBHOOK_SECRET: secret });
    return this.ok('secret', 'saved (Fourthwall has no API to compare it: the first signed webhook confirms it)');
  }

  /** Checks a client id by asking Twitch to start a login with it (a Public application answers a code). */
  async setClientId(clientId: string): Promise<SetupRow> {
    clientId = clientId.trim();
    if (!/^[a-z0-9]{10,64}$/i.test(clientId))
      return this.fail(
        'client-id',
        "Paste the Client ID shown on your Twitch application's page (letters and digits).",
      );
    try {
      await this.auth.deviceStart(clientId, ['chat:read']);
    } catch (err) {
      return this.fail('client-id', (err as Error).message);
    }
    await this.saveEnv({ TWITCH_CLIENT_ID: clientId });
    this.o.config.twitch.deviceClientId = { id: clientId, source: 'page' };
    return this.ok('client-id', 'works: Twitch starts logins with it');
  }

  async setChannel(channel: string): Promise<SetupRow> {
    const c = channel.trim().replace(/^#/, '').toLowerCase();
    if (!/^[a-z0-9_]{2,25}$/.test(c)) return this.fail('channel', 'A Twitch login: letters, digits and _.');
    await this.saveEnv({ TWITCH_CHANNEL: c });
    return this.ok('channel', `the bot joins #${c}`);
  }

  /** Starts a device login for `role`; the row turns ok once the user authorized on Twitch's page. */
  async startLogin(role: TwitchRole): Promise<SetupRow> {
    const cid = this.clientId();
    if (!cid) return this.fail(role, "First give the Twitch application's client id (the row above).");
    this.device.get(role)?.abort.abort();
    const secret =
      this.o.config.twitch.clientSecret && this.o.config.twitch.clientId === cid.id
        ? this.o.config.twitch.clientSecret
        : undefined;
    const scopes = role === 'bot' ? BOT_SCOPES : BROADCASTER_SCOPES;
    await this.takeLock();
    const store = await this.loginStore();
    await store.prepare(); // the grant's save is then one write and one sync
    let login: DeviceLogin;
    try {
      login = await startDeviceLogin({
        auth: this.auth,
        clock: this.o.clock,
        clientId: cid.id,
        ...(secret ? { clientSecret: secret } : {}),
        scopes,
      });
    } catch (err) {
      return this.fail(role, (err as Error).message);
    }
    const abort = new AbortController();
    const entry: { login: DeviceLogin; abort: AbortController; error?: string } = { login, abort };
    this.device.set(role, entry);
    this.notes.delete(role);
    void this.finishLogin(role, entry, store, cid.id);
    return this.loginRow(role);
  }

  private async finishLogin(
    role: TwitchRole,
    entry: { login: DeviceLogin; abort: AbortController; error?: string },
    store: LoginStore,
    clientId: string,
  ): Promise<void> {
    try {
      const r = await entry.login.wait(entry.abort.signal, async (t) => {
        registerSecret(this.o.logger, t.accessToken);
        registerSecret(this.o.logger, t.refreshToken);
      });
      await store.save(role, {
        login: r.info.login,
        userId: r.info.userId,
        clientId,
        scopes: r.info.scopes,
        accessToken: r.tokens.accessToken,
        refreshToken: r.tokens.refreshToken,
        expiresAt: r.expiresAt,
        savedAt: new Date(this.o.clock.now()).toISOString(),
      });
      if (role === 'bot') await this.saveEnv({ TWITCH_USERNAME: r.info.login }, { botLogin: true });
      else if (!this.env('TWITCH_CHANNEL').value) await this.saveEnv({ TWITCH_CHANNEL: r.info.login });
      else this.changed = true;
      this.log.info(
        `setup page: ${role === 'bot' ? 'the bot' : 'the broadcaster'} logged in to Twitch as ${r.info.login}`,
      );
      this.device.delete(role);
    } catch (err) {
      if (entry.abort.signal.aborted) return;
      entry.error = (err as Error).message;
    }
  }

  /** Checks that `url` reaches this bot (a nonce fetched back through it); saves it when it does. */
  async setPublicUrl(raw: string): Promise<SetupRow> {
    let url: URL;
    try {
      url = new URL(raw.trim());
      if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('scheme');
    } catch {
      return this.fail(
        'public-url',
        'Paste the https:// address your tunnel shows (e.g. https://your-name.ngrok-free.app).',
      );
    }
    const base = `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
    const why = await this.reachesThisBot(base);
    if (why) return this.fail('public-url', why);
    await this.saveEnv({ GIFTDROP_PUBLIC_URL: base });
    return this.ok('public-url', `reaches this bot; Fourthwall's webhook will point at ${base}/webhooks/fourthwall`);
  }

  /** Undefined when `base` reaches this bot (a one-time nonce fetched back through it), else why not and the fix. */
  private async reachesThisBot(base: string): Promise<string | undefined> {
    const nonce = randomBytes(16).toString('hex');
    this.nonces.set(nonce, this.o.clock.now());
    const port = this.config.http.port;
    try {
      const { request } = await undici();
      const res = await request(`${base}${CHECK_PATH}${nonce}`, {
        method: 'GET',
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
        signal: AbortSignal.timeout(10_000),
      });
      const body = await res.body.text();
      if (res.statusCode !== 200 || body.trim() !== `giftdrop ${nonce}`)
        return `${base} answered, but not as this bot (HTTP ${res.statusCode}): point the tunnel at http://127.0.0.1:${port}`;
      return undefined;
    } catch (err) {
      return `${base} could not be reached from here (${(err as { code?: string }).code ?? (err as Error).message}): is the tunnel running and pointed at http://127.0.0.1:${port}?`;
    } finally {
      this.nonces.delete(nonce);
    }
  }

  /**
   * The live bot's check of its public address (BotOptions.checkPublicUrl): tried at once and again
   * after each of `retryMs` (a tunnel started after the bot), undefined as soon as it reaches this
   * bot; else the line the bot reports, with the fix (a quick tunnel's new address goes on this page).
   */
  async checkPublicUrl(
    url: string,
    signal: AbortSignal,
    retryMs: readonly number[] = [15_000, 45_000],
  ): Promise<string | undefined> {
    let why: string | undefined;
    for (const wait of [0, ...retryMs]) {
      if (wait)
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, wait);
          t.unref();
          signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
        });
      if (signal.aborted) return undefined;
      why = await this.reachesThisBot(url);
      if (!why) return undefined;
    }
    return `The public address does not reach this bot: ${why} Fourthwall's webhooks and the links chat shows go nowhere until it does (the bot catches missed webhooks up late). A quick tunnel gets a new address at each start: give the new one on the setup page.`;
  }

  /**
   * "Go live" / "Apply": saves the setup as ready, then resolves the waiters of `applied()` once
   * `answered` settles (the page's answer is out: the restart closes the listener it travels on);
   * refused while a required row is missing.
   */
  async apply(answered: Promise<unknown> = Promise.resolve()): Promise<{ ok: boolean; missing: string[] }> {
    const s = this.state();
    if (!s.ready) return { ok: false, missing: s.missing };
    await this.saveEnv({}, { live: true });
    this.log.info(
      this.config.mode === 'sandbox'
        ? 'setup page: going live'
        : 'setup page: applying the new setup (the bot restarts)',
    );
    void answered.finally(() => this.emit('apply'));
    return { ok: true, missing: [] };
  }

  /** Resolves the next time the page asks to go live or apply. */
  applied(): Promise<void> {
    return new Promise((resolve) => this.once('apply', () => resolve()));
  }

  private ok(id: SetupRow['id'], detail: string): SetupRow {
    this.notes.set(id, { status: 'ok', detail });
    return this.rows().find((r) => r.id === id)!;
  }

  private fail(id: SetupRow['id'], detail: string): SetupRow {
    this.notes.set(id, { status: 'error', detail });
    return this.rows().find((r) => r.id === id)!;
  }

  /** Releases the lock this service took (process exit does it too). */
  release(): void {
    this.lock?.release();
  }
}
