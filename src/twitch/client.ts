/**
 * TwitchChat: the bot's connection to one Twitch channel, wrapping tmi.js 1.8.5 through its
 * documented interface only (its options, `connect`/`disconnect`/`raw`, its events). One tmi.js
 * client per TwitchChat, on the bot's thread; no socket until `connect()`.
 *
 * Contract:
 * - emits 'message' (ChatMessage) for every chat, /me and cheer line of the channel that is not
 *   the bot's own echo, 'state' on every change, 'health' when `health()` changes, and 'fatal'
 *   (TwitchAuthError) when Twitch refuses the token after having accepted it and no refresh helps;
 * - `connect()` resolves once the channel is joined and rejects with TwitchAuthError or
 *   TwitchConnectError, with no retry loop; after it, a lost connection is reconnected until
 *   `disconnect()` (onDisconnected), a refused token refreshed first when `tokens` can;
 * - everything the bot says goes through its Outbox; a line counts as sent only when Twitch
 *   answers it (USERSTATE or NOTICE), unanswered lines are re-sent once after a reconnect, and a
 *   line unanswered for `confirmTimeoutMs` has the socket probed (ConfirmWatch) while `health()`
 *   says 'degraded';
 * - moderator status (USERSTATE, MODE) and room state (ROOMSTATE) are kept for the channel.
 * Does not: know commands or giveaways. chat-routing.ts routes tmi.js's channel events and reads
 * the tags; client-types.ts holds the public types (re-exported here).
 */
import { EventEmitter } from 'node:events';
import tmi from 'tmi.js';
import type { SayOptions } from '../giveaway/ports.js';
import type { ChatConnection } from './chat-connection.js';
import { systemClock, type Clock, type TimerHandle } from '../shared/clock.js';
import { GiftdropError } from '../shared/errors.js';
import type { Logger } from '../logging/index.js';
import { NotSentError, Outbox, type ChatTransport, type OutboxStats } from './outbox.js';
import { ConfirmWatch } from './confirm-watch.js';
import { AuthRecovery } from './auth-recovery.js';
import { tmiOptions, TwitchAuthError, TwitchConnectError } from './tmi-glue.js';
import type { TmiTags } from './parse.js';
import { applyRoomState, routeChannelEvents, userStateIsMod } from './chat-routing.js';
import type { ChatConnectionState, ChatHealth, ChatTokenSource, RoomState, TwitchChatOptions } from './client-types.js';

export { TwitchAuthError, TwitchConnectError } from './tmi-glue.js';
export type { ChatConnectionState, ChatHealth, ChatTokenSource, RoomState, TwitchChatOptions } from './client-types.js';

const AUTH_FAILURE =
  /Login authentication failed|Login unsuccessful|Improperly formatted auth|Error logging in|Invalid NICK/i;

/** What tmi.js hands a `raw_message` listener as its second argument (the parsed line). */
interface RawLine {
  command?: string;
  params?: string[];
  tags?: Record<string, unknown>;
}

/** The longest wait for tmi.js's disconnect to report the socket closed before the client goes on. */
const CLOSE_WAIT_MS = 1000;

/**
 * Events: 'message' (msg: ChatMessage), 'state' (state: ChatConnectionState), 'health'
 * (health: ChatHealth), 'fatal' (err: TwitchAuthError), 'notice' (msgId: string, text: string),
 * 'sent' (text: string: a line of the bot's that the server accepted).
 */
export class TwitchChat extends EventEmitter implements ChatConnection {
  readonly transport = 'irc' as const;
  readonly channelLogin: string;
  readonly botLogin: string;
  private readonly channelKey: string;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly client: tmi.Client;
  private readonly outbox: Outbox;
  private readonly connectTimeoutMs: number;
  private readonly confirmTimeoutMs: number;
  private current: ChatConnectionState = 'disconnected';
  private closing = false;
  private everConnected = false;
  private mod = false;
  private roomId: string | undefined;
  private room: RoomState = { slow: 0, followersOnly: -1, subsOnly: false, emoteOnly: false };
  private joinWaiter: (() => void) | undefined;
  private acks = 0;
  private readonly tokens: ChatTokenSource | undefined;
  private readonly watch: ConfirmWatch;
  private readonly recovery: AuthRecovery;
  /** A socket is open or opening and its channel not yet joined (the join's USERSTATE is read). */
  private joining = false;
  /** A line is being written (its answer may come before the outbox calls it written). */
  private writing = false;
  private rawAttached = false;
  /** connect() succeeded and disconnect() was not called since: a lost connection is reconnected. */
  private keepConnected = false;
  /** The client's pending reconnect (onDisconnected), cancelled when a socket opens. */
  private reconnectTimer: TimerHandle | undefined;
  private readonly reconnectBaseMs: number;
  private readonly reconnectMaxMs: number;
  /** The next reconnect's wait: `reconnectBaseMs`, growing 1.5x per attempt, reset on join. */
  private reconnectDelayMs: number;
  private lastHealth: ChatHealth = { chat: 'disconnected' };
  private healthTimer: TimerHandle | undefined;
  private readonly onRaw = (_copy: unknown, line: RawLine): void => this.readRaw(line);

  constructor(options: TwitchChatOptions) {
    super();
    this.channelLogin = options.channel.replace(/^#/, '').toLowerCase();
    this.channelKey = `#${this.channelLogin}`;
    this.botLogin = options.username.toLowerCase();
    this.log = options.logger.child({ module: 'twitch' });
    this.clock = options.clock ?? systemClock;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 15_000;
    this.confirmTimeoutMs = options.confirmTimeoutMs ?? 15_000;
    this.tokens = options.tokens;
    this.reconnectBaseMs = options.reconnect?.intervalMs ?? 1000;
    this.reconnectMaxMs = Math.max(this.reconnectBaseMs, options.reconnect?.maxIntervalMs ?? 30_000);
    this.reconnectDelayMs = this.reconnectBaseMs;
    this.recovery = new AuthRecovery({
      tokens: this.tokens,
      clock: this.clock,
      log: this.log,
      initialRetryMs: this.reconnectBaseMs,
      relogin: () => this.reconnectNow(),
      fatal: (err) => this.emit('fatal', err),
    });

    const token = options.token.replace(/^oauth:/i, '');
    const tokens = this.tokens;
    this.client = new tmi.Client(
      tmiOptions(options, this.botLogin, this.channelKey, this.log, () =>
        tokens ? tokens.current().replace(/^oauth:/i, '') : token,
      ),
    );
    this.listen();

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
      confirm: true,
    });
    this.watch = new ConfirmWatch({
      outbox: this.outbox,
      clock: this.clock,
      logger: this.log,
      timeoutMs: this.confirmTimeoutMs,
      pongTimeoutMs: options.pingTimeoutMs ?? 5000,
      // A raw PING with the probe's token through tmi.js's public raw(), never its ping(): that
      // one gives up after ~600 ms and replaces tmi.js's own keep-alive timer. Its PONG is read
      // from raw_message (attached while the probe waits: a line awaits its answer).
      sendPing: (token) => this.client.raw(`PING :${token}`),
      onDead: () => this.dropHalfOpen(),
    });
    this.outbox.on('written', () => {
      this.watch.arm();
      this.answered();
    });
    this.outbox.on('sent', (text: string) => {
      this.watch.arm();
      this.answered();
      this.emit('sent', text);
    });
    this.outbox.on('dropped', () => this.answered());
  }

  /** Connection state. */
  get state(): ChatConnectionState {
    return this.current;
  }

  /**
   * Whether chat works for the bot: 'degraded' while connected but a line of the bot's has waited
   * longer than `confirmTimeoutMs` for Twitch's answer (with the reason), else the state.
   */
  health(): ChatHealth {
    if (this.current !== 'connected') return { chat: this.current };
    const { oldestAt } = this.outbox.unconfirmed();
    if (oldestAt !== undefined) {
      const waitedMs = this.clock.now() - oldestAt;
      if (waitedMs >= this.confirmTimeoutMs) {
        return {
          chat: 'degraded',
          reason: `chat lines of the bot not confirmed by Twitch within ${Math.round(this.confirmTimeoutMs / 1000)} s (the connection is being checked)`,
        };
      }
    }
    return { chat: 'connected' };
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

  /** Outbox counters; `sent` counts lines Twitch confirmed, `acknowledged` every USERSTATE seen. */
  outboxStats(): OutboxStats & { acknowledged: number } {
    return { ...this.outbox.stats(), acknowledged: this.acks };
  }

  /** True while tmi.js's `raw_message` has the client's listener (refreshRaw). */
  readingAnswers(): boolean {
    return this.rawAttached;
  }

  /** Connects, logs in and joins the channel. No retry on failure. */
  async connect(): Promise<void> {
    if (this.current !== 'disconnected') throw new TwitchConnectError(`already ${this.current}`);
    this.closing = false;
    this.setState('connecting');
    this.keepConnected = false;
    this.joining = true;
    this.refreshRaw();
    let timer: TimerHandle | undefined;
    const joined = new Promise<void>((resolve) => {
      this.joinWaiter = resolve;
    });
    const timeout = new Promise<never>((_, reject) => {
      timer = this.clock.setTimeout(
        () =>
          reject(new TwitchConnectError(`no welcome or join from the chat server within ${this.connectTimeoutMs} ms`)),
        this.connectTimeoutMs,
      );
    });
    try {
      await Promise.race([this.client.connect(), timeout]);
      await Promise.race([joined, timeout]);
    } catch (reason) {
      this.joinWaiter = undefined;
      await this.closeSocket();
      this.joining = false;
      this.refreshRaw();
      this.setState('disconnected');
      if (reason instanceof GiftdropError) throw reason;
      const text = typeof reason === 'string' ? reason : reason instanceof Error ? reason.message : String(reason);
      if (AUTH_FAILURE.test(text)) throw new TwitchAuthError(text);
      throw new TwitchConnectError(`could not connect to the Twitch chat server: ${text}`, { cause: reason });
    } finally {
      timer?.cancel();
    }
    this.everConnected = true;
    this.keepConnected = true;
  }

  /** Leaves for good (no reconnect). Queued lines stay queued. */
  async disconnect(): Promise<void> {
    this.closing = true;
    this.keepConnected = false;
    this.cancelReconnect();
    this.recovery.cancel();
    this.watch.pause();
    this.outbox.pause();
    this.joining = false;
    await this.closeSocket();
    this.refreshRaw();
    this.setState('disconnected');
  }

  /**
   * tmi.js's disconnect, waited for at most CLOSE_WAIT_MS (it never settles for a socket already
   * closing); not called when tmi.js's socket is closed or was never opened (tmi.js would log
   * "Cannot disconnect from server. Socket is not opened" for nothing).
   */
  private async closeSocket(): Promise<void> {
    if (this.client.readyState() === 'CLOSED') return;
    let timer: NodeJS.Timeout | undefined;
    const cap = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CLOSE_WAIT_MS);
      timer.unref();
    });
    await Promise.race([
      this.client.disconnect().then(
        () => undefined,
        () => undefined,
      ),
      cap,
    ]);
    clearTimeout(timer);
  }

  /**
   * Writes one line with tmi.js `raw()` (a PRIVMSG) rather than `say()`: say() splits 500-character
   * lines itself (a second, unpaced line) and treats a leading `.`, `/` or `\` as a command.
   */
  private async write(channel: string, text: string): Promise<void> {
    if (this.current !== 'connected') throw new NotSentError('not connected');
    // Read answers before the line leaves: Twitch's USERSTATE may be in the very next frame.
    this.writing = true;
    this.refreshRaw();
    try {
      await this.client.raw(`PRIVMSG #${channel} :${text}`);
    } catch (err) {
      // tmi.js rejects before writing anything when the socket is not open.
      if (err === 'Not connected to server.') throw new NotSentError('not connected', { cause: err });
      throw err instanceof Error ? err : new Error(String(err));
    } finally {
      this.writing = false;
      // (the outbox records the line as awaiting right after: 'written' looks again)
      queueMicrotask(() => this.refreshRaw());
    }
  }

  /**
   * Attaches or detaches the `raw_message` listener as the bot awaits Twitch's answers or not.
   * USERSTATE and the probe's PONG are read from tmi.js's public `raw_message` event (tmi.js has no
   * USERSTATE event, and its 'pong' event carries no token). While such a listener is attached
   * tmi.js deep-copies every line it receives, so it is attached only while an answer is awaited:
   * from `connect` until the join (the join's USERSTATE says whether the bot is moderator), while
   * a line is written or awaits its confirmation, and while a probe awaits its PONG; otherwise a
   * chat line costs tmi.js's own parsing and one routing call (on `ws` or the built-in WebSocket).
   */
  private refreshRaw(): void {
    const want =
      !this.closing && (this.joining || this.writing || this.outbox.unconfirmed().count > 0 || this.watch.probing);
    if (want === this.rawAttached) return;
    this.rawAttached = want;
    if (want) this.client.on('raw_message', this.onRaw);
    else this.client.removeListener('raw_message', this.onRaw);
  }

  /** An answer came (or a line left the awaiting list): maybe stop reading answers; health may change. */
  private answered(): void {
    this.refreshRaw();
    this.updateHealth();
  }

  private readRaw(line: RawLine): void {
    if (line.command === 'USERSTATE') this.onUserState(line.params?.[0], line.tags);
    else if (line.command === 'PONG') {
      this.watch.pong(line.params?.at(-1));
      this.answered();
    }
  }

  /** tmi.js's public events for the channel and the connection. */
  private listen(): void {
    const client = this.client;
    routeChannelEvents(
      { client, channelKey: this.channelKey, botLogin: this.botLogin, log: this.log, clock: this.clock },
      {
        message: (message) => this.emit('message', message),
        roomState: (tags) => this.onRoomState(tags),
        notice: (msgId, text) => {
          this.log.warn({ msgId }, 'chat notice');
          this.emit('notice', msgId, text);
          this.outbox.handleNotice(msgId, text);
          this.answered();
        },
        automod: (msgId, text) => {
          this.log.warn({ msgId }, 'chat line held by AutoMod');
          this.outbox.handleNotice(msgId, text);
          this.answered();
        },
        mod: (mod) => this.setMod(mod),
      },
    );
    client.on('connecting', () => {
      // tmi.js opened a new socket (first connect, the client's reconnect, or tmi.js's own
      // answer to a server RECONNECT): a reconnect still pending has nothing left to do.
      this.cancelReconnect();
      if (this.closing) {
        void this.closeSocket();
        return;
      }
      this.joining = true;
      this.refreshRaw();
      this.setState('connecting');
    });
    client.on('disconnected', (reason) => this.onDisconnected(String(reason)));
  }

  private onUserState(channel: string | undefined, tags: Record<string, unknown> | undefined): void {
    if (channel !== this.channelKey || !tags) return;
    this.acks++;
    this.setMod(userStateIsMod(tags));
    // Twitch answers every PRIVMSG it accepts with a USERSTATE carrying the message's `id`, in
    // order; the USERSTATE of a JOIN or a mod change has none.
    if (this.current === 'connected' && typeof tags.id === 'string' && tags.id !== '') this.outbox.confirm();
  }

  private setMod(mod: boolean): void {
    if (mod !== this.mod) {
      this.mod = mod;
      this.log.info({ mod }, mod ? 'bot is moderator in the channel' : 'bot is not moderator in the channel');
    }
    this.outbox.setPrivileged(mod);
  }

  private onRoomState(tags: TmiTags): void {
    const roomId = applyRoomState(this.room, tags);
    if (roomId !== undefined) this.roomId = roomId;
    this.outbox.setSlowMode(this.room.slow);
    if (this.current !== 'connected' && !this.closing) {
      this.joining = false;
      this.setState('connected');
      this.recovery.joined();
      this.reconnectDelayMs = this.reconnectBaseMs;
      this.outbox.resume();
      this.watch.resume();
      this.refreshRaw();
      this.log.info({ channel: this.channelLogin, channelId: this.roomId }, 'joined channel');
      const waiter = this.joinWaiter;
      this.joinWaiter = undefined;
      waiter?.();
    }
  }

  /**
   * tmi.js runs with `connection.reconnect: false`: every connection lost without the client asking
   * (dropped socket, tmi.js's keep-alive timeout, the half-open probe's close, a server RECONNECT)
   * reaches here, and the client calls tmi.js `connect()` again after `reconnect.intervalMs`, the
   * wait growing 1.5x up to `reconnect.maxIntervalMs` while attempts fail and starting over once
   * joined; tmi.js re-joins the channel on each connect. tmi.js answers a server RECONNECT itself
   * (closes, then connects after its `reconnectInterval`): this timer for that close is set later
   * with no shorter wait (both on real time, not the injected clock), so it finds tmi.js's socket
   * opening and stands down. A refusal of the token on a reconnect first refreshes it when `tokens`
   * can (AuthRecovery: logs in again once per refusal; an unreachable token endpoint is tried again
   * on the injected clock until `disconnect()`); the token is read on every login.
   */
  private onDisconnected(reason: string): void {
    this.watch.pause();
    this.outbox.pause();
    this.joining = false;
    this.refreshRaw();
    if (this.mod) this.outbox.setPrivileged(false);
    this.mod = false;
    if (this.current === 'disconnected') return;
    // On the built-in WebSocket a dropped socket reports an error, then its close: tmi.js says
    // 'disconnected' for each, and the second comes after the reconnect was scheduled.
    if (this.reconnectTimer && !this.closing) return;
    if (AUTH_FAILURE.test(reason) && this.everConnected && !this.closing) {
      this.setState('disconnected');
      if (this.recovery.begin()) {
        this.log.warn('Twitch refused the chat token on a reconnect; refreshing it and logging in again');
        return;
      }
      const err = new TwitchAuthError(reason);
      this.log.error({ code: err.code }, err.message);
      this.emit('fatal', err);
      return;
    }
    if (this.closing || !this.keepConnected) {
      this.setState('disconnected');
      return;
    }
    const waitMs = this.reconnectDelayMs;
    this.reconnectDelayMs = Math.min(Math.round(waitMs * 1.5), this.reconnectMaxMs);
    if (this.current === 'connected') {
      this.log.warn({ reason }, `chat connection lost; reconnecting in ${Math.round(waitMs / 100) / 10} s`);
      this.setState('disconnected');
    } else {
      this.log.warn({ reason }, `could not reconnect to chat; trying again in ${Math.round(waitMs / 100) / 10} s`);
    }
    // Real time, like tmi.js's own timer for a server RECONNECT, which must fire first (see above).
    this.reconnectTimer = systemClock.setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.closing || this.client.readyState() !== 'CLOSED') return;
      this.reconnectNow();
    }, waitMs);
    this.setState('connecting');
  }

  private cancelReconnect(): void {
    this.reconnectTimer?.cancel();
    this.reconnectTimer = undefined;
  }

  /** Half-open socket: closed through tmi.js's public disconnect(); its 'disconnected' schedules the reconnect (a close already under way reports it too). */
  private dropHalfOpen(): void {
    if (this.closing || this.current !== 'connected' || this.client.readyState() === 'CLOSED') return;
    this.client.disconnect().catch(() => undefined);
  }

  /** Connects again at once (a reconnect's timer, or a refreshed token); a failure reports 'disconnected'. */
  private reconnectNow(): void {
    if (this.closing) return;
    this.setState('connecting');
    this.client.connect().catch(() => undefined);
  }

  private setState(state: ChatConnectionState): void {
    if (state === this.current) return;
    this.current = state;
    this.emit('state', state);
    this.updateHealth();
  }

  /**
   * Emits 'health' when it changed; while a line awaits its answer, looks again when it would
   * turn degraded (on the injected clock).
   */
  private updateHealth(): void {
    this.healthTimer?.cancel();
    this.healthTimer = undefined;
    const now = this.health();
    if (now.chat !== this.lastHealth.chat || now.reason !== this.lastHealth.reason) {
      const was = this.lastHealth.chat;
      this.lastHealth = now;
      if (now.chat === 'degraded') this.log.warn({ reason: now.reason }, 'chat degraded');
      else if (was === 'degraded') this.log.info({ chat: now.chat }, 'chat no longer degraded');
      this.emit('health', now);
    }
    const { oldestAt } = this.outbox.unconfirmed();
    if (this.current === 'connected' && oldestAt !== undefined && now.chat !== 'degraded') {
      const due = oldestAt + this.confirmTimeoutMs - this.clock.now();
      this.healthTimer = this.clock.setTimeout(
        () => {
          this.healthTimer = undefined;
          this.updateHealth();
        },
        Math.max(0, due),
      );
    }
  }
}
