/**
 * The EventSub client's interface for features: a topic (subscription type, version, condition
 * and the account whose token creates it) and what the feature is told about it. Any feature
 * (channel points, bits, chat over EventSub) registers its topics through `EventSubTopics`.
 *
 * What a feature is told, per topic:
 * - `onEvent(event, meta)`: each notification once (deduplicated by message id), in arrival order;
 *   a handler that throws or rejects is logged, never retried;
 * - `onSubscribed(info)`: the subscription is live on a session. `info.gap` says events may have
 *   been missed (this is the first subscription since the bot started, or the socket dropped at
 *   `gap.since`): Twitch does not replay them, so a feature that can catch up (channel points:
 *   the pending redemptions) does it here. A `session_reconnect` switch-over keeps the
 *   subscription and is no gap (not told);
 * - `onRefused(problem)`: Twitch refused the subscription (scope missing, not allowed, cost): the
 *   line says why; it is not retried until the feature registers it again;
 * - `onRevoked(status)`: Twitch revoked it (authorization_revoked, user_removed, version_removed).
 */
import type { TwitchAccount } from '../account-tokens.js';

export interface EventSubTopic {
  type: string;
  version: string;
  condition: Record<string, string>;
  /** Whose token creates the subscription (a WebSocket session holds one user's subscriptions). */
  account: TwitchAccount;
}

export interface EventMeta {
  messageId: string;
  /** Twitch's message_timestamp, when sent. */
  at?: string;
  /** When the bot read it (the client's clock). */
  receivedAt: number;
}

export interface TopicHandlers {
  onEvent(event: unknown, meta: EventMeta): void | Promise<void>;
  onSubscribed?(info: { gap?: { since: number; first: boolean } }): void;
  onRefused?(problem: string): void;
  onRevoked?(status: string): void;
}

export type TopicStatus = 'pending' | 'subscribed' | 'refused' | 'revoked';

export interface TopicRegistration {
  readonly topic: EventSubTopic;
  status(): TopicStatus;
  /** Removes the topic (its subscription is deleted at Twitch when it has one). */
  unregister(): Promise<void>;
}

/** Where features register topics (EventSubClient implements it). */
export interface EventSubTopics {
  register(topic: EventSubTopic, handlers: TopicHandlers): TopicRegistration;
}

/** A stable key for a topic: type, version and condition (sorted). */
export function topicKey(t: Pick<EventSubTopic, 'type' | 'version' | 'condition'>): string {
  const cond = Object.keys(t.condition)
    .sort()
    .map((k) => `${k}=${String(t.condition[k])}`)
    .join('&');
  return `${t.type}@${t.version}?${cond}`;
}
