/**
 * One account's EventSub WebSocket session (Twitch's sessions hold one user's subscriptions, so
 * the client runs one per account): the socket, the welcome, the keepalive deadline, the
 * `session_reconnect` switch-over, the subscriptions made on it, and what happens when it drops.
 * Its lifecycle is the state machine of SessionPhase.
 *
 * Contract:
 * - subscriptions are made right after the welcome (Twitch closes a socket without one within
 *   `keepalive_timeout_seconds`, 4003); topics registered later are subscribed at once;
 * - no message within `keepalive_timeout_seconds` plus a margin is a drop; a drop ends the session:
 *   its subscriptions are made again on a new one and each feature is told of the gap
 *   (`onSubscribed` with the time the old session went quiet: events meanwhile are not replayed);
 * - reconnects wait a jittered exponential backoff (reset once a session stayed connected a
 *   minute); Twitch's 429 "websocket transports limit exceeded" (3 sockets with subscriptions per
 *   account and application) waits the longer limit backoff, never socket after socket;
 * - a refused subscription (401 after a refresh, 403, 400, a cost or duplicate 429) is that
 *   topic's alone; when every topic is refused the socket is closed (`idle`);
 * - one connection attempt at a time; `stop` closes everything and nothing reconnects.
 * Does not: deduplicate or dispatch notifications (client.ts), hold tokens (the Helix client of
 * the account does, and refreshes on a 401).
 */
import WebSocket from 'ws';
import type { Logger } from '../../logging/index.js';
import type { Clock, TimerHandle } from '../../shared/clock.js';
import { backoffDelay, type Backoff } from '../../shared/retry.js';
import type { RandomSource } from '../../shared/random.js';
import type { TwitchAccount } from '../account-tokens.js';
import { HelixError, type HelixClient } from '../helix.js';
import { closeReason, parseMessage, type EventSubMessage } from './messages.js';
import type { EventSubTopic, TopicHandlers, TopicStatus } from './topics.js';
import { z } from 'zod';

/**
 * The session's lifecycle, an explicit state machine (`phase`):
 *
 *   idle ──topics──> connecting ──welcome──> subscribing ──round done──> connected
 *     ^                  │                        │                         │
 *     │   no topic left  │ closed / no welcome    │ 429 transports limit,   │ closed, keepalive
 *     └──────────────────┤ (drop)                 │ drop                    │ deadline passed (drop)
 *                        v                        v                         v
 *                      waiting ──backoff timer──> connecting     (any) ──stop──> stopped
 *
 *   connected ──session_reconnect──> connected (a second socket to the reconnect URL; on its
 *   welcome it becomes the socket, the old one is closed; no subscription is made again and the
 *   features are not told of a gap; if the new socket fails, that is a drop)
 */
export type SessionPhase = 'idle' | 'connecting' | 'subscribing' | 'connected' | 'waiting' | 'stopped';

/** One registered topic as the session keeps it. */
export interface TopicEntry {
  readonly key: string;
  readonly topic: EventSubTopic;
  readonly handlers: TopicHandlers;
  status: TopicStatus;
  /** Twitch's subscription id while subscribed. */
  subscriptionId?: string;
  problem?: string;
  removed: boolean;
  /** When the feature last had a live subscription or registered (the start of a possible gap). */
  since: number;
  /** Never subscribed yet (its first gap is "since the bot started"). */
  first: boolean;
}

export interface SessionOptions {
  account: TwitchAccount;
  /** The EventSub WebSocket URL (TWITCH_EVENTSUB_URL). */
  url: string;
  /** Asked of Twitch in the URL (10-600). */
  keepaliveSeconds: number;
  helix(): HelixClient | undefined;
  clock: Clock;
  logger: Logger;
  /** After a drop (default 1 s doubling to 60 s). */
  dropBackoff: Backoff;
  /** After Twitch's transports limit (default 30 s doubling to 5 min). */
  limitBackoff: Backoff;
  random?: RandomSource;
  /** A notification of one of this session's topics (the client dedupes and dispatches). */
  deliver(entry: TopicEntry, msg: Extract<EventSubMessage, { kind: 'notification' }>): void;
  /** Every phase change (health, tests). */
  onPhase?(phase: SessionPhase, reason: string | undefined): void;
}

/** Silence beyond the keepalive window that still counts as alive: a late timer on a busy machine. */
const KEEPALIVE_MARGIN_MS = 5_000;
/** How long a new socket may take to open and say welcome. */
const WELCOME_MS = 15_000;
/** A session connected this long resets the reconnect backoff. */
const STABLE_MS = 60_000;
const TRANSPORTS_LIMIT = /websocket transports limit/i;
/** Twitch's 400 for a session id it no longer has (the socket closed meanwhile). */
const SESSION_GONE = /session does not exist|already disconnected/i;

const SubscriptionCreated = z.object({
  data: z.array(z.looseObject({ id: z.string(), status: z.string().optional(), cost: z.number().optional() })).min(1),
  total_cost: z.number().optional(),
  max_total_cost: z.number().optional(),
});

interface Conn {
  ws: WebSocket;
  sessionId?: string;
  keepaliveMs: number;
  timer?: TimerHandle;
  lastAt: number;
  /** Closed on purpose by the session (its close is not a drop). */
  retired: boolean;
}

export class EventSubSession {
  phase: SessionPhase = 'idle';
  /** Why it is not connected (or what it last went through), for health. */
  reason: string | undefined;
  private readonly entries = new Map<string, TopicEntry>();
  private active: Conn | undefined;
  private next: Conn | undefined;
  private wait: TimerHandle | undefined;
  private dropAttempts = 0;
  private limitAttempts = 0;
  private connectedAt = 0;
  /** When the current session went quiet (the start of the gap the features are told of). */
  private lostAt: number | undefined;
  private round: Promise<void> | undefined;
  private readonly log: Logger;

  constructor(private readonly o: SessionOptions) {
    this.log = o.logger.child({ module: 'twitch.eventsub', account: o.account });
  }

  topics(): TopicEntry[] {
    return [...this.entries.values()];
  }

  /** The live session id (tests, health). */
  sessionId(): string | undefined {
    return this.phase === 'connected' || this.phase === 'subscribing' ? this.active?.sessionId : undefined;
  }

  add(entry: TopicEntry): void {
    this.entries.set(entry.key, entry);
    if (this.phase === 'idle') this.connect();
    else if (this.phase === 'connected' || this.phase === 'subscribing') this.subscribeRound();
  }

  async remove(entry: TopicEntry): Promise<void> {
    entry.removed = true;
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    const id = entry.subscriptionId;
    entry.subscriptionId = undefined;
    if (!this.live().length) this.goIdle('no topic left');
    if (id && this.phase !== 'stopped') {
      try {
        await this.o.helix()?.request('DELETE', '/eventsub/subscriptions', { query: new URLSearchParams({ id }) });
      } catch (err) {
        this.log.debug(
          { err, type: entry.topic.type },
          'could not delete an EventSub subscription (it ends with its socket anyway)',
        );
      }
    }
  }

  stop(): void {
    this.setPhase('stopped', 'stopped');
    this.wait?.cancel();
    this.wait = undefined;
    this.retire(this.active, 1000);
    this.retire(this.next, 1000);
    this.active = this.next = undefined;
  }

  private live(): TopicEntry[] {
    return [...this.entries.values()].filter((e) => !e.removed && e.status !== 'refused' && e.status !== 'revoked');
  }

  private setPhase(phase: SessionPhase, reason?: string): void {
    if (this.phase === 'stopped') return;
    this.phase = phase;
    this.reason = reason;
    this.o.onPhase?.(phase, reason);
  }

  private goIdle(reason: string): void {
    this.wait?.cancel();
    this.wait = undefined;
    this.retire(this.active, 1000);
    this.retire(this.next, 1000);
    this.active = this.next = undefined;
    this.setPhase('idle', reason);
  }

  private connect(): void {
    if (this.phase === 'stopped' || !this.live().length) return this.goIdle('no topic to subscribe');
    const url = new URL(this.o.url);
    url.searchParams.set('keepalive_timeout_seconds', String(this.o.keepaliveSeconds));
    this.setPhase('connecting', this.reason);
    this.active = this.open(url.toString(), 'fresh');
  }

  /** A new socket; `fresh` starts a session, `handover` takes over after session_reconnect. */
  private open(url: string, role: 'fresh' | 'handover'): Conn {
    const ws = new WebSocket(url, { handshakeTimeout: WELCOME_MS, maxPayload: 1024 * 1024 });
    const conn: Conn = { ws, keepaliveMs: WELCOME_MS, lastAt: this.o.clock.now(), retired: false };
    this.arm(conn, WELCOME_MS, () => this.failed(conn, 'no welcome message within 15 s'));
    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      if (isBinary) return;
      this.onFrame(conn, role, textOf(data));
    });
    ws.on('error', (err) => this.log.debug({ err: err.message }, 'EventSub socket error'));
    ws.on('unexpected-response', (_req, res) => {
      this.log.warn({ status: res.statusCode }, `EventSub refused the connection (HTTP ${res.statusCode})`);
      ws.terminate();
    });
    ws.on('close', (code: number, reason: Buffer) => {
      conn.timer?.cancel();
      if (conn.retired) return;
      conn.retired = true;
      this.failed(conn, `the socket closed: ${closeReason(code, reason.toString())}`);
    });
    return conn;
  }

  /** (Re)starts a connection's deadline. */
  private arm(conn: Conn, ms: number, onExpiry: () => void): void {
    conn.timer?.cancel();
    conn.timer = this.o.clock.setTimeout(onExpiry, ms);
  }

  private retire(conn: Conn | undefined, code: number): void {
    if (!conn || conn.retired) return;
    conn.retired = true;
    conn.timer?.cancel();
    try {
      if (conn.ws.readyState === WebSocket.OPEN) conn.ws.close(code);
      else conn.ws.terminate();
    } catch {
      conn.ws.terminate();
    }
  }

  private onFrame(conn: Conn, role: 'fresh' | 'handover', text: string): void {
    if (conn.retired || this.phase === 'stopped') return;
    const msg = parseMessage(text);
    if (!msg) {
      this.log.warn({ bytes: text.length }, 'EventSub sent a message that is not one of its kinds; ignored');
      return;
    }
    conn.lastAt = this.o.clock.now();
    if (conn.sessionId)
      this.arm(conn, conn.keepaliveMs, () =>
        this.failed(conn, `no message within ${Math.round(conn.keepaliveMs / 1000)} s (keepalive)`),
      );
    switch (msg.kind) {
      case 'welcome':
        return this.welcomed(conn, role, msg);
      case 'reconnect':
        if (conn === this.active && !this.next) {
          this.log.info('EventSub asked to reconnect: switching to the new socket');
          this.next = this.open(msg.url, 'handover');
        }
        return;
      case 'notification': {
        const entry = this.entryFor(msg);
        if (entry) this.o.deliver(entry, msg);
        else this.log.debug({ type: msg.type }, 'EventSub notification for no registered topic; ignored');
        return;
      }
      case 'revocation': {
        const entry = this.entryFor(msg);
        if (!entry) return;
        entry.status = 'revoked';
        entry.subscriptionId = undefined;
        entry.problem = `Twitch revoked the ${entry.topic.type} subscription (${msg.status})`;
        this.log.warn({ type: entry.topic.type, status: msg.status }, entry.problem);
        safely(this.log, () => entry.handlers.onRevoked?.(msg.status));
        if (!this.live().length) this.goIdle('every subscription was revoked');
        return;
      }
      default:
        return;
    }
  }

  private welcomed(conn: Conn, role: 'fresh' | 'handover', msg: Extract<EventSubMessage, { kind: 'welcome' }>): void {
    if (conn.sessionId) return;
    conn.sessionId = msg.sessionId;
    const seconds = msg.keepaliveSeconds ?? this.o.keepaliveSeconds;
    conn.keepaliveMs = seconds * 1000 + Math.max(KEEPALIVE_MARGIN_MS, seconds * 200);
    this.arm(conn, conn.keepaliveMs, () =>
      this.failed(conn, `no message within ${Math.round(conn.keepaliveMs / 1000)} s (keepalive)`),
    );
    if (role === 'handover') {
      if (conn !== this.next) return this.retire(conn, 1000);
      const old = this.active;
      this.active = conn;
      this.next = undefined;
      this.retire(old, 1000);
      this.log.info({ session: msg.sessionId }, 'EventSub switched to the new socket; subscriptions kept');
      return;
    }
    if (conn !== this.active) return this.retire(conn, 1000);
    this.setPhase('subscribing', this.reason);
    this.subscribeRound();
  }

  private entryFor(msg: { type: string; version: string; condition: Record<string, unknown> }): TopicEntry | undefined {
    for (const e of this.entries.values()) {
      if (e.removed || e.topic.type !== msg.type || e.topic.version !== msg.version) continue;
      if (Object.entries(e.topic.condition).every(([k, v]) => msg.condition[k] === v)) return e;
    }
    return undefined;
  }

  /** Subscribes every pending topic on the live session, in rounds until none is left. */
  private subscribeRound(): void {
    if (this.round) return;
    this.round = (async () => {
      try {
        for (;;) {
          const conn = this.active;
          if (!conn?.sessionId || conn.retired || (this.phase !== 'subscribing' && this.phase !== 'connected')) return;
          const pending = this.live().filter((e) => e.status === 'pending');
          if (!pending.length) break;
          const outcomes = await Promise.all(pending.map((e) => this.subscribe(conn, e)));
          if (conn !== this.active || conn.retired) return;
          if (outcomes.includes('limit')) return this.limited(conn);
          if (outcomes.includes('session')) return this.failed(conn, 'Twitch no longer knows this EventSub session');
        }
        const conn = this.active!;
        if (!this.live().length) return this.goIdle('every subscription was refused');
        if (this.phase === 'subscribing') {
          this.connectedAt = this.o.clock.now();
          this.lostAt = undefined;
          this.limitAttempts = 0;
          this.setPhase('connected');
          this.log.info(
            { session: conn.sessionId, topics: this.live().map((e) => e.topic.type) },
            'EventSub connected',
          );
        }
      } finally {
        this.round = undefined;
      }
    })();
  }

  /** One POST /eventsub/subscriptions; what it means for the session. */
  private async subscribe(conn: Conn, e: TopicEntry): Promise<'ok' | 'refused' | 'limit' | 'session'> {
    const helix = this.o.helix();
    if (!helix) return this.refuse(e, `no Twitch API client for the ${this.o.account}'s token`);
    try {
      const body = await helix.request('POST', '/eventsub/subscriptions', {
        body: {
          type: e.topic.type,
          version: e.topic.version,
          condition: e.topic.condition,
          transport: { method: 'websocket', session_id: conn.sessionId },
        },
        schema: SubscriptionCreated,
      });
      return this.subscribed(conn, e, body.data[0]!.id);
    } catch (err) {
      if (!(err instanceof HelixError)) return this.refuse(e, (err as Error).message);
      if (err.status === 409) return this.subscribed(conn, e, undefined); // made by a repeated POST: it exists
      if (err.status === 429 && TRANSPORTS_LIMIT.test(err.twitchMessage ?? '')) return 'limit';
      if (err.status === 400 && SESSION_GONE.test(err.twitchMessage ?? '')) return 'session';
      if (err.retryable) {
        this.log.warn(
          { type: e.topic.type, err: err.message },
          'could not subscribe to an EventSub topic yet; the session starts over',
        );
        return 'session';
      }
      return this.refuse(e, `Twitch refused the ${e.topic.type} subscription: ${err.twitchMessage ?? err.message}`);
    }
  }

  private subscribed(conn: Conn, e: TopicEntry, id: string | undefined): 'ok' {
    if (e.removed || conn !== this.active) return 'ok';
    e.status = 'subscribed';
    if (id) e.subscriptionId = id;
    e.problem = undefined;
    const gap = { since: e.since, first: e.first };
    e.first = false;
    safely(this.log, () => e.handlers.onSubscribed?.({ gap }));
    return 'ok';
  }

  private refuse(e: TopicEntry, problem: string): 'refused' {
    e.status = 'refused';
    e.problem = problem;
    this.log.error({ type: e.topic.type }, problem);
    safely(this.log, () => e.handlers.onRefused?.(problem));
    return 'refused';
  }

  /** Twitch's socket limit: this socket goes (it would be closed as unused) and the next try waits longer. */
  private limited(conn: Conn): void {
    this.endSession(conn);
    const delay = backoffDelay(this.o.limitBackoff, ++this.limitAttempts, this.o.random);
    const why =
      'Twitch allows 3 EventSub connections per account and application and all are in use (websocket transports limit exceeded): ' +
      `another copy of the bot, or another app with the same client id, may be running as this account. Trying again in ${Math.round(delay / 1000)} s`;
    this.log.warn({ delayMs: delay }, why);
    this.waitThenConnect(delay, why);
  }

  /** A drop: the socket closed, went quiet or never said welcome. */
  private failed(conn: Conn, why: string): void {
    if (this.phase === 'stopped') return;
    if (conn === this.next) {
      // The new socket of a switch-over failed: the old one is about to end too (4004).
      this.log.warn(`EventSub: the socket to the reconnect URL failed (${why}); starting a new session`);
      this.retire(conn, 1000);
      this.next = undefined;
      if (this.active) this.failed(this.active, `switch-over failed: ${why}`);
      return;
    }
    if (conn !== this.active) return this.retire(conn, 1000);
    if (this.next) {
      // The old socket of a switch-over ended (Twitch closes it once the new one is in) before the
      // new one said welcome: the new one carries on, or its own welcome deadline makes this a drop.
      this.retire(conn, 1000);
      return;
    }
    this.lostAt ??= conn.lastAt;
    this.endSession(conn);
    if (this.o.clock.now() - this.connectedAt >= STABLE_MS && this.connectedAt > 0) this.dropAttempts = 0;
    this.connectedAt = 0;
    const delay = backoffDelay(this.o.dropBackoff, ++this.dropAttempts, this.o.random);
    this.log.warn({ delayMs: delay }, `EventSub dropped: ${why}; reconnecting in ${(delay / 1000).toFixed(1)} s`);
    this.waitThenConnect(delay, `dropped: ${why}`);
  }

  /** The session's subscriptions are gone with it: pending again, the gap starting when it went quiet. */
  private endSession(conn: Conn): void {
    this.retire(conn, 1000);
    this.retire(this.next, 1000);
    this.active = this.next = undefined;
    const since = this.lostAt ?? conn.lastAt;
    this.lostAt = since;
    for (const e of this.entries.values()) {
      if (e.status !== 'subscribed' && e.status !== 'pending') continue;
      if (e.status === 'subscribed') e.since = since;
      e.status = 'pending';
      e.subscriptionId = undefined;
    }
  }

  private waitThenConnect(delay: number, why: string): void {
    this.setPhase('waiting', why);
    this.wait?.cancel();
    this.wait = this.o.clock.setTimeout(() => {
      this.wait = undefined;
      if (this.phase === 'waiting') this.connect();
    }, delay);
  }
}

/** A text frame's characters (ws hands over a Buffer, or its fragments). */
function textOf(data: WebSocket.RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

function safely(log: Logger, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    log.error({ err }, 'an EventSub feature handler failed');
  }
}
