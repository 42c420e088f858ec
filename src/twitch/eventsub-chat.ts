/**
 * EventSubChat: Twitch chat over EventSub and the Twitch API, the `chat.transport: "eventsub"`
 * choice beside IRC (client.ts, the default). It reads the channel's chat with EventSub's
 * `channel.chat.message` (through the bot's one EventSub client, twitch/eventsub/) and sends with
 * Helix Send Chat Message (api-chat-sender.ts over a ChatMessageEndpoint), and offers the app the
 * same ChatConnection as the IRC client.
 *
 * Contract:
 * - `attach()` gives it the EventSub client and the Twitch API once the composition root built
 *   them; `connect()` then learns the channel's and the bot's user ids (`identify`), subscribes to
 *   `channel.chat.message` (and Shared Chat's `channel.shared_chat.begin/update`, whose
 *   participants name the partner channels: `onSharedChat`) with the bot's token, and resolves
 *   once the chat subscription is live; it rejects with TwitchConnectError when identification
 *   fails or nothing is live within `connectTimeoutMs` (connector.ts retries), and with
 *   EventSubChatRefusedError when Twitch refuses the subscription (a missing `user:read:chat`
 *   scope: the line says which);
 * - each chat line is mapped by eventsub-chat-message.ts: 'message' for everyone's but the
 *   bot's; the bot's own lines only tell whether it is moderator or broadcaster (their badges),
 *   which moves the outbox to the moderator limits;
 * - the state follows the EventSub client's (`connected`, `connecting`, `disconnected`), looked at
 *   every `stateCheckMs` on the injected clock; EventSub does not replay what was said while the
 *   socket was down, and a resubscription after a gap is logged as such;
 * - `health()` is the state, or 'degraded' while connected but the bot's lines do not get through
 *   (api-chat-sender.ts: refused, or several in a row not sent), with the reason;
 * - Twitch revoking the subscription's authorization emits 'fatal' (the token lost its consent);
 * - sending does not wait for the socket: lines go out through the outbox (bounded while paused,
 *   winners' lines kept) as soon as the ids are known, paused only before that and after
 *   `disconnect()`.
 * Does not: own the EventSub socket (the client does) or decide anything about entries.
 */
import { EventEmitter } from 'node:events';
import type { SayOptions } from '../giveaway/ports.js';
import type { Logger } from '../logging/index.js';
import type { ChatMessage } from '../shared/chat.js';
import type { Clock, TimerHandle } from '../shared/clock.js';
import { GiftdropError } from '../shared/errors.js';
import { ApiChatSender, type ChatMessageEndpoint } from './api-chat-sender.js';
import type { ChatConnection } from './chat-connection.js';
import type { ChatConnectionState, ChatHealth } from './client-types.js';
import { chatMessageOfEvent } from './eventsub-chat-message.js';
import { NotSentError, type OutboxLimits, type OutboxStats } from './outbox-types.js';
import { TwitchConnectError } from './tmi-glue.js';

/** What chat over EventSub needs of the EventSub client (twitch/eventsub/client.ts EventSubClient). */
interface ChatEventSource {
  register(
    topic: { type: string; version: string; condition: Record<string, string>; account: 'bot' },
    handlers: {
      onEvent(event: unknown, meta: { messageId: string; at?: string; receivedAt: number }): void;
      onSubscribed?(info: { gap?: { since: number; first: boolean } }): void;
      onRefused?(problem: string): void;
      onRevoked?(status: string): void;
    },
  ): { unregister(): Promise<void> };
  health(): { state: 'connected' | 'connecting' | 'disconnected' | 'off'; reason?: string };
}

/** Twitch refused the chat subscription for good (scope, consent): fix the token. */
class EventSubChatRefusedError extends GiftdropError {
  constructor(problem: string) {
    super(
      'TWITCH_EVENTSUB_CHAT',
      `Twitch refused to deliver the channel's chat over EventSub (${problem}). Chat over EventSub needs TWITCH_TOKEN with ` +
        'user:read:chat and user:write:chat for the bot account (user:bot too for the Chat Bot badge); or set "chat": { "transport": "irc" }.',
    );
  }
}

/**
 * What the transport reaches Twitch through, given by the composition root once the Twitch API
 * and the EventSub client exist (`attach`, before `connect`).
 */
export interface EventSubChatLinks {
  events: ChatEventSource;
  /** The channel's and the bot's user ids (a Twitch API lookup and the token's validation). */
  identify(): Promise<ChatIds>;
  /** The Send Chat Message endpoint for these ids (chat-messages-endpoint.ts); told when the bot is a moderator. */
  endpoint(ids: ChatIds): ChatMessageEndpoint & { privileged?(mod: boolean): void };
  /** A Shared Chat session named its channels (login by id): the channel directory learns them. */
  onSharedChat?(channels: { id: string; login: string }[]): void;
  /** Closes what the links own (an app token's Helix client), on `disconnect()`. */
  close?(): Promise<void>;
}

export interface ChatIds {
  channelId: string;
  botUserId: string;
}

export interface EventSubChatOptions {
  /** Channel login (with or without `#`). */
  channel: string;
  /** Bot login. */
  username: string;
  clock: Clock;
  logger: Logger;
  outbox?: Partial<OutboxLimits>;
  /** Longest wait for the chat subscription in `connect()` (default 15 000 ms). */
  connectTimeoutMs?: number;
  /** How often the EventSub state is looked at (default 1000 ms). */
  stateCheckMs?: number;
}

const SHARED_CHAT_TYPES = ['channel.shared_chat.begin', 'channel.shared_chat.update'] as const;

/**
 * Events: 'message' (ChatMessage), 'state' (ChatConnectionState), 'health' (ChatHealth), 'fatal'
 * (Error), 'sent' (text), 'notice' (code, Twitch's message: each answer that a line was not sent,
 * as IRC's NOTICE; the line may still be retried once).
 */
export class EventSubChat extends EventEmitter implements ChatConnection {
  readonly transport = 'eventsub' as const;
  readonly channelLogin: string;
  readonly botLogin: string;
  private ids: ChatIds | undefined;
  private links: EventSubChatLinks | undefined;
  /** The bot's lines; paused (queued, bounded by the outbox) until the ids are known. */
  private readonly sender: ApiChatSender;
  private endpoint: (ChatMessageEndpoint & { privileged?(mod: boolean): void }) | undefined;
  private current: ChatConnectionState = 'disconnected';
  private lastHealth: ChatHealth = { chat: 'disconnected' };
  private registrations: { unregister(): Promise<void> }[] = [];
  private stateTimer: TimerHandle | undefined;
  private mod = false;
  private readonly log: Logger;

  constructor(private readonly o: EventSubChatOptions) {
    super();
    this.channelLogin = o.channel.replace(/^#/, '').toLowerCase();
    this.botLogin = o.username.toLowerCase();
    this.log = o.logger.child({ module: 'twitch.eventsub-chat' });
    const endpoint: ChatMessageEndpoint = {
      send: (text) =>
        this.endpoint ? this.endpoint.send(text) : Promise.reject(new NotSentError('chat is not connected yet')),
    };
    this.sender = new ApiChatSender({
      channel: this.channelLogin,
      endpoint,
      clock: o.clock,
      logger: o.logger,
      ...(o.outbox ? { limits: o.outbox } : {}),
    });
    this.sender.on('sent', (text: string) => this.emit('sent', text));
    this.sender.on('notice', (code: string, message: string) => this.emit('notice', code, message));
    this.sender.on('health', () => this.updateHealth());
  }

  /** Where the transport reaches Twitch (see EventSubChatLinks); before the first `connect()`. */
  attach(links: EventSubChatLinks): void {
    this.links = links;
  }

  get state(): ChatConnectionState {
    return this.current;
  }

  channelId(): string | undefined {
    return this.ids?.channelId;
  }

  isMod(): boolean {
    return this.mod;
  }

  health(): ChatHealth {
    if (this.current !== 'connected') return { chat: this.current };
    const problem = this.sender.health();
    return problem ? { chat: 'degraded', reason: problem } : { chat: 'connected' };
  }

  say(text: string, options?: SayOptions): void {
    this.sender.say(text, options);
  }

  sayList(prefix: string, items: readonly string[], options?: SayOptions): void {
    this.sender.sayList(prefix, items, options);
  }

  flush(): Promise<void> {
    return this.sender.flush();
  }

  outboxStats(): OutboxStats {
    return this.sender.stats();
  }

  async connect(): Promise<void> {
    if (this.current !== 'disconnected') throw new TwitchConnectError(`already ${this.current}`);
    const links = this.links;
    if (!links)
      throw new TwitchConnectError(
        'chat over EventSub needs the Twitch API and the EventSub client (TWITCH_CLIENT_ID)',
      );
    this.setState('connecting');
    try {
      const ids = (this.ids ??= await this.identify(links));
      this.endpoint ??= links.endpoint(ids);
      this.sender.resume();
      await this.subscribe(links, ids);
    } catch (err) {
      await this.unregisterAll();
      this.setState('disconnected');
      throw err;
    }
    this.setState('connected');
    this.watchState();
  }

  async disconnect(): Promise<void> {
    this.stateTimer?.cancel();
    this.stateTimer = undefined;
    this.sender.pause();
    await this.unregisterAll();
    this.setState('disconnected');
    await this.links?.close?.();
  }

  private async identify(links: EventSubChatLinks): Promise<ChatIds> {
    try {
      return await links.identify();
    } catch (err) {
      if (err instanceof GiftdropError) throw err;
      throw new TwitchConnectError(`could not look the channel up on the Twitch API: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /** Registers the chat topic (and Shared Chat's); resolves once chat is live, rejects when refused or late. */
  private subscribe(links: EventSubChatLinks, ids: ChatIds): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const timer = this.o.clock.setTimeout(() => {
        if (settled) return;
        settled = true;
        reject(
          new TwitchConnectError(
            `EventSub did not deliver the channel's chat within ${Math.round((this.o.connectTimeoutMs ?? 15_000) / 1000)} s (${links.events.health().reason ?? 'no subscription yet'})`,
          ),
        );
      }, this.o.connectTimeoutMs ?? 15_000);
      const chat = links.events.register(
        {
          type: 'channel.chat.message',
          version: '1',
          condition: { broadcaster_user_id: ids.channelId, user_id: ids.botUserId },
          account: 'bot',
        },
        {
          onEvent: (event, meta) => this.onChatEvent(event, meta),
          onSubscribed: (info) => {
            if (!settled) {
              settled = true;
              timer.cancel();
              resolve();
            } else if (info.gap && !info.gap.first) {
              this.log.warn(
                { since: new Date(info.gap.since).toISOString() },
                'chat over EventSub is back; what was said while the connection was down was not received (EventSub does not replay it)',
              );
            }
          },
          onRefused: (problem) => {
            const err = new EventSubChatRefusedError(problem);
            if (!settled) {
              settled = true;
              timer.cancel();
              reject(err);
            } else {
              this.log.error({ code: err.code }, err.message);
              this.emit('fatal', err);
            }
          },
          onRevoked: (status) => {
            const err = new EventSubChatRefusedError(`subscription revoked: ${status}`);
            this.log.error({ code: err.code }, err.message);
            this.emit('fatal', err);
          },
        },
      );
      this.registrations.push(chat);
      if (links.onSharedChat) {
        for (const type of SHARED_CHAT_TYPES) {
          this.registrations.push(
            links.events.register(
              { type, version: '1', condition: { broadcaster_user_id: ids.channelId }, account: 'bot' },
              {
                onEvent: (event) => this.onSharedChatEvent(event),
                onRefused: (problem) =>
                  this.log.debug(
                    { type, problem },
                    'Shared Chat session events unavailable; partner channels are looked up instead',
                  ),
              },
            ),
          );
        }
      }
    });
  }

  private onChatEvent(event: unknown, meta: { at?: string; receivedAt: number }): void {
    const ids = this.ids;
    if (!ids) return;
    const m = chatMessageOfEvent(event, ids, meta.receivedAt, meta.at);
    if (typeof m === 'string') {
      this.log.warn({ reason: m }, 'chat event rejected');
      return;
    }
    if (m.self) return this.setMod(m.roles.moderator || m.roles.broadcaster);
    this.emitMessage(m);
  }

  private emitMessage(m: ChatMessage): void {
    try {
      this.emit('message', m);
    } catch (err) {
      this.log.error({ err }, 'chat line handling failed');
    }
  }

  /** `channel.shared_chat.begin/update`: the participants' logins by id. */
  private onSharedChatEvent(event: unknown): void {
    const participants = (event as { participants?: unknown } | null)?.participants;
    if (!Array.isArray(participants)) return;
    const channels: { id: string; login: string }[] = [];
    for (const p of participants as unknown[]) {
      const id = (p as { broadcaster_user_id?: unknown }).broadcaster_user_id;
      const login = (p as { broadcaster_user_login?: unknown }).broadcaster_user_login;
      if (typeof id === 'string' && id && typeof login === 'string' && login) channels.push({ id, login });
    }
    if (channels.length) this.links?.onSharedChat?.(channels);
  }

  private setMod(mod: boolean): void {
    if (mod === this.mod) return;
    this.mod = mod;
    this.sender.setPrivileged(mod);
    this.endpoint?.privileged?.(mod);
    this.log.info({ mod }, mod ? 'bot is moderator in the channel' : 'bot is not moderator in the channel');
  }

  /** Follows the EventSub client's state on the injected clock. */
  private watchState(): void {
    this.stateTimer?.cancel();
    this.stateTimer = this.o.clock.setTimeout(() => {
      this.stateTimer = undefined;
      if (this.current === 'disconnected' && this.registrations.length === 0) return;
      const h = this.links?.events.health() ?? { state: 'disconnected' as const };
      const next: ChatConnectionState =
        h.state === 'connected' ? 'connected' : h.state === 'connecting' ? 'connecting' : 'disconnected';
      if (next !== this.current) {
        if (next !== 'connected') this.log.warn({ reason: h.reason }, `chat over EventSub is ${next}`);
        this.setState(next);
      }
      this.watchState();
    }, this.o.stateCheckMs ?? 1000);
  }

  private async unregisterAll(): Promise<void> {
    const regs = this.registrations.splice(0);
    await Promise.all(
      regs.map((r) =>
        r.unregister().catch((err: unknown) => this.log.debug({ err }, 'could not remove an EventSub subscription')),
      ),
    );
  }

  private setState(state: ChatConnectionState): void {
    if (state === this.current) return;
    this.current = state;
    this.emit('state', state);
    this.updateHealth();
  }

  private updateHealth(): void {
    const now = this.health();
    if (now.chat === this.lastHealth.chat && now.reason === this.lastHealth.reason) return;
    const was = this.lastHealth.chat;
    this.lastHealth = now;
    if (now.chat === 'degraded') this.log.warn({ reason: now.reason }, 'chat degraded');
    else if (was === 'degraded') this.log.info({ chat: now.chat }, 'chat no longer degraded');
    this.emit('health', now);
  }
}
