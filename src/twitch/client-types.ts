/**
 * The Twitch chat client's public types: its options, connection states, room state and the
 * token source it reads on every login.
 *
 * Contract: types only (no runtime code); client.ts re-exports every name here, so importers
 * keep using `./client.js` or the folder's index.
 */
import type { Logger } from '../logging/index.js';
import type { Clock } from '../shared/clock.js';
import type { OutboxLimits } from './outbox-types.js';

export type ChatConnectionState = 'connecting' | 'connected' | 'disconnected';

/**
 * Whether chat works for the bot: the connection state, or 'degraded' while connected but the
 * bot's lines go unconfirmed by Twitch (`reason` says why, for /healthz and the consoles).
 */
export interface ChatHealth {
  chat: ChatConnectionState | 'degraded';
  reason?: string;
}

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
  /** TWITCH_TOKEN, with or without `oauth:`. Never logged. Ignored when `tokens` is given. */
  token: string;
  /** The token's keeper (ChatToken): read on every login, refreshed after a refusal when it can. */
  tokens?: ChatTokenSource;
  logger: Logger;
  /** Used for pacing and timeouts. Default: the system clock. */
  clock?: Clock;
  /** Outbox limits (tests scale the windows down). */
  outbox?: Partial<OutboxLimits>;
  /** Reconnect delay after a lost connection: first `intervalMs` (default 1000), growing 1.5x up to `maxIntervalMs` (30 000), on real time. */
  reconnect?: { intervalMs?: number; maxIntervalMs?: number };
  /** Longest wait for the welcome and the channel join in `connect()` (default 15 000 ms). */
  connectTimeoutMs?: number;
  /** A written line unanswered this long makes the client probe the connection (default 15 000 ms). */
  confirmTimeoutMs?: number;
  /** How long a PONG may take (tmi.js's keep-alive PING on its own timer, the confirmation probe on `clock`); none -> closed and reconnected (default 5000 ms). */
  pingTimeoutMs?: number;
}

/** What the client needs from the token keeper (see token.ts). */
export interface ChatTokenSource {
  current(): string;
  canRefresh(): boolean;
  refresh(reason: string): Promise<void>;
}
