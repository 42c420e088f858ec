/**
 * EventSubClient: the bot's one EventSub client over WebSocket (TWITCH_EVENTSUB_URL, default
 * wss://eventsub.wss.twitch.tv/ws). Features register topics on it (topics.ts: channel points,
 * bits, chat over EventSub); it runs one session per account whose token creates subscriptions
 * (session.ts: a Twitch session holds one user's subscriptions), so the bot uses at most one
 * socket per account (two during a session_reconnect switch-over) of the three Twitch allows.
 *
 * Contract:
 * - delivery is at least once at Twitch; here each message id reaches its handler once: the ids
 *   seen are kept in a bounded cache (DEDUPE_ENTRIES, DEDUPE_MS), so memory does not grow with
 *   the stream's length; redeliveries after that window are not expected (Twitch redelivers within
 *   seconds);
 * - a handler's throw or rejection is logged and the next message goes on;
 * - `health()` is the state for /healthz and the dashboard: `connected` when every session with
 *   topics is connected, `connecting` while one is (re)connecting or subscribing, `disconnected`
 *   when one waits to reconnect or every topic was refused (with the reason), and per topic its
 *   status and problem; `off` when no topic is registered;
 * - `stop()` closes every socket; nothing reconnects afterwards.
 * Does not: know what the events mean (the features do) or catch up on missed events (the
 * features do, when told of a gap).
 */
import type { Logger } from '../../logging/index.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import { LruCache } from '../../shared/lru-cache.js';
import type { Backoff } from '../../shared/retry.js';
import type { RandomSource } from '../../shared/random.js';
import type { TwitchAccount } from '../account-tokens.js';
import type { HelixClient } from '../helix.js';
import { EventSubSession, type SessionPhase, type TopicEntry } from './session.js';
import {
  topicKey,
  type EventSubTopic,
  type EventSubTopics,
  type TopicHandlers,
  type TopicRegistration,
} from './topics.js';

const DEFAULT_EVENTSUB_URL = 'wss://eventsub.wss.twitch.tv/ws';
/** Message ids remembered for the dedupe, and for how long. */
const DEDUPE_ENTRIES = 10_000;
const DEDUPE_MS = 10 * 60_000;

export interface EventSubClientOptions {
  url?: string;
  /** The keepalive window asked of Twitch (10-600 s; default 30). */
  keepaliveSeconds?: number;
  /** The Helix client of each account's token (subscriptions are made with it). */
  helixFor(account: TwitchAccount): HelixClient | undefined;
  clock?: Clock;
  logger: Logger;
  /** Reconnect backoff after a drop (default 1 s doubling to 60 s) and after Twitch's socket limit (30 s to 5 min). */
  backoff?: { drop?: Backoff; limit?: Backoff };
  random?: RandomSource;
}

type EventSubState = 'connected' | 'connecting' | 'disconnected';

export interface EventSubHealth {
  state: EventSubState | 'off';
  reason?: string;
  topics: { type: string; account: TwitchAccount; status: string; problem?: string }[];
}

export class EventSubClient implements EventSubTopics {
  private readonly sessions = new Map<TwitchAccount, EventSubSession>();
  private readonly seen: LruCache<string, true>;
  private readonly clock: Clock;
  private readonly log: Logger;
  private stopped = false;
  /** Notifications handed to features (tests, bench). */
  delivered = 0;
  /** Redeliveries dropped by the dedupe. */
  duplicates = 0;

  constructor(private readonly o: EventSubClientOptions) {
    this.clock = o.clock ?? systemClock;
    this.log = o.logger.child({ module: 'twitch.eventsub' });
    this.seen = new LruCache({ maxEntries: DEDUPE_ENTRIES, ttlMs: DEDUPE_MS, now: () => this.clock.now() });
  }

  register(topic: EventSubTopic, handlers: TopicHandlers): TopicRegistration {
    const entry: TopicEntry = {
      key: topicKey(topic),
      topic,
      handlers,
      status: 'pending',
      removed: false,
      since: this.clock.now(),
      first: true,
    };
    const session = this.sessionOf(topic.account);
    if (this.stopped) entry.removed = true;
    else session.add(entry);
    return {
      topic,
      status: () => entry.status,
      unregister: () => session.remove(entry),
    };
  }

  /** The live session id of an account (tests). */
  sessionId(account: TwitchAccount): string | undefined {
    return this.sessions.get(account)?.sessionId();
  }

  /** The phase of an account's session (tests, bench). */
  phase(account: TwitchAccount): SessionPhase | undefined {
    return this.sessions.get(account)?.phase;
  }

  health(): EventSubHealth {
    const topics: EventSubHealth['topics'] = [];
    let state: EventSubHealth['state'] = 'off';
    let reason: string | undefined;
    const rank = { off: 0, connected: 1, connecting: 2, disconnected: 3 } as const;
    for (const [account, s] of this.sessions) {
      const live = s.topics().filter((e) => !e.removed);
      for (const e of live)
        topics.push({ type: e.topic.type, account, status: e.status, ...(e.problem ? { problem: e.problem } : {}) });
      if (!live.length) continue;
      const mine: EventSubHealth['state'] =
        s.phase === 'connected'
          ? 'connected'
          : s.phase === 'connecting' || s.phase === 'subscribing'
            ? 'connecting'
            : 'disconnected';
      if (rank[mine] > rank[state]) {
        state = mine;
        reason = mine === 'connected' ? undefined : s.reason;
      }
    }
    return { state, ...(reason ? { reason } : {}), topics };
  }

  stop(): void {
    this.stopped = true;
    for (const s of this.sessions.values()) s.stop();
  }

  private sessionOf(account: TwitchAccount): EventSubSession {
    let s = this.sessions.get(account);
    if (!s) {
      s = new EventSubSession({
        account,
        url: this.o.url ?? DEFAULT_EVENTSUB_URL,
        keepaliveSeconds: this.o.keepaliveSeconds ?? 30,
        helix: () => this.o.helixFor(account),
        clock: this.clock,
        logger: this.o.logger,
        dropBackoff: this.o.backoff?.drop ?? { baseMs: 1000, maxMs: 60_000 },
        limitBackoff: this.o.backoff?.limit ?? { baseMs: 30_000, maxMs: 300_000 },
        ...(this.o.random ? { random: this.o.random } : {}),
        deliver: (entry, msg) => this.deliver(entry, msg),
      });
      this.sessions.set(account, s);
    }
    return s;
  }

  private deliver(entry: TopicEntry, msg: { id: string; event: unknown; at?: string }): void {
    if (this.seen.get(msg.id)) {
      this.duplicates++;
      this.log.debug({ messageId: msg.id, type: entry.topic.type }, 'EventSub redelivered a message; handled once');
      return;
    }
    this.seen.set(msg.id, true);
    this.delivered++;
    const meta = { messageId: msg.id, receivedAt: this.clock.now(), ...(msg.at ? { at: msg.at } : {}) };
    try {
      const done = entry.handlers.onEvent(msg.event, meta);
      if (done)
        done.catch((err: unknown) =>
          this.log.error({ err, type: entry.topic.type }, 'an EventSub event handler failed'),
        );
    } catch (err) {
      this.log.error({ err, type: entry.topic.type }, 'an EventSub event handler failed');
    }
  }
}
