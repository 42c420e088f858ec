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
 * - a refusal on a reconnect first refreshes the token when `tokens` can (then logs in again,
 *   once per refusal; an unreachable token endpoint is tried again on the injected clock until
 *   `disconnect()`); 'fatal' is emitted only when that is impossible or refused too. The token
 *   is read on every login, so a refreshed one is used from the next (re)connect;
 * - everything the bot says goes through its Outbox (limits, splitting, duplicates, priorities,
 *   a cap while disconnected), paused while not joined and resumed on re-join. A line counts as
 *   sent only when Twitch answers it with USERSTATE (read from tmi.js's `raw_message` event,
 *   attached by userstate-tap.ts only while tmi.js handles a frame carrying one, so the receive
 *   path pays one `indexOf` per frame, not tmi.js's copy of every line);
 *   unanswered lines are re-sent after a reconnect, and a line unanswered for `confirmTimeoutMs`
 *   makes ConfirmWatch probe the socket with its own `PING :<token>` (no PONG within
 *   `pingTimeoutMs` on the injected clock -> half-open: closed and connected again). Lines are
 *   written with tmi.js `raw()` (a PRIVMSG) rather than `say()`, because say() splits
 *   500-character lines itself (a second, unpaced line) and treats a leading `.`, `/` or `\`
 *   as a command;
 * - moderator status comes from USERSTATE (mod=1 or the broadcaster/moderator badge) and MODE
 *   +o/-o for the bot, and is forgotten on disconnect; room state (slow, followers-only,
 *   subs-only) from ROOMSTATE.
 * tmi.js runs on a worker thread (tmi-worker.ts starts tmi-host.ts there with the first
 * `connect()`; tmi.js and ws are loaded there, never with this module): reading the socket and
 * parsing IRC, most of a chat line's cost, never holds the bot's event loop, and under a chat
 * flood it runs beside the giveaway engine on another core. A bot answers /healthz before it
 * joins chat; until then the state is 'disconnected' and lines wait in the (paused) outbox, as
 * they do while disconnected. The worker hands over each socket read's lines in one batch, read
 * with one clock reading (`receivedAt`), then one emit per line. This module knows nothing about
 * commands or giveaways.
 * This file owns the connection and its state (connect, reconnect, token refusal, the outbox's
 * pause/resume and confirmation); in the worker chat-routing.ts routes the channel's events and
 * userstate-tap.ts reads USERSTATE; chat-routing.ts also reads ROOMSTATE/USERSTATE tags here;
 * client-types.ts holds the public types (re-exported here).
 */
import { EventEmitter } from 'node:events';
import type { ChatPort, SayOptions } from '../giveaway/ports.js';
import { systemClock, type Clock, type TimerHandle } from '../shared/clock.js';
import { GiftdropError } from '../shared/errors.js';
import type { Logger } from '../logging/index.js';
import { NotSentError, Outbox, type ChatTransport, type OutboxLimits, type OutboxStats } from './outbox.js';
import { ConfirmWatch } from './confirm-watch.js';
import { AuthRecovery } from './auth-recovery.js';
import { hostOptions, TwitchAuthError, TwitchConnectError } from './tmi-glue.js';
import type { TmiTags } from './parse.js';
import { applyRoomState, userStateIsMod } from './chat-routing.js';
import { TmiWorker, type TmiHandlers } from './tmi-worker.js';
import type { ChatConnectionState, ChatTokenSource, RoomState, TwitchChatOptions } from './client-types.js';

export { TwitchAuthError, TwitchConnectError } from './tmi-glue.js';
export type { ChatConnectionState, ChatTokenSource, RoomState, TwitchChatOptions } from './client-types.js';

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
  /** tmi.js, on its worker thread (started by the first `connect()`). */
  private readonly client: TmiWorker;
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
  private readonly tokens: ChatTokenSource | undefined;
  private readonly watch: ConfirmWatch;
  private readonly recovery: AuthRecovery;

  constructor(options: TwitchChatOptions) {
    super();
    this.channelLogin = options.channel.replace(/^#/, '').toLowerCase();
    this.channelKey = `#${this.channelLogin}`;
    this.botLogin = options.username.toLowerCase();
    this.log = options.logger.child({ module: 'twitch' });
    this.clock = options.clock ?? systemClock;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 15_000;
    this.tokens = options.tokens;
    this.recovery = new AuthRecovery({
      tokens: this.tokens,
      clock: this.clock,
      log: this.log,
      initialRetryMs: options.reconnect?.intervalMs ?? 1000,
      relogin: () => this.reconnectNow(),
      fatal: (err) => this.emit('fatal', err),
    });

    const token = options.token.replace(/^oauth:/i, '');
    const tokens = this.tokens;
    this.client = new TmiWorker({
      options: hostOptions(options, this.botLogin, this.channelKey, this.log.levelVal),
      token: () => (tokens ? tokens.current().replace(/^oauth:/i, '') : token),
      handlers: this.handlers(),
      clock: this.clock,
      log: this.log,
    });

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
      timeoutMs: options.confirmTimeoutMs ?? 15_000,
      pongTimeoutMs: options.pingTimeoutMs ?? 5000,
      // A raw PING with the probe's token through tmi.js's public raw(), never its ping(): that
      // one gives up after ~600 ms and replaces tmi.js's own keep-alive timer.
      // Its PONG is read like USERSTATE (userstate-tap.ts attaches raw_message for frames carrying one).
      sendPing: (token) => this.client.raw(`PING :${token}`),
      onDead: () => this.dropHalfOpen(),
    });
    this.outbox.on('written', () => this.watch.arm());
    this.outbox.on('sent', (text: string) => {
      this.watch.arm();
      this.emit('sent', text);
    });
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

  /** Outbox counters; `sent` counts lines Twitch confirmed, `acknowledged` every USERSTATE seen. */
  outboxStats(): OutboxStats & { acknowledged: number } {
    return { ...this.outbox.stats(), acknowledged: this.acks };
  }

  /** Connects, logs in and joins the channel. No retry on failure. */
  async connect(): Promise<void> {
    if (this.current !== 'disconnected') throw new TwitchConnectError(`already ${this.current}`);
    this.closing = false;
    this.setState('connecting');
    this.client.setReconnect(false);
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
    this.client.setReconnect(true);
  }

  /** Leaves for good (no reconnect). Queued lines stay queued. */
  async disconnect(): Promise<void> {
    this.closing = true;
    this.client.setReconnect(false);
    this.recovery.cancel();
    this.watch.pause();
    this.outbox.pause();
    await this.client.close();
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

  /** What the chat worker reports, in tmi.js's order (tmi-worker.ts). */
  private handlers(): TmiHandlers {
    return {
      message: (message) => this.emit('message', message),
      roomState: (tags) => this.onRoomState(tags),
      notice: (msgId, text) => {
        this.log.warn({ msgId }, 'chat notice');
        this.emit('notice', msgId, text);
        this.outbox.handleNotice(msgId, text);
      },
      automod: (msgId, text) => {
        this.log.warn({ msgId }, 'chat line held by AutoMod');
        this.outbox.handleNotice(msgId, text);
      },
      mod: (mod) => this.setMod(mod),
      // USERSTATE and PONG lines (read in the worker by userstate-tap.ts).
      userState: (channel, tags) => this.onUserState(channel, tags),
      pong: (token) => this.watch.pong(token),
      connecting: () => {
        // tmi.js opened a new socket (first connect or a reconnect).
        if (this.closing) void this.client.disconnect().catch(() => undefined);
        else this.setState('connecting');
      },
      reconnect: () => {
        if (!this.closing) this.setState('connecting');
      },
      disconnected: (reason) => this.onDisconnected(reason),
    };
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
      this.setState('connected');
      this.recovery.joined();
      this.outbox.resume();
      this.watch.resume();
      this.log.info({ channel: this.channelLogin, channelId: this.roomId }, 'joined channel');
      const waiter = this.joinWaiter;
      this.joinWaiter = undefined;
      waiter?.();
    }
  }

  private onDisconnected(reason: string): void {
    this.watch.pause();
    this.outbox.pause();
    if (this.mod) this.outbox.setPrivileged(false);
    this.mod = false;
    if (this.current === 'disconnected') return;
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
    if (this.closing || !this.everConnected) {
      this.setState('disconnected');
      return;
    }
    this.log.warn({ reason }, 'chat connection lost; tmi.js reconnects');
    this.setState('disconnected');
  }

  /** Half-open socket: tmi.js's public disconnect() never reconnects, so close, then connect again (a close under way is tmi.js's). */
  private dropHalfOpen(): void {
    if (this.closing || this.current !== 'connected') return;
    this.client.disconnect().then(
      () => this.reconnectNow(),
      () => undefined,
    );
  }

  private reconnectNow(): void {
    if (this.closing) return;
    this.client.setReconnect(true);
    this.setState('connecting');
    this.client.connect().catch(() => undefined);
  }

  private setState(state: ChatConnectionState): void {
    if (state === this.current) return;
    this.current = state;
    this.emit('state', state);
  }
}
