/**
 * A local Twitch chat gateway for tests, benchmarks and the sandbox demo: a WebSocket server
 * (subprotocol `irc`) that speaks enough Twitch IRC for tmi.js 1.8.5 (CAP, PASS/NICK with
 * token check, welcome numerics, GLOBALUSERSTATE, JOIN -> USERSTATE then ROOMSTATE, PART,
 * PING/PONG both ways, RECONNECT) and lets a test play the channel: inject viewer messages with
 * realistic tags, watch what the bot says, change its mod status and the room's modes.
 *
 * Contract: every bot PRIVMSG is judged by Twitch's rules (see limits.ts) on the injected
 * clock; a delivered one is recorded in the transcript (kind 'bot') and answered with
 * USERSTATE (never an echo); a dropped one gets Twitch's NOTICE (none for an over-long one,
 * which Twitch drops silently) and a transcript entry of kind 'notice'. The one token
 * authenticates the bot login; `justinfan<digits>` may connect anonymously to read.
 * The same HTTP port serves Twitch's token validation and refresh under `/oauth2` (oauth.ts):
 * one access token is valid at a time and a refresh rotates it, so the chat login follows.
 * `halfOpen()` makes every open socket swallow what the bot writes and answer nothing (no
 * USERSTATE, no PONG, no chat) until `dropConnections()`, like a connection that died silently.
 * Deliberately not here: more than one channel, whispers, moderation commands (Twitch removed
 * them from IRC), flood disconnects, TLS. Nothing here reads process.env.
 */
import { EventEmitter } from 'node:events';
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, WebSocket, type RawData } from 'ws';
import { systemClock, type Clock } from '../../shared/clock.js';
import { GiftdropError } from '../../shared/errors.js';
import type { Logger } from '../../logging/index.js';
import { silentLogger } from '../../logging/index.js';
import { formatTags, parseLine, stripTags, type IrcLine } from './irc.js';
import { SandboxOAuth, type OAuthEvent } from './oauth.js';
import { noticeText, OutboundPolicy, type ChatLimits, type RoomModes } from './limits.js';
import {
  checkText,
  formatViewerPrivmsg,
  makeViewer,
  normaliseLogin,
  userIdFor,
  type ChannelContext,
  type InjectExtra,
  type SimViewer,
  type SimViewerOptions,
} from './viewers.js';

export type { SimViewer, SimViewerOptions, InjectExtra } from './viewers.js';
export type { ChatLimits, RoomModes } from './limits.js';

/** Options of {@link startChatServer}. */
export interface ChatServerOptions {
  /** Default 0 (the OS picks). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Channel login without `#`. Default `giftdrop_demo`. */
  channel?: string;
  /** Channel user id (`room-id`). Default derived from the channel login. */
  channelId?: string;
  /** The login the token belongs to. Default `giftdrop_bot`. */
  botLogin?: string;
  /** The bot's OAuth token (with or without `oauth:`). Random when absent. */
  token?: string;
  /** The refresh token `/oauth2/token` accepts (rotated on each refresh). Random when absent. */
  refreshToken?: string;
  /** OAuth client id / secret the token endpoint expects. Default `giftdropsandboxclient` / random. */
  clientId?: string;
  clientSecret?: string;
  /** Scopes `/oauth2/validate` reports. Default chat:read chat:edit. */
  scopes?: string[];
  /** Lifetime of an access token on the server's clock (default 14 400 s, like Twitch's). */
  tokenLifetimeSeconds?: number;
  /** The bot starts as a moderator of the channel. Default false. */
  botIsMod?: boolean;
  /** The bot subscribes to the channel (subs-only mode lets it talk). Default false. */
  botIsSubscriber?: boolean;
  /** The bot follows the channel (followers-only mode lets it talk). Default false. */
  botFollowing?: boolean;
  /** Room modes at start. Default all off. */
  roomState?: RoomStateChange;
  clock?: Clock;
  limits?: ChatLimits;
  logger?: Logger;
}

/** A change of room modes; absent keys keep their value. */
export interface RoomStateChange {
  /** Seconds between messages for non-mods; 0 = off. */
  slow?: number;
  /** Minutes of following required; -1 = off, 0 = any follower. */
  followersOnly?: number;
  subsOnly?: boolean;
  emoteOnly?: boolean;
  r9k?: boolean;
}

/** One line of what happened in the channel, in order. */
export interface TranscriptEntry {
  /** Clock time (ms since the epoch). */
  at: number;
  kind: 'viewer' | 'bot' | 'notice' | 'system';
  login?: string;
  userId?: string;
  displayName?: string;
  /** The message text (viewer/bot, without the ACTION wrapper), the NOTICE text, or a system note. */
  text: string;
  /** NOTICE msg-id, on notice entries (`msg_ratelimit`, `msg_duplicate`, `msg_too_long`, ...). */
  msgId?: string;
  /** The PRIVMSG `id` tag, on viewer entries and delivered bot messages. */
  messageId?: string;
  /** A `/me` line. */
  action?: boolean;
  /** Bits cheered (viewer entries). */
  bits?: number;
  /** On notice entries: the bot's text that was not delivered. */
  attempted?: string;
  /** On bot entries sent as a reply: the `reply-parent-msg-id` tag. */
  replyTo?: string;
}

/** Payload of the `connection` and `disconnect` events. */
export interface ConnectionInfo {
  /** Connection number, unique per server. */
  id: number;
  /** Authenticated login (undefined when the socket closed before logging in). */
  login?: string;
  anonymous: boolean;
}

export interface ChatServerEvents {
  'bot-message': [entry: TranscriptEntry];
  notice: [entry: TranscriptEntry];
  connection: [info: ConnectionInfo];
  disconnect: [info: ConnectionInfo];
  transcript: [entry: TranscriptEntry];
  join: [info: ConnectionInfo & { channel: string }];
  oauth: [event: OAuthEvent];
}

/** The running sandbox chat server. */
export interface ChatServer {
  /** `ws://127.0.0.1:PORT` */
  readonly url: string;
  readonly port: number;
  readonly host: string;
  /** The bot's current access token (without `oauth:`); changes when the bot refreshes it. */
  readonly token: string;
  /** The current refresh token, client id and secret of `/oauth2/token`. */
  readonly refreshToken: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** `http://host:port/oauth2`: this server's Twitch OAuth stand-in (validate, token). */
  readonly authUrl: string;
  /** The current access token expires now: validate answers 401 and the next chat login is refused. */
  expireToken(): void;
  /** This server's token check (current token, client id, scopes), for the Helix sandbox. */
  readonly tokens: { accepts(token: string): boolean; readonly clientId: string; readonly scopes: readonly string[] };
  /** Serves more HTTP paths on this port (the Helix sandbox under /helix); `handler` returns false for others. */
  mount(handler: (req: IncomingMessage, res: ServerResponse) => boolean): void;
  /** Every open socket goes half-open: it swallows what clients write and answers nothing until dropped. */
  halfOpen(): void;
  readonly channel: string;
  readonly channelId: string;
  readonly botLogin: string;
  readonly botUserId: string;
  /** A simulated chatter; the same login always has the same user id. */
  viewer(login: string, opts?: SimViewerOptions): SimViewer;
  /** The channel owner (user id = channelId). */
  readonly broadcaster: SimViewer;
  /** Delivers a viewer's message to every client in the channel and records it. */
  inject(viewer: SimViewer, text: string, extra?: InjectExtra): void;
  /**
   * Fast bulk path: pre-formatted IRC lines (no line endings), batched many per frame, sent to
   * every client in the channel. Not recorded in the transcript.
   */
  injectRaw(lines: readonly string[]): void;
  /** The IRC line `inject` would send (without `\r\n`). */
  formatPrivmsg(viewer: SimViewer, text: string, extra?: InjectExtra): string;
  readonly transcript: TranscriptEntry[];
  /** Texts the bot got delivered, in order. */
  botMessages(): string[];
  /** NOTICEs the bot earned (including the silent `msg_too_long`), in order. */
  notices(): { msgId: string; text: string }[];
  /** Resolves once `predicate()` is true; rejects with a clear error after `timeoutMs` (real time, default 5000). */
  waitFor(predicate: () => boolean, timeoutMs?: number, what?: string): Promise<void>;
  on<E extends keyof ChatServerEvents>(event: E, fn: (...args: ChatServerEvents[E]) => void): unknown;
  off<E extends keyof ChatServerEvents>(event: E, fn: (...args: ChatServerEvents[E]) => void): unknown;
  once<E extends keyof ChatServerEvents>(event: E, fn: (...args: ChatServerEvents[E]) => void): unknown;
  /** Changes the bot's mod status and tells its clients (USERSTATE with mod=1/0 and badges). */
  setBotMod(mod: boolean): void;
  /** Changes room modes and sends one ROOMSTATE per changed mode. */
  setRoomState(s: RoomStateChange): void;
  readonly roomState: Readonly<RoomModes>;
  /** Sends RECONNECT to every client, then closes them. */
  sendReconnect(): void;
  /** Terminates every socket abruptly. */
  dropConnections(): void;
  /** PINGs every logged-in client; resolves with how many answered PONG, rejects on timeout. */
  ping(timeoutMs?: number): Promise<number>;
  /** Open sockets. */
  connections(): number;
  /** Logins currently joined to the channel (one entry per connection). */
  joined(): string[];
  close(): Promise<void>;
}

interface Conn {
  id: number;
  ws: WebSocket;
  caps: Set<string>;
  pass?: string;
  login?: string;
  anonymous: boolean;
  joined: Set<string>;
  pongWaiters: (() => void)[];
  halfOpen?: boolean;
}

const KNOWN_CAPS = ['twitch.tv/tags', 'twitch.tv/commands', 'twitch.tv/membership'];
const RAW_BATCH_CHARS = 256 * 1024;
const TAGS_CAP = 'twitch.tv/tags';

function sha256(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

function bareToken(pass: string): string {
  return pass.replace(/^oauth:/i, '');
}

/** Starts the sandbox chat server; resolves once it listens. */
export async function startChatServer(opts: ChatServerOptions = {}): Promise<ChatServer> {
  const server = new SandboxChatServer(opts);
  await server.listen(opts.port ?? 0);
  return server;
}

class SandboxChatServer extends EventEmitter implements ChatServer {
  readonly host: string;
  readonly channel: string;
  readonly channelId: string;
  readonly botLogin: string;
  readonly botUserId: string;
  readonly broadcaster: SimViewer;
  readonly transcript: TranscriptEntry[] = [];
  port = 0;
  url = '';
  authUrl = '';

  private readonly clock: Clock;
  private readonly ctx: ChannelContext;
  private readonly log: Logger;
  private readonly policy: OutboundPolicy;
  private readonly modes: RoomModes = { slow: 0, followersOnly: -1, subsOnly: false, emoteOnly: false, r9k: false };
  private readonly oauth: SandboxOAuth;
  private readonly conns = new Set<Conn>();
  private readonly chatted = new Set<string>();
  private readonly waiters = new Set<() => void>();
  private readonly http = createServer((req, res) => this.plainHttp(req, res));
  private readonly mounts: Array<(req: IncomingMessage, res: ServerResponse) => boolean> = [];
  private readonly wss: WebSocketServer;
  private botMod: boolean;
  private readonly botSubscriber: boolean;
  private readonly botFollowing: boolean;
  private nextConnId = 1;
  private closed = false;

  constructor(opts: ChatServerOptions) {
    super();
    this.host = opts.host ?? '127.0.0.1';
    this.channel = normaliseLogin(opts.channel ?? 'giftdrop_demo', 'channel');
    this.channelId = opts.channelId ?? userIdFor(this.channel);
    if (!/^\d+$/.test(this.channelId) || this.channelId === '0' || this.channelId === '1') {
      throw new GiftdropError('SANDBOX_CHAT_BAD_INPUT', `channelId must be a numeric string other than 0/1 (got ${JSON.stringify(this.channelId)})`);
    }
    this.botLogin = normaliseLogin(opts.botLogin ?? 'giftdrop_bot', 'botLogin');
    this.botUserId = this.botLogin === this.channel ? this.channelId : userIdFor(this.botLogin);
    const token = opts.token !== undefined ? bareToken(opts.token) : randomBytes(15).toString('hex');
    if (!token || /\s/.test(token)) {
      throw new GiftdropError('SANDBOX_CHAT_BAD_INPUT', 'token must be a non-empty string without spaces');
    }
    this.botMod = opts.botIsMod ?? false;
    this.botSubscriber = opts.botIsSubscriber ?? false;
    this.botFollowing = opts.botFollowing ?? false;
    this.clock = opts.clock ?? systemClock;
    const clock = this.clock;
    this.oauth = new SandboxOAuth({
      token,
      login: this.botLogin,
      userId: this.botUserId,
      clock,
      ...(opts.refreshToken !== undefined ? { refreshToken: opts.refreshToken } : {}),
      ...(opts.clientId !== undefined ? { clientId: opts.clientId } : {}),
      ...(opts.clientSecret !== undefined ? { clientSecret: opts.clientSecret } : {}),
      ...(opts.scopes !== undefined ? { scopes: opts.scopes } : {}),
      ...(opts.tokenLifetimeSeconds !== undefined ? { tokenLifetimeSeconds: opts.tokenLifetimeSeconds } : {}),
    });
    this.ctx = { channel: this.channel, channelId: this.channelId, now: () => clock.now() };
    this.log = (opts.logger ?? silentLogger()).child({ module: 'sandbox-chat' });
    this.policy = new OutboundPolicy(opts.limits);
    this.applyModes(opts.roomState ?? {});
    this.broadcaster = makeViewer(this.channel, { broadcaster: true }, this.channelId);
    this.wss = new WebSocketServer({
      server: this.http,
      maxPayload: 1024 * 1024,
      handleProtocols: (protocols) => (protocols.has('irc') ? 'irc' : false),
    });
    this.wss.on('connection', (ws) => this.accept(ws));
    this.wss.on('error', (err) => this.log.debug({ err }, 'websocket server error'));
  }

  async listen(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => {
        this.closed = true;
        this.wss.close();
        reject(new GiftdropError('SANDBOX_CHAT_LISTEN', `sandbox chat server cannot listen on ${this.host}:${port}: ${err.message}`, { cause: err }));
      };
      this.http.once('error', onError);
      this.http.listen(port, this.host, () => {
        this.http.off('error', onError);
        resolve();
      });
    });
    this.port = (this.http.address() as AddressInfo).port;
    const hostPort = `${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.port}`;
    this.url = `ws://${hostPort}`;
    this.authUrl = `http://${hostPort}/oauth2`;
    this.log.info({ url: this.url, channel: this.channel, botLogin: this.botLogin }, 'sandbox chat server listening');
  }

  // ----------------------------------------------------------------------------------------
  // Test-facing API
  // ----------------------------------------------------------------------------------------

  viewer(login: string, opts: SimViewerOptions = {}): SimViewer {
    const l = normaliseLogin(login);
    if (l === this.channel) return makeViewer(l, { ...opts, broadcaster: true }, this.channelId);
    return makeViewer(l, opts);
  }

  get token(): string {
    return this.oauth.accessToken;
  }

  get refreshToken(): string {
    return this.oauth.refreshToken;
  }

  get clientId(): string {
    return this.oauth.clientId;
  }

  get clientSecret(): string {
    return this.oauth.clientSecret;
  }

  get tokens(): ChatServer['tokens'] {
    return this.oauth;
  }

  mount(handler: (req: IncomingMessage, res: ServerResponse) => boolean): void {
    this.mounts.push(handler);
  }

  expireToken(): void {
    this.oauth.expire();
    this.record({ kind: 'system', text: 'the bot token expired' });
    this.wake();
  }

  halfOpen(): void {
    this.record({ kind: 'system', text: `${this.conns.size} connection(s) went half-open` });
    for (const conn of this.conns) conn.halfOpen = true;
    this.wake();
  }

  get roomState(): Readonly<RoomModes> {
    return { ...this.modes };
  }

  formatPrivmsg(viewer: SimViewer, text: string, extra: InjectExtra = {}): string {
    return formatViewerPrivmsg(this.ctx, viewer, text, extra);
  }

  inject(viewer: SimViewer, text: string, extra: InjectExtra = {}): void {
    const firstMessage = extra.firstMessage ?? (viewer.roles.firstMessage && !this.chatted.has(viewer.userId));
    const messageId = randomUUID();
    const line = formatViewerPrivmsg(this.ctx, viewer, text, { ...extra, firstMessage }, messageId);
    this.chatted.add(viewer.userId);
    this.record({
      kind: 'viewer',
      login: viewer.login,
      userId: viewer.userId,
      displayName: viewer.displayName,
      text,
      messageId,
      ...(extra.action ? { action: true } : {}),
      ...(extra.bits ? { bits: Math.floor(extra.bits) } : {}),
    });
    for (const conn of this.inChannel()) this.send(conn, line);
    this.wake();
  }

  injectRaw(lines: readonly string[]): void {
    if (!lines.length) return;
    const targets = [...this.inChannel()].filter((c) => !c.halfOpen);
    if (!targets.length) return;
    let start = 0;
    let size = 0;
    for (let i = 0; i < lines.length; i++) {
      size += lines[i]!.length + 2;
      if (size >= RAW_BATCH_CHARS || i === lines.length - 1) {
        const frame = `${lines.slice(start, i + 1).join('\r\n')}\r\n`;
        for (const conn of targets) conn.ws.send(frame);
        start = i + 1;
        size = 0;
      }
    }
  }

  botMessages(): string[] {
    return this.transcript.filter((e) => e.kind === 'bot').map((e) => e.text);
  }

  notices(): { msgId: string; text: string }[] {
    return this.transcript
      .filter((e) => e.kind === 'notice')
      .map((e) => ({ msgId: e.msgId ?? '', text: e.text }));
  }

  waitFor(predicate: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const finish = (err?: Error): void => {
        if (settled) return;
        settled = true;
        this.waiters.delete(check);
        clearInterval(poll);
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      const check = (): void => {
        try {
          if (predicate()) finish();
        } catch (err) {
          finish(err instanceof Error ? err : new Error(String(err)));
        }
      };
      const poll = setInterval(check, 10);
      const timer = setTimeout(() => {
        const tail = this.transcript
          .slice(-5)
          .map((e) => `${e.kind}${e.login ? ` ${e.login}` : ''}${e.msgId ? ` [${e.msgId}]` : ''}: ${e.text}`)
          .join(' | ');
        finish(new Error(`sandbox chat: waitFor(${what}) timed out after ${timeoutMs} ms; last transcript: ${tail || '(empty)'}`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  setBotMod(mod: boolean): void {
    if (this.botMod === mod) return;
    this.botMod = mod;
    this.record({ kind: 'system', login: this.botLogin, text: `${this.botLogin} is ${mod ? 'now' : 'no longer'} a moderator` });
    for (const conn of this.inChannel()) {
      if (conn.anonymous) {
        if (conn.caps.has('twitch.tv/membership')) this.send(conn, `:jtv MODE #${this.channel} ${mod ? '+o' : '-o'} ${this.botLogin}`);
        continue;
      }
      const lines = [this.userstateLine()];
      if (conn.caps.has('twitch.tv/membership')) lines.push(`:jtv MODE #${this.channel} ${mod ? '+o' : '-o'} ${this.botLogin}`);
      this.send(conn, lines);
    }
    this.wake();
  }

  setRoomState(s: RoomStateChange): void {
    const before = { ...this.modes };
    this.applyModes(s);
    const lines: string[] = [];
    const room = `@room-id=${this.channelId};`;
    const target = ` :tmi.twitch.tv ROOMSTATE #${this.channel}`;
    if (before.emoteOnly !== this.modes.emoteOnly) lines.push(`${room}emote-only=${this.modes.emoteOnly ? 1 : 0}${target}`);
    if (before.followersOnly !== this.modes.followersOnly) lines.push(`${room}followers-only=${this.modes.followersOnly}${target}`);
    if (before.r9k !== this.modes.r9k) lines.push(`${room}r9k=${this.modes.r9k ? 1 : 0}${target}`);
    if (before.slow !== this.modes.slow) lines.push(`${room}slow=${this.modes.slow}${target}`);
    if (before.subsOnly !== this.modes.subsOnly) lines.push(`${room}subs-only=${this.modes.subsOnly ? 1 : 0}${target}`);
    if (!lines.length) return;
    this.record({ kind: 'system', text: `room state: ${JSON.stringify(this.modes)}` });
    for (const conn of this.inChannel()) this.send(conn, lines);
    this.wake();
  }

  sendReconnect(): void {
    this.record({ kind: 'system', text: `RECONNECT sent to ${this.conns.size} connection(s)` });
    for (const conn of this.conns) {
      this.send(conn, ':tmi.twitch.tv RECONNECT');
      conn.ws.close(1000, 'reconnect');
    }
    this.wake();
  }

  dropConnections(): void {
    this.record({ kind: 'system', text: `dropped ${this.conns.size} connection(s)` });
    for (const conn of this.conns) conn.ws.terminate();
    this.wake();
  }

  ping(timeoutMs = 5000): Promise<number> {
    const targets = [...this.conns].filter((c) => c.login !== undefined && c.ws.readyState === WebSocket.OPEN);
    const answers = targets.map(
      (conn) =>
        new Promise<void>((resolve) => {
          conn.pongWaiters.push(resolve);
          this.send(conn, 'PING :tmi.twitch.tv');
        }),
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`sandbox chat: no PONG from every client within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    return Promise.race([Promise.all(answers), timeout])
      .then(() => targets.length)
      .finally(() => clearTimeout(timer));
  }

  connections(): number {
    return this.conns.size;
  }

  joined(): string[] {
    const out: string[] = [];
    for (const conn of this.inChannel()) if (conn.login) out.push(conn.login);
    return out;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const conn of this.conns) conn.ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    await new Promise<void>((resolve) => {
      this.http.close(() => resolve());
      this.http.closeAllConnections();
    });
    for (const check of [...this.waiters]) check();
    this.log.info('sandbox chat server closed');
  }

  // ----------------------------------------------------------------------------------------
  // Protocol
  // ----------------------------------------------------------------------------------------

  private accept(ws: WebSocket): void {
    const conn: Conn = { id: this.nextConnId++, ws, caps: new Set(), anonymous: false, joined: new Set(), pongWaiters: [] };
    this.conns.add(conn);
    this.log.debug({ conn: conn.id }, 'socket opened');
    ws.on('message', (data: RawData, isBinary: boolean) => this.onFrame(conn, data, isBinary));
    ws.on('error', (err) => this.log.debug({ conn: conn.id, err }, 'socket error'));
    ws.on('close', () => {
      this.conns.delete(conn);
      const info: ConnectionInfo = { id: conn.id, anonymous: conn.anonymous, ...(conn.login ? { login: conn.login } : {}) };
      if (conn.login) this.record({ kind: 'system', login: conn.login, text: `${conn.login} disconnected` });
      this.log.debug({ conn: conn.id }, 'socket closed');
      this.emit('disconnect', info);
      this.wake();
    });
  }

  private onFrame(conn: Conn, data: RawData, isBinary: boolean): void {
    if (isBinary) {
      this.log.debug({ conn: conn.id }, 'binary frame ignored');
      return;
    }
    const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : data.toString('utf8');
    for (const raw of text.split(/\r?\n/)) {
      if (!raw.trim()) continue;
      const msg = parseLine(raw);
      if (!msg) {
        this.log.debug({ conn: conn.id, line: raw.slice(0, 200) }, 'unparseable line ignored');
        continue;
      }
      if (conn.halfOpen) {
        // Written into a dead connection: never delivered, never answered.
        const attempted = msg.command === 'PRIVMSG' ? (msg.params[1] ?? '') : undefined;
        this.record({ kind: 'system', text: `half-open connection swallowed ${msg.command}`, ...(attempted !== undefined ? { attempted } : {}) });
        continue;
      }
      try {
        this.dispatch(conn, msg);
      } catch (err) {
        this.log.warn({ conn: conn.id, err, command: msg.command }, 'sandbox chat failed to handle a line');
      }
      if (conn.ws.readyState !== WebSocket.OPEN) break;
    }
    this.wake();
  }

  private dispatch(conn: Conn, msg: IrcLine): void {
    switch (msg.command) {
      case 'CAP':
        return this.onCap(conn, msg);
      case 'PASS':
        conn.pass = msg.params[0] ?? '';
        return;
      case 'NICK':
        return this.onNick(conn, msg.params[0] ?? '');
      case 'PING':
        return this.send(conn, `PONG :${msg.params[0] ?? 'tmi.twitch.tv'}`);
      case 'PONG': {
        const waiters = conn.pongWaiters.splice(0);
        for (const w of waiters) w();
        return;
      }
      case 'QUIT':
        conn.ws.close(1000, 'quit');
        return;
    }
    if (!conn.login) {
      this.log.debug({ conn: conn.id, command: msg.command }, 'command before login ignored');
      return;
    }
    switch (msg.command) {
      case 'JOIN':
        return this.onJoin(conn, msg.params[0] ?? '');
      case 'PART':
        return this.onPart(conn, msg.params[0] ?? '');
      case 'PRIVMSG':
        return this.onPrivmsg(conn, msg.params[0] ?? '', msg.params[1] ?? '', msg.tags);
      default:
        this.send(conn, `:tmi.twitch.tv 421 ${conn.login} ${msg.command} :Unknown command`);
    }
  }

  private onCap(conn: Conn, msg: IrcLine): void {
    const sub = (msg.params[0] ?? '').toUpperCase();
    if (sub === 'LS') return this.send(conn, `:tmi.twitch.tv CAP * LS :${KNOWN_CAPS.join(' ')}`);
    if (sub !== 'REQ') return;
    const wanted = (msg.params[1] ?? '').split(' ').filter(Boolean);
    if (wanted.every((c) => KNOWN_CAPS.includes(c))) {
      for (const c of wanted) conn.caps.add(c);
      this.send(conn, `:tmi.twitch.tv CAP * ACK :${wanted.join(' ')}`);
    } else {
      this.send(conn, `:tmi.twitch.tv CAP * NAK :${wanted.join(' ')}`);
    }
  }

  private onNick(conn: Conn, rawNick: string): void {
    if (conn.login) return;
    const nick = rawNick.toLowerCase();
    if (/^justinfan\d+$/.test(nick)) {
      conn.anonymous = true;
      conn.login = nick;
    } else if (conn.pass !== undefined && this.tokenMatches(conn.pass)) {
      conn.login = this.botLogin;
      if (nick !== this.botLogin) this.log.debug({ conn: conn.id, nick }, 'NICK differs from the token owner; using the token owner');
    } else {
      this.log.info({ conn: conn.id }, 'login rejected: wrong or missing token');
      this.record({ kind: 'system', text: `login rejected for ${nick || '(no nick)'}: wrong or missing token` });
      this.send(conn, ':tmi.twitch.tv NOTICE * :Login authentication failed');
      conn.ws.close(1000, 'authentication failed');
      return;
    }
    const l = conn.login;
    const lines = [
      `:tmi.twitch.tv 001 ${l} :Welcome, GLHF!`,
      `:tmi.twitch.tv 002 ${l} :Your host is tmi.twitch.tv`,
      `:tmi.twitch.tv 003 ${l} :This server is rather new`,
      `:tmi.twitch.tv 004 ${l} :-`,
      `:tmi.twitch.tv 375 ${l} :-`,
      `:tmi.twitch.tv 372 ${l} :You are in a maze of twisty passages, all alike.`,
      `:tmi.twitch.tv 376 ${l} :>`,
    ];
    if (!conn.anonymous && conn.caps.has('twitch.tv/commands')) {
      lines.push(
        `${formatTags({
          'badge-info': '',
          badges: '',
          color: '',
          'display-name': this.botLogin,
          'emote-sets': '0',
          'user-id': this.botUserId,
          'user-type': '',
        })}:tmi.twitch.tv GLOBALUSERSTATE`,
      );
    }
    this.send(conn, lines);
    const info: ConnectionInfo = { id: conn.id, login: l, anonymous: conn.anonymous };
    this.record({ kind: 'system', login: l, text: `${l} connected${conn.anonymous ? ' (anonymous)' : ''}` });
    this.emit('connection', info);
  }

  private tokenMatches(pass: string): boolean {
    return this.oauth.accepts(bareToken(pass));
  }

  private onJoin(conn: Conn, target: string): void {
    const l = conn.login!;
    for (const raw of target.split(',')) {
      const name = raw.trim().replace(/^#/, '').toLowerCase();
      if (!name) continue;
      if (name !== this.channel) {
        this.send(conn, `@msg-id=msg_room_not_found :tmi.twitch.tv NOTICE #${name} :${noticeText('msg_room_not_found', name)}`);
        continue;
      }
      conn.joined.add(name);
      const lines = [`:${l}!${l}@${l}.tmi.twitch.tv JOIN #${name}`];
      if (conn.caps.has('twitch.tv/membership')) {
        lines.push(`:${l}.tmi.twitch.tv 353 ${l} = #${name} :${l}`, `:${l}.tmi.twitch.tv 366 ${l} #${name} :End of /NAMES list`);
      }
      if (!conn.anonymous) lines.push(this.userstateLine());
      lines.push(
        `${formatTags({
          'emote-only': this.modes.emoteOnly ? 1 : 0,
          'followers-only': this.modes.followersOnly,
          r9k: this.modes.r9k ? 1 : 0,
          'room-id': this.channelId,
          slow: this.modes.slow,
          'subs-only': this.modes.subsOnly ? 1 : 0,
        })}:tmi.twitch.tv ROOMSTATE #${name}`,
      );
      this.send(conn, lines);
      this.record({ kind: 'system', login: l, text: `${l} joined #${name}` });
      this.emit('join', { id: conn.id, login: l, anonymous: conn.anonymous, channel: name });
    }
  }

  private onPart(conn: Conn, target: string): void {
    const l = conn.login!;
    for (const raw of target.split(',')) {
      const name = raw.trim().replace(/^#/, '').toLowerCase();
      if (!conn.joined.delete(name)) continue;
      this.send(conn, `:${l}!${l}@${l}.tmi.twitch.tv PART #${name}`);
      this.record({ kind: 'system', login: l, text: `${l} left #${name}` });
    }
  }

  private onPrivmsg(conn: Conn, target: string, body: string, tags: Record<string, string>): void {
    if (conn.anonymous) return;
    const name = target.replace(/^#/, '').toLowerCase();
    if (name !== this.channel) {
      this.send(conn, `@msg-id=msg_room_not_found :tmi.twitch.tv NOTICE #${name} :${noticeText('msg_room_not_found', name)}`);
      return;
    }
    const l = conn.login!;
    const actionMatch = /^\u0001ACTION (.*)\u0001$/s.exec(body);
    const meMatch = actionMatch ? null : /^\/me (.*)$/s.exec(body);
    const action = Boolean(actionMatch || meMatch);
    const text = actionMatch?.[1] ?? meMatch?.[1] ?? body;
    const privileged = l === this.channel || this.botMod;
    const verdict =
      !action && /^[/.][A-Za-z]/.test(body)
        ? { ok: false as const, msgId: 'unrecognized_cmd', text: noticeText('unrecognized_cmd', name), silent: false }
        : this.policy.judge(this.clock.now(), name, { login: l, privileged, subscriber: this.botSubscriber, following: this.botFollowing }, text, this.modes);
    if (!verdict.ok) {
      this.record({ kind: 'notice', login: l, userId: this.botUserId, text: verdict.text, msgId: verdict.msgId, attempted: text });
      if (!verdict.silent) this.send(conn, `@msg-id=${verdict.msgId} :tmi.twitch.tv NOTICE #${name} :${verdict.text}`);
      return;
    }
    const messageId = randomUUID();
    const entry = this.record({
      kind: 'bot',
      login: l,
      userId: this.botUserId,
      displayName: this.botLogin,
      text,
      messageId,
      ...(action ? { action: true } : {}),
      ...(tags['reply-parent-msg-id'] ? { replyTo: tags['reply-parent-msg-id'] } : {}),
    });
    this.send(conn, this.userstateLine(messageId));
    const out = this.botPrivmsgLine(name, action ? `\u0001ACTION ${text}\u0001` : text, messageId);
    for (const other of this.inChannel()) if (other !== conn) this.send(other, out);
    this.emit('bot-message', entry);
  }

  // ----------------------------------------------------------------------------------------
  // Helpers
  // ----------------------------------------------------------------------------------------

  private botBadges(): string {
    const badges: string[] = [];
    if (this.botLogin === this.channel) badges.push('broadcaster/1');
    if (this.botMod) badges.push('moderator/1');
    return badges.join(',');
  }

  private userstateLine(id?: string): string {
    const tags: Record<string, string | number> = {
      'badge-info': '',
      badges: this.botBadges(),
      color: '',
      'display-name': this.botLogin,
      'emote-sets': '0',
    };
    if (id) tags.id = id;
    tags.mod = this.botMod ? 1 : 0;
    tags.subscriber = this.botSubscriber ? 1 : 0;
    tags['user-type'] = this.botMod ? 'mod' : '';
    return `${formatTags(tags)}:tmi.twitch.tv USERSTATE #${this.channel}`;
  }

  private botPrivmsgLine(channel: string, body: string, id: string): string {
    const l = this.botLogin;
    const tags = formatTags({
      'badge-info': '',
      badges: this.botBadges(),
      color: '',
      'display-name': l,
      emotes: '',
      'first-msg': 0,
      flags: '',
      id,
      mod: this.botMod ? 1 : 0,
      'returning-chatter': 0,
      'room-id': this.channelId,
      subscriber: this.botSubscriber ? 1 : 0,
      'tmi-sent-ts': this.clock.now(),
      turbo: 0,
      'user-id': this.botUserId,
      'user-type': this.botMod ? 'mod' : '',
    });
    return `${tags}:${l}!${l}@${l}.tmi.twitch.tv PRIVMSG #${channel} :${body}`;
  }

  private applyModes(s: RoomStateChange): void {
    const int = (v: number, min: number, what: string): number => {
      if (!Number.isInteger(v) || v < min) {
        throw new GiftdropError('SANDBOX_CHAT_BAD_INPUT', `${what} must be an integer >= ${min} (got ${v})`);
      }
      return v;
    };
    const next = { ...this.modes };
    if (s.slow !== undefined) next.slow = int(s.slow, 0, 'slow');
    if (s.followersOnly !== undefined) next.followersOnly = int(s.followersOnly, -1, 'followersOnly');
    if (s.subsOnly !== undefined) next.subsOnly = Boolean(s.subsOnly);
    if (s.emoteOnly !== undefined) next.emoteOnly = Boolean(s.emoteOnly);
    if (s.r9k !== undefined) next.r9k = Boolean(s.r9k);
    Object.assign(this.modes, next);
  }


  private *inChannel(): Generator<Conn> {
    for (const conn of this.conns) {
      if (conn.joined.has(this.channel) && conn.ws.readyState === WebSocket.OPEN) yield conn;
    }
  }

  private send(conn: Conn, lines: string | string[]): void {
    if (conn.ws.readyState !== WebSocket.OPEN || conn.halfOpen) return;
    const list = typeof lines === 'string' ? [lines] : lines;
    const out = conn.caps.has(TAGS_CAP) ? list : list.map(stripTags);
    conn.ws.send(`${out.join('\r\n')}\r\n`);
  }

  private record(e: Omit<TranscriptEntry, 'at'>): TranscriptEntry {
    const entry: TranscriptEntry = { at: this.clock.now(), ...e };
    this.transcript.push(entry);
    this.emit('transcript', entry);
    if (entry.kind === 'notice') this.emit('notice', entry);
    return entry;
  }

  private wake(): void {
    for (const check of [...this.waiters]) check();
  }

  private plainHttp(req: IncomingMessage, res: ServerResponse): void {
    const handled = this.oauth.handle(req, res, (e) => {
      this.record({ kind: 'system', text: `oauth2 ${e.endpoint}: ${e.status}${e.message ? ` ${e.message}` : ''}` });
      this.emit('oauth', e);
      this.wake();
    });
    if (handled) return;
    for (const mounted of this.mounts) if (mounted(req, res)) return;
    res.writeHead(426, { 'content-type': 'text/plain; charset=utf-8', upgrade: 'websocket' });
    res.end('giftdrop sandbox chat: connect with a WebSocket (subprotocol irc)\n');
  }
}
