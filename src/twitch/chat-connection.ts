/**
 * ChatConnection: what the app needs of the bot's Twitch chat connection, whichever transport
 * carries it: IRC through tmi.js (client.ts TwitchChat, the default) or EventSub plus Helix Send
 * Chat Message (eventsub-chat.ts EventSubChat, `chat.transport: "eventsub"`). The giveaway engine
 * sees only its ChatPort part; the app (commands, pages, consoles, /healthz, the stop list) the rest.
 *
 * Contract (both transports): emits 'message' (ChatMessage) for every chat line of the channel
 * that is not the bot's own, 'state' on every connection state change, 'health' when `health()`
 * changes, 'sent' (text) for each line of the bot's that Twitch confirmed, 'fatal' (Error) when
 * Twitch refuses the bot's credentials for good after having accepted them; `connect()` resolves
 * once the bot reads the channel's chat and rejects with a clear error otherwise (no retry loop:
 * twitch/connector.ts retries); everything said goes through the transport's outbox (Twitch's
 * limits, confirmation before a line counts as sent). Types only.
 */
import type { EventEmitter } from 'node:events';
import type { ChatPort, SayOptions } from '../giveaway/ports.js';
import type { ChatConnectionState, ChatHealth } from './client-types.js';
import type { OutboxStats } from './outbox-types.js';

type ChatTransportName = 'irc' | 'eventsub';

export interface ChatConnection
  extends ChatPort, Pick<EventEmitter, 'on' | 'off' | 'once' | 'emit' | 'removeListener'> {
  /** Which transport carries chat (for /healthz and the dashboard). */
  readonly transport: ChatTransportName;
  readonly state: ChatConnectionState;
  health(): ChatHealth;
  sayList(prefix: string, items: readonly string[], options?: SayOptions): void;
  /** Resolves when the outbox has nothing queued or being sent. */
  flush(): Promise<void>;
  /** Outbox counters. */
  outboxStats(): OutboxStats;
  /** True once Twitch showed the bot is a moderator or the broadcaster of the channel. */
  isMod(): boolean;
  connect(): Promise<void>;
  disconnect(): Promise<void>;
}
