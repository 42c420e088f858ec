/**
 * TwitchChat: the bot's connection to one Twitch channel, wrapping tmi.js 1.8.5.
 *
 * Contract:
 * - emits 'message' (ChatMessage) for every chat, /me and cheer line of the channel that is not
 *   the bot's own echo, 'state' ('connecting' | 'connected' | 'disconnected') on every change,
 *   and 'fatal' (TwitchAuthError) when Twitch refuses the token after having accepted it;
 * - `connect()` resolves once the channel is joined (ROOMSTATE seen) and rejects with
 *   TwitchAuthError (bad TWITCH_TOKEN / TWITCH_USERNAME) or TwitchConnectError, with no retry
 *   loop; after a successful connect, tmi.js reconnects by itself (server RECONNECT, dropped
 *   socket) and re-joins the channel;
 * - everything the bot says goes through its Outbox (limits, splitting, duplicates, priorities),
 *   paused while not joined and resumed on re-join; lines are written with tmi.js `raw()`
 *   (a PRIVMSG) rather than `say()`, because say() splits 500-character lines itself (a second,
 *   unpaced line) and treats a leading `.`, `/` or `\` as a command;
 * - moderator status comes only from USERSTATE (mod=1 or the broadcaster/moderator badge) and is
 *   forgotten on disconnect; room state (slow, followers-only, subs-only) from ROOMSTATE.
 * tmi.js gets `skipUpdatingEmotesets` and a logger adapter (its default logger is module state).
 * The receive path does as little as possible per line: one channel compare, the tag mapping,
 * one emit. This module knows nothing about commands or giveaways.
 */
import { EventEmitter } from 'node:events';
import tmi from 'tmi.js';
import type { ChatPort, SayOptions } from '../giveaway/ports.js';
import { systemClock, type Clock, type TimerHandle } from '../shared/clock.js';
import { GiftdropError } from '../shared/errors.js';
import type { Logger } from '../logging/index.js';
import { NotSentError, Outbox, type ChatTransport, type OutboxLimits, type OutboxStats } from './outbox.js';
import { parseChatMessage, type TmiTags } from './parse.js';

/** Twitch refused the login: the token (or the username it belongs to) is wrong. */
export class TwitchAuthError extends GiftdropError {
  constructor(reason: string) {
    super(
      'TWITCH_AUTH',
      `Twitch refused the chat login (${reason}). Check TWITCH_TOKEN: it must be a user access token ` +
        'with chat:read and chat:edit for the account named in TWITCH_USERNAME.',
    );
  }
}

/** The chat server could not be reached or the channel could not be joined. */
export class TwitchConnectError extends GiftdropError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('TWITCH_CONNECT', message, options);
  }
}

export type ChatConnectionState = 'connecting' | 'connected' | 'disconnected';

export interface RoomState {
  /** Slow mode in seconds, 0 when off. */
  slow: number;
  /** Followers-only minimum follow age in minutes; -1 when off. */
  followersOnly: number;
  subsOnly: boolean;
  emoteOnly: boolean;
}

export interface TwitchChatOptions {
  /** TWITCH_IRC_URL: `wss://irc-ws.chat.twitch.tv:443` or `ws://127.0.0.1:PORT`. */
  url: string;
  /** Channel login (with or without `#`). */
  channel: string;
  /** Bot login. */
  username: string;
  /** TWITCH_TOKEN, with or without `oauth:`. Never logged. */
  token: string;
  logger: Logger;
  /** Used for pacing and timeouts. Default: the system clock. */
  clock?: Clock;
  /** Outbox limits (tests scale the windows down). */
  outbox?: Partial<OutboxLimits>;
  /** tmi.js reconnect delay: first `intervalMs` (default 1000), growing 1.5x up to `maxIntervalMs` (30 000). */
  reconnect?: { intervalMs?: number; maxIntervalMs?: number };
  /** Longest wait for the welcome and the channel join in `connect()` (default 15 000 ms). */
  connectTimeoutMs?: number;
}

/** The parts of tmi.js's client this adapter uses beyond @types/tmi.js. */
interface TmiInternals {
  reconnect: boolean;
  handleMessage(message: { command?: string; params?: string[]; tags?: Record<string, unknown> } | null): void;
}

const AUTH_FAILURE = /Login authentication failed|Login unsuccessful|Improperly formatted auth|Error logging in|Invalid NICK/i;

/**
 * Events: 'message' (msg: ChatMessage), 'state' (state: ChatConnectionState),
 * 'fatal' (err: TwitchAuthError), 'notice' (msgId: string, text: string), 'sent' (text: string: a
 * line of the bot's that the server accepted).
 */
export class TwitchChat extends EventEmitter implements ChatPort {
  readonly channelLogin: string;
  readonly botLogin: string;
  private readonly channelKey: string;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly client: tmi.Client;
  private readonly internals: TmiInternals;
  private readonly outbox: Outbox;
  private readonly connectTimeoutMs: number;
  private current: ChatConnectionState = 'disconnected';
  private closing = false;
  private everConnected = false;
  private mod = false;
  private roomId: string | undefined;
  private room: RoomState = { slow: 0, followersOnly: -1, subsOnly: false, emoteOnly: false };
  private joinWaiter: (() => void) | undefined;
  private acks = 0;

  constructor(options: TwitchChatOptions) {
    super();
    this.channelLogin = options.channel.replace(/^#/, '').toLowerCase();
    this.channelKey = `#${this.channelLogin}`;
    this.botLogin = options.username.toLowerCase();
    this.log = options.logger.child({ module: 'twitch' });
    this.clock = options.clock ?? systemClock;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 15_000;
    const endpoint = parseUrl(options.url);
    const token = options.token.replace(/^oauth:/i, '');

    this.client = new tmi.Client({
      options: { skipUpdatingEmotesets: true, messagesLogLevel: 'trace', joinInterval: 300 },
      connection: {
        server: endpoint.host,
        port: endpoint.port,
        secure: endpoint.secure,
        reconnect: true,
        reconnectInterval: options.reconnect?.intervalMs ?? 1000,
        maxReconnectInterval: options.reconnect?.maxIntervalMs ?? 30_000,
        maxReconnectAttempts: Infinity,
      },
      identity: { username: this.botLogin, password: () => `oauth:${token}` },
      channels: [this.channelKey],
      logger: tmiLogger(this.log),
    });
    this.internals = this.client as unknown as TmiInternals;

    const transport: ChatTransport = {
      send: (channel, text) => this.write(channel, text),
    };
    this.outbox = new Outbox({
      channel: this.channelLogin,
      transport,
      clock: this.clock,
      logger: this.log.child({ module: 'twitch.outbox' }),
      limits: options.outbox,
      paused: true,
    });
    this.outbox.on('sent', (text: string) => this.emit('sent', text));
    this.wire();
  }

  /** Connection state. */
  get state(): ChatConnectionState {
    return this.current;
  }

  /** The channel's user id (ROOMSTATE room-id) once joined. */
  channelId(): string | undefined {
    return this.roomId;
  }

  /** True once USERSTATE confirmed the bot is moderator or broadcaster in the channel. */
  isMod(): boolean {
    return this.mod;
  }

  roomState(): RoomState {
    return { ...this.room };
  }

  /** Queues a line (split, paced, deduplicated, prioritised by the outbox). */
  say(text: string, options?: SayOptions): void {
    this.outbox.say(text, options);
  }

  /** Queues a list packed into as few lines as possible, each starting with `prefix`. */
  sayList(prefix: string, items: readonly string[], options?: SayOptions): void {
    this.outbox.sayList(prefix, items, options);
  }

  /** Resolves when the outbox has nothing queued or being written. */
  flush(): Promise<void> {
    return this.outbox.idle();
  }

  outboxStats(): OutboxStats & { acknowledged: number } {
    return { ...this.outbox.stats(), acknowledged: this.acks };
  }

  /** Connects, logs in and joins the channel. No retry on failure. */
  async connect(): Promise<void> {
    if (this.current !== 'disconnected') throw new TwitchConnectError(`already ${this.current}`);
    this.closing = false;
    this.internals.reconnect = false;
    this.setState('connecting');
    let timer: TimerHandle | undefined;
    const joined = new Promise<void>((resolve) => {
      this.joinWaiter = resolve;
    });
    const timeout = new Promise<never>((_, reject) => {
      timer = this.clock.setTimeout(
        () => reject(new TwitchConnectError(`no welcome or join from the chat server within ${this.connectTimeoutMs} ms`)),
        this.connectTimeoutMs,
      );
    });
    try {
      await Promise.race([this.client.connect(), timeout]);
      await Promise.race([joined, timeout]);
    } catch (reason) {
      this.joinWaiter = undefined;
      await this.client.disconnect().catch(() => undefined);
      this.setState('disconnected');
      if (reason instanceof GiftdropError) throw reason;
      const text = typeof reason === 'string' ? reason : reason instanceof Error ? reason.message : String(reason);
      if (AUTH_FAILURE.test(text)) throw new TwitchAuthError(text);
      throw new TwitchConnectError(`could not connect to the Twitch chat server: ${text}`, { cause: reason });
    } finally {
      timer?.cancel();
    }
    this.everConnected = true;
    this.internals.reconnect = true;
  }

  /** Leaves for good (no reconnect). Queued lines stay queued. */
  async disconnect(): Promise<void> {
    this.closing = true;
    this.internals.reconnect = false;
    this.outbox.pause();
    await this.client.disconnect().catch(() => undefined);
    this.setState('disconnected');
  }

  private async write(channel: string, text: string): Promise<void> {
    if (this.current !== 'connected') throw new NotSentError('not connected');
    try {
      await this.client.raw(`PRIVMSG #${channel} :${text}`);
    } catch (err) {
      // tmi.js rejects before writing anything when the socket is not open.
      if (err === 'Not connected to server.') throw new NotSentError('not connected', { cause: err });
      throw err instanceof Error ? err : new Error(String(err));
    }
  }

  private wire(): void {
    const client = this.client;
    client.on('message', (channel, tags, text, self) => {
      if (self || channel !== this.channelKey) return;
      this.receive(channel, tags as TmiTags, text);
    });
    client.on('cheer', (channel, tags, text) => {
      if (channel !== this.channelKey) return;
      this.receive(channel, tags as TmiTags, text);
    });
    client.on('roomstate', (channel, tags) => {
      if (channel !== this.channelKey) return;
      this.onRoomState(tags as TmiTags);
    });
    client.on('notice', (channel, rawId: unknown, rawText: unknown) => {
      if (channel !== this.channelKey) return;
      // tmi.js passes null for a NOTICE without a msg-id tag.
      const msgId = typeof rawId === 'string' ? rawId : '';
      const text = typeof rawText === 'string' ? rawText : '';
      this.log.warn({ msgId }, 'chat notice');
      this.emit('notice', msgId, text);
      this.outbox.handleNotice(msgId, text);
    });
    client.on('automod', (channel, msgId, text) => {
      if (channel !== this.channelKey) return;
      this.log.warn({ msgId }, 'chat line held by AutoMod');
      this.outbox.handleNotice(msgId, text);
    });
    client.on('connecting', () => {
      if (this.closing) {
        void client.disconnect().catch(() => undefined);
        return;
      }
      this.setState('connecting');
    });
    client.on('reconnect', () => {
      if (!this.closing) this.setState('connecting');
    });
    client.on('disconnected', (reason) => this.onDisconnected(String(reason)));

    const original = this.internals.handleMessage.bind(client);
    this.internals.handleMessage = (message) => {
      original(message);
      if (message !== null && message.command === 'USERSTATE') this.onUserState(message.params?.[0], message.tags);
    };
  }

  private receive(channel: string, tags: TmiTags, text: string): void {
    const parsed = parseChatMessage(channel, tags, text, false, this.clock.now());
    if (parsed.ok) {
      this.emit('message', parsed.message);
    } else {
      this.log.warn({ reason: parsed.reason, login: typeof tags.username === 'string' ? tags.username : undefined }, 'chat line rejected');
    }
  }

  private onUserState(channel: string | undefined, tags: Record<string, unknown> | undefined): void {
    if (channel !== this.channelKey || !tags) return;
    this.acks++;
    const badges = tags.badges as Record<string, string> | null | undefined;
    const mod =
      tags.mod === true || (badges != null && (badges.broadcaster !== undefined || badges.moderator !== undefined));
    if (mod !== this.mod) {
      this.mod = mod;
      this.log.info({ mod }, mod ? 'bot is moderator in the channel' : 'bot is not moderator in the channel');
    }
    this.outbox.setPrivileged(mod);
  }

  private onRoomState(tags: TmiTags): void {
    const roomId = tags['room-id'];
    if (typeof roomId === 'string' && roomId !== '') this.roomId = roomId;
    if ('slow' in tags) this.room.slow = seconds(tags.slow);
    if ('followers-only' in tags) {
      const f = tags['followers-only'];
      this.room.followersOnly = f === false ? 0 : f === true ? 1 : Number(f) >= 0 ? Number(f) : -1;
    }
    if ('subs-only' in tags) this.room.subsOnly = tags['subs-only'] === true;
    if ('emote-only' in tags) this.room.emoteOnly = tags['emote-only'] === true;
    this.outbox.setSlowMode(this.room.slow);
    if (this.current !== 'connected' && !this.closing) {
      this.setState('connected');
      this.outbox.resume();
      this.log.info({ channel: this.channelLogin, channelId: this.roomId }, 'joined channel');
      const waiter = this.joinWaiter;
      this.joinWaiter = undefined;
      waiter?.();
    }
  }

  private onDisconnected(reason: string): void {
    this.outbox.pause();
    if (this.mod) this.outbox.setPrivileged(false);
    this.mod = false;
    if (this.current === 'disconnected') return;
    if (AUTH_FAILURE.test(reason) && this.everConnected) {
      const err = new TwitchAuthError(reason);
      this.log.error({ code: err.code }, err.message);
      this.setState('disconnected');
      this.emit('fatal', err);
      return;
    }
    if (this.closing || !this.everConnected) {
      this.setState('disconnected');
      return;
    }
    this.log.warn({ reason }, 'chat connection lost; tmi.js reconnects');
    this.setState('disconnected');
  }

  private setState(state: ChatConnectionState): void {
    if (state === this.current) return;
    this.current = state;
    this.emit('state', state);
  }
}

function seconds(v: unknown): number {
  if (v === true) return 1;
  if (v === false || v === null || v === undefined) return 0;
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

function parseUrl(url: string): { host: string; port: number; secure: boolean } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new TwitchConnectError(`TWITCH_IRC_URL is not a URL: ${JSON.stringify(url)}`);
  }
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:') {
    throw new TwitchConnectError('TWITCH_IRC_URL must start with ws:// or wss://');
  }
  const secure = u.protocol === 'wss:';
  const port = u.port ? Number(u.port) : secure ? 443 : 80;
  if (secure && port !== 443) throw new TwitchConnectError('TWITCH_IRC_URL: tmi.js only supports wss:// on port 443');
  if (!secure && port === 443) throw new TwitchConnectError('TWITCH_IRC_URL: port 443 needs wss://');
  return { host: u.hostname, port, secure };
}

function tmiLogger(log: Logger): { trace(m: string): void; debug(m: string): void; info(m: string): void; warn(m: string): void; error(m: string): void; fatal(m: string): void; setLevel(): void } {
  const text = (m: unknown) => (typeof m === 'string' ? m : m instanceof Error ? m.message : String(m));
  return {
    trace: (m) => log.trace(text(m)),
    debug: (m) => log.trace(text(m)),
    info: (m) => log.debug(text(m)),
    warn: (m) => log.warn(text(m)),
    error: (m) => log.warn(text(m)),
    fatal: (m) => log.error(text(m)),
    setLevel: () => undefined,
  };
}
