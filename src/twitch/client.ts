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
 * tmi.js gets `skipUpdatingEmotesets` and a logger adapter (its default logger is module state).
 * tmi.js (and ws under it) is imported by the first `connect()`, not with this module: a bot
 * answers /healthz before it joins chat, and nothing before that needs them. Until then the
 * state is 'disconnected' and lines wait in the (paused) outbox, as they do while disconnected.
 * The receive path does as little as possible per line: one channel compare and a push while
 * tmi.js handles a socket read, then the tag mapping and one emit per line (chat-routing.ts). This module knows nothing about commands or giveaways.
 * This file owns the connection and its state (connect, reconnect, token refusal, the outbox's
 * pause/resume and confirmation); chat-routing.ts routes the channel's events to it and reads
 * ROOMSTATE/USERSTATE tags; client-types.ts holds the public types (re-exported here).
 */
import { EventEmitter } from 'node:events';
import type tmi from 'tmi.js';
import type { ChatPort, SayOptions } from '../giveaway/ports.js';
import { systemClock, type Clock, type TimerHandle } from '../shared/clock.js';
import { GiftdropError } from '../shared/errors.js';
import type { Logger } from '../logging/index.js';
import { NotSentError, Outbox, type ChatTransport, type OutboxLimits, type OutboxStats } from './outbox.js';
import { ConfirmWatch } from './confirm-watch.js';
import { AuthRecovery } from './auth-recovery.js';
import { tmiClientOptions, TwitchAuthError, TwitchConnectError } from './tmi-glue.js';
import type { TmiTags } from './parse.js';
import { applyRoomState, routeChannelEvents, userStateIsMod } from './chat-routing.js';
import { tapUserState, tmiSocket } from './userstate-tap.js';
import type { ChatConnectionState, ChatTokenSource, RoomState, TwitchChatOptions } from './client-types.js';

export { TwitchAuthError, TwitchConnectError } from './tmi-glue.js';
export type { ChatConnectionState, ChatTokenSource, RoomState, TwitchChatOptions } from './client-types.js';

/** The parts of tmi.js's client this adapter uses beyond @types/tmi.js. */
interface TmiInternals {
  reconnect: boolean;
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
  /** Made by the first `connect()` (tmi.js is imported then). */
  private client: tmi.Client | undefined;
  private readonly tmiOptions: tmi.Options;
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

    this.tmiOptions = tmiClientOptions(options, this.botLogin, this.channelKey, this.log);

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
      sendPing: (token) => (this.client ? this.client.raw(`PING :${token}`) : Promise.reject(new Error('not connected'))),
      onDead: () => this.dropHalfOpen(),
    });
    this.outbox.on('written', () => this.watch.arm());
    this.outbox.on('sent', (text: string) => {
      this.watch.arm();
      this.emit('sent', text);
    });
  }

  /** The tmi.js client, made (and tmi.js imported) on the first call. */
  private async tmiClient(): Promise<tmi.Client> {
    if (this.client) return this.client;
    const { default: tmiModule } = await import('tmi.js');
    if (!this.client) {
      this.client = new tmiModule.Client(this.tmiOptions);
      this.wire(this.client);
    }
    return this.client;
  }

  /** tmi.js's reconnect flag (not in @types/tmi.js). */
  private setReconnect(on: boolean): void {
    if (this.client) (this.client as unknown as TmiInternals).reconnect = on;
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
    let client: tmi.Client;
    try {
      client = await this.tmiClient();
    } catch (err) {
      this.setState('disconnected');
      throw new TwitchConnectError(`could not load the chat client (tmi.js): ${(err as Error).message}`, { cause: err });
    }
    if (this.closing) {
      // disconnect() ran while tmi.js was loading: stay disconnected.
      this.setState('disconnected');
      throw new TwitchConnectError('the chat connection was closed while connecting');
    }
    this.setReconnect(false);
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
      await Promise.race([client.connect(), timeout]);
      await Promise.race([joined, timeout]);
    } catch (reason) {
      this.joinWaiter = undefined;
      await client.disconnect().catch(() => undefined);
      this.setState('disconnected');
      if (reason instanceof GiftdropError) throw reason;
      const text = typeof reason === 'string' ? reason : reason instanceof Error ? reason.message : String(reason);
      if (AUTH_FAILURE.test(text)) throw new TwitchAuthError(text);
      throw new TwitchConnectError(`could not connect to the Twitch chat server: ${text}`, { cause: reason });
    } finally {
      timer?.cancel();
    }
    this.everConnected = true;
    this.setReconnect(true);
  }

  /** Leaves for good (no reconnect). Queued lines stay queued. */
  async disconnect(): Promise<void> {
    this.closing = true;
    this.setReconnect(false);
    this.recovery.cancel();
    this.watch.pause();
    this.outbox.pause();
    await this.client?.disconnect().catch(() => undefined);
    this.setState('disconnected');
  }

  private async write(channel: string, text: string): Promise<void> {
    if (this.current !== 'connected' || !this.client) throw new NotSentError('not connected');
    try {
      await this.client.raw(`PRIVMSG #${channel} :${text}`);
    } catch (err) {
      // tmi.js rejects before writing anything when the socket is not open.
      if (err === 'Not connected to server.') throw new NotSentError('not connected', { cause: err });
      throw err instanceof Error ? err : new Error(String(err));
    }
  }

  private wire(client: tmi.Client): void {
    routeChannelEvents(
      { client, channelKey: this.channelKey, botLogin: this.botLogin, clock: this.clock, log: this.log },
      {
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
      },
    );
    client.on('connecting', () => {
      if (this.closing) {
        void client.disconnect().catch(() => undefined);
        return;
      }
      // tmi.js opened a new socket (first connect or a reconnect): read its USERSTATE lines.
      const socket = tmiSocket(client);
      if (socket) tapUserState(socket, client as unknown as EventEmitter, this.onRaw);
      else this.log.warn('tmi.js has no socket to read USERSTATE from; lines cannot be confirmed');
      this.setState('connecting');
    });
    client.on('reconnect', () => {
      if (!this.closing) this.setState('connecting');
    });
    client.on('disconnected', (reason) => this.onDisconnected(String(reason)));
  }

  /** tmi.js's `raw_message`, attached only while it handles a frame carrying a USERSTATE or a PONG. */
  private readonly onRaw = (_copy: unknown, message: { command?: string; params?: string[]; tags?: Record<string, unknown> }): void => {
    if (message.command === 'USERSTATE') this.onUserState(message.params?.[0], message.tags);
    else if (message.command === 'PONG') {
      this.watch.pong(message.params?.at(-1));
    }
  };

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
    if (this.closing || this.current !== 'connected' || !this.client) return;
    this.client.disconnect().then(
      () => this.reconnectNow(),
      () => undefined,
    );
  }

  private reconnectNow(): void {
    if (this.closing) return;
    this.setReconnect(true);
    this.setState('connecting');
    this.client?.connect().catch(() => undefined);
  }

  private setState(state: ChatConnectionState): void {
    if (state === this.current) return;
    this.current = state;
    this.emit('state', state);
  }
}
