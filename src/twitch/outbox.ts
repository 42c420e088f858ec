/**
 * The outbox: every line the bot says in a channel goes through one Outbox, which keeps the bot
 * inside Twitch's limits (and a safety margin) so that no message is dropped for pacing.
 *
 * Contract:
 * - sliding window of `messages` per `windowMs` (20 per 32 s), or `modMessages` (100 per 32 s)
 *   once the bot's moderator/broadcaster status is confirmed (`setPrivileged(true)`, fed from
 *   USERSTATE); every written line counts, including the ones Twitch later drops (a write the
 *   transport refused with `NotSentError` does not, and is retried after the minimum gap);
 * - when not privileged: at least `minIntervalMs + pacingMarginMs` between lines, more in slow
 *   mode, and never the same text twice within `duplicateWindowMs` (a repeat gets an invisible
 *   variation, or waits when there is no room for one);
 * - text is sanitised (no control characters, no leading chat command) and split at word
 *   boundaries into lines of at most `maxLength`; `sayList` packs lists into few lines;
 * - priorities high > normal > low, FIFO within one; a line with `staleAfterMs` not sent in
 *   time is dropped;
 * - paused while disconnected; a line counts as sent only once the transport accepted it, and is
 *   re-queued only when the transport says it certainly was not written (`NotSentError`);
 * - NOTICEs about the last line (`handleNotice`) back off and retry that line once, or drop it;
 * - with `confirm: true` (the Twitch client) one line is written at a time, and it is only
 *   *awaiting* until the server answers it (`confirm()`, fed from Twitch's USERSTATE; a NOTICE answers the oldest awaiting
 *   line instead of the last written one); `stats().sent` counts confirmed lines only. On
 *   `pause()` (disconnect) the awaiting lines go back to the front of their queues in order, so
 *   they are sent again after the reconnect; a confirmed line never is. Their writes stay counted
 *   in the rate window (Twitch may have counted them);
 * - bounded while paused: more than `maxQueued` waiting lines drop the oldest low-priority ones,
 *   then the oldest normal ones; high-priority lines (winner announcements) are never dropped.
 * All pacing uses the injected Clock. One Outbox per channel; it does not know tmi.js (the
 * transport is an interface) and does not share its window between channels.
 */
import { EventEmitter } from 'node:events';
import type { Clock, TimerHandle } from '../shared/clock.js';
import { GiftdropError } from '../shared/errors.js';
import type { Logger } from '../logging/index.js';
import type { SayOptions, SayPriority } from '../giveaway/ports.js';
import { packList, splitText } from './text.js';

/** Writes one line to the chat server. Throws `NotSentError` when it certainly did not write it. */
export interface ChatTransport {
  send(channel: string, text: string): Promise<void>;
}

/** Thrown by a transport when the line was certainly not written (e.g. not connected). */
export class NotSentError extends GiftdropError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('CHAT_NOT_SENT', message, options);
  }
}

export interface OutboxLimits {
  /** Lines per window when not moderator/broadcaster (default 20). */
  messages: number;
  /** Lines per window once moderator/broadcaster status is confirmed (default 100). */
  modMessages: number;
  /** Sliding window length (default 32 000 ms: Twitch counts 30 s; 2 s margin). */
  windowMs: number;
  /** Minimum gap between lines when not privileged (default 1000 ms). */
  minIntervalMs: number;
  /** Added to the minimum gap, the slow-mode gap and the duplicate window (default 100 ms). */
  pacingMarginMs: number;
  /** Same text is never sent twice within this time when not privileged (default 30 000 ms). */
  duplicateWindowMs: number;
  /** Longest line (default 500). */
  maxLength: number;
  /** Pause after a NOTICE that is not a rate limit, when it names no duration (default 5000 ms). */
  backoffMs: number;
  /** Length of one slow-mode second (default 1000 ms; tests scale it). */
  slowUnitMs: number;
  /** Most lines kept waiting while paused (disconnected); high-priority lines are never dropped (default 100). */
  maxQueued: number;
}

export const defaultOutboxLimits: OutboxLimits = {
  messages: 20,
  modMessages: 100,
  windowMs: 32_000,
  minIntervalMs: 1000,
  pacingMarginMs: 100,
  duplicateWindowMs: 30_000,
  maxLength: 500,
  backoffMs: 5000,
  slowUnitMs: 1000,
  maxQueued: 100,
};

export interface OutboxOptions {
  channel: string;
  transport: ChatTransport;
  clock: Clock;
  logger: Logger;
  limits?: Partial<OutboxLimits>;
  /** Start paused (the client resumes once the channel is joined). Default false. */
  paused?: boolean;
  /** A written line counts as sent only once `confirm()` answers it (see the module header). Default false. */
  confirm?: boolean;
}

export interface OutboxStats {
  queued: number;
  /** Lines delivered (confirmed by the server in `confirm` mode). */
  sent: number;
  dropped: number;
  retried: number;
  /** Writes handed to the transport (a re-sent line counts each time). */
  written: number;
  /** Written lines not yet answered (`confirm` mode). */
  unconfirmed: number;
  /** Lines dropped because the queue was over `maxQueued` while paused (included in `dropped`). */
  overflow: number;
  /** Unconfirmed lines put back in the queue after a disconnect (`confirm` mode). */
  requeued: number;
}

/** Why a line was not sent. */
export type DropReason = 'stale' | 'notice' | 'uncertain' | 'closed' | 'overflow';

interface Entry {
  text: string;
  priority: SayPriority;
  queuedAt: number;
  staleAfterMs?: number;
  retries: number;
}

/** Events: 'sent' (text: string), 'dropped' (text: string, reason: DropReason, detail?: string). */
export class Outbox extends EventEmitter {
  readonly channel: string;
  private readonly transport: ChatTransport;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly limits: OutboxLimits;
  private readonly queues: Record<SayPriority, Entry[]> = { high: [], normal: [], low: [] };
  /** Send attempt times inside the current window, oldest first. */
  private readonly attempts: number[] = [];
  /** Text actually sent -> when, for the duplicate rule. */
  private readonly recent = new Map<string, number>();
  private privileged = false;
  private slowSeconds = 0;
  private paused: boolean;
  private closed = false;
  private inflight = false;
  private lastAttemptAt = -Infinity;
  private blockedUntil = -Infinity;
  private lastSent: { entry: Entry; at: number } | undefined;
  private timer: TimerHandle | undefined;
  private idleWaiters: (() => void)[] = [];
  private readonly counters = { sent: 0, dropped: 0, retried: 0, written: 0, overflow: 0, requeued: 0 };
  private readonly confirmMode: boolean;
  /** Written, not yet answered lines, oldest first (`confirm` mode). */
  private readonly awaiting: { entry: Entry; text: string; at: number }[] = [];

  constructor(options: OutboxOptions) {
    super();
    this.channel = options.channel.replace(/^#/, '').toLowerCase();
    this.transport = options.transport;
    this.clock = options.clock;
    this.log = options.logger;
    this.limits = { ...defaultOutboxLimits, ...options.limits };
    this.paused = options.paused ?? false;
    this.confirmMode = options.confirm ?? false;
  }

  /** Queues `text` (split into lines of at most `maxLength`). Returns the number of lines queued. */
  say(text: string, options: SayOptions = {}): number {
    return this.enqueue(splitText(text, this.limits.maxLength), options);
  }

  /**
   * Queues a list (winners, entrants) packed into as few lines as possible, each starting with
   * `prefix`. Returns the number of lines queued.
   */
  sayList(prefix: string, items: readonly string[], options: SayOptions = {}): number {
    return this.enqueue(packList(prefix, items, this.limits.maxLength), options);
  }

  /** Moderator/broadcaster status as confirmed by USERSTATE (false until confirmed). */
  setPrivileged(privileged: boolean): void {
    if (privileged === this.privileged) return;
    this.privileged = privileged;
    this.log.info({ privileged }, privileged ? 'outbox: moderator limits' : 'outbox: regular-user limits');
    this.pump();
  }

  isPrivileged(): boolean {
    return this.privileged;
  }

  /** Slow mode in seconds (0 = off), from ROOMSTATE. */
  setSlowMode(seconds: number): void {
    this.slowSeconds = Math.max(0, seconds);
    this.pump();
  }

  /**
   * Stops sending (disconnected). Queued lines are kept; in `confirm` mode the written but
   * unanswered lines go back to the front of their queues, in order.
   */
  pause(): void {
    this.paused = true;
    this.lastSent = undefined;
    this.cancelTimer();
    if (this.awaiting.length > 0) {
      const back = this.awaiting.splice(0);
      for (let i = back.length - 1; i >= 0; i--) this.queues[back[i]!.entry.priority].unshift(back[i]!.entry);
      this.counters.requeued += back.length;
      this.log.info({ channel: this.channel, lines: back.length }, 'chat lines not confirmed by Twitch before the disconnect; re-queued for after the reconnect');
    }
    this.trim();
  }

  /**
   * The server answered the oldest awaiting line (Twitch's USERSTATE after a PRIVMSG): it counts
   * as sent. Returns false when no line was awaiting an answer (an unsolicited USERSTATE).
   */
  confirm(): boolean {
    const done = this.awaiting.shift();
    if (!done) return false;
    this.counters.sent++;
    this.emit('sent', done.text);
    this.notifyIdle();
    this.pump();
    return true;
  }

  /** Written lines not yet answered, and when the oldest was written (`confirm` mode). */
  unconfirmed(): { count: number; oldestAt: number | undefined } {
    return { count: this.awaiting.length, oldestAt: this.awaiting[0]?.at };
  }

  /**
   * The oldest awaiting line got no answer although the connection answers: its fate is unknown,
   * so it is dropped ('uncertain'), never resent (a resend could double it).
   */
  abandonOldest(): boolean {
    const done = this.awaiting.shift();
    if (!done) return false;
    this.drop(done.entry, 'uncertain', 'no answer from the chat server');
    this.log.warn({ channel: this.channel }, 'chat line never confirmed by Twitch although the connection answers; not resent');
    this.notifyIdle();
    this.pump();
    return true;
  }

  /** Starts sending again (connected and joined). */
  resume(): void {
    if (this.closed) return;
    this.paused = false;
    this.pump();
  }

  isPaused(): boolean {
    return this.paused;
  }

  /** Lines waiting (not counting one being written). */
  pending(): number {
    return this.queues.high.length + this.queues.normal.length + this.queues.low.length;
  }

  stats(): OutboxStats {
    return { queued: this.pending(), unconfirmed: this.awaiting.length, ...this.counters };
  }

  /** Resolves when nothing is queued or being written. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Feeds a NOTICE from the channel. Twitch names no message in it; it refers to the line sent
   * last, which is retried once (rate limit, duplicate, slow mode, time-out) or dropped.
   */
  handleNotice(msgId: string, text = ''): void {
    let last = this.lastSent;
    const now = this.clock.now();
    const seconds = /(\d+)\s*(?:more\s+)?seconds?/i.exec(text);
    const namedMs = seconds ? Number(seconds[1]) * this.limits.slowUnitMs + this.limits.pacingMarginMs : undefined;
    let retry = false;
    switch (msgId) {
      case 'msg_ratelimit':
        this.block(now + this.limits.windowMs);
        retry = true;
        break;
      case 'msg_duplicate':
        retry = true;
        break;
      case 'msg_slowmode':
        this.block(now + (namedMs ?? Math.max(this.slowSeconds * this.limits.slowUnitMs, this.limits.backoffMs)));
        retry = true;
        break;
      case 'msg_timedout':
        this.block(now + (namedMs ?? this.limits.backoffMs));
        retry = true;
        break;
      default:
        if (!msgId.startsWith('msg_')) return;
        this.block(now + this.limits.backoffMs);
    }
    if (this.confirmMode) {
      // Twitch answers lines in order: a NOTICE answers the oldest line still awaiting an answer.
      const answered = this.awaiting.shift();
      last = answered ? { entry: answered.entry, at: answered.at } : undefined;
    }
    if (!last) {
      this.log.warn({ msgId, channel: this.channel }, 'chat notice with no line to attribute it to');
      this.pump();
      return;
    }
    this.lastSent = undefined;
    if (retry && last.entry.retries === 0) {
      last.entry.retries++;
      this.counters.retried++;
      this.queues[last.entry.priority].unshift(last.entry);
      this.log.warn({ msgId, channel: this.channel }, 'chat line refused by Twitch; retrying once');
    } else {
      this.drop(last.entry, 'notice', msgId);
      this.log.warn({ msgId, channel: this.channel }, 'chat line refused by Twitch; dropped');
    }
    this.pump();
  }

  /** Stops for good: cancels timers and drops what is queued. Returns the number of lines dropped. */
  close(): number {
    this.closed = true;
    this.paused = true;
    this.cancelTimer();
    let n = 0;
    for (const p of ['high', 'normal', 'low'] as const) {
      for (const e of this.queues[p].splice(0)) {
        this.drop(e, 'closed');
        n++;
      }
    }
    this.notifyIdle();
    return n;
  }

  private enqueue(lines: string[], options: SayOptions): number {
    if (this.closed) {
      this.log.warn({ channel: this.channel, lines: lines.length }, 'outbox closed; line not queued');
      return 0;
    }
    const priority = options.priority ?? 'normal';
    const now = this.clock.now();
    for (const text of lines) {
      const entry: Entry = { text, priority, queuedAt: now, retries: 0 };
      if (options.staleAfterMs !== undefined) entry.staleAfterMs = options.staleAfterMs;
      this.queues[priority].push(entry);
    }
    this.trim();
    this.pump();
    return lines.length;
  }

  private pump(): void {
    // In `confirm` mode one line at a time: the next is written once Twitch answered the last, so
    // at most one line is ever in doubt when the connection drops, and a NOTICE names its line.
    if (this.paused || this.inflight || this.closed || this.awaiting.length > 0) return;
    this.cancelTimer();
    const now = this.clock.now();
    const entry = this.next(now);
    if (!entry) {
      this.notifyIdle();
      return;
    }
    let at = this.nextSlot(now);
    let text: string | undefined;
    if (at <= now) {
      const choice = this.variant(entry.text, now);
      if (typeof choice === 'number') at = choice;
      else text = choice;
    }
    if (text === undefined) {
      this.timer = this.clock.setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, at - now);
      return;
    }
    this.queues[entry.priority].shift();
    this.write(entry, text, now);
  }

  /** The next line to send, after dropping stale ones; left in its queue. */
  private next(now: number): Entry | undefined {
    for (const p of ['high', 'normal', 'low'] as const) {
      const q = this.queues[p];
      while (q.length > 0) {
        const e = q[0]!;
        if (e.staleAfterMs !== undefined && now - e.queuedAt > e.staleAfterMs) {
          q.shift();
          this.drop(e, 'stale');
          continue;
        }
        return e;
      }
    }
    return undefined;
  }

  /** Earliest time the next line may be written. */
  private nextSlot(now: number): number {
    const { windowMs, messages, modMessages, minIntervalMs, pacingMarginMs, slowUnitMs } = this.limits;
    while (this.attempts.length > 0 && this.attempts[0]! <= now - windowMs) this.attempts.shift();
    const limit = this.privileged ? modMessages : messages;
    let at = Math.max(now, this.blockedUntil);
    if (this.attempts.length >= limit) {
      at = Math.max(at, this.attempts[this.attempts.length - limit]! + windowMs);
    }
    if (!this.privileged) {
      const gap = Math.max(minIntervalMs, this.slowSeconds * slowUnitMs) + pacingMarginMs;
      at = Math.max(at, this.lastAttemptAt + gap);
    }
    return at;
  }

  /**
   * The text to write for `base` under the duplicate rule, or the time to wait when every
   * variation that fits is still recent.
   */
  private variant(base: string, now: number): string | number {
    // Pruned in every mode: a moderator bot also records what it sends, for the day it loses the status.
    const horizon = now - this.limits.duplicateWindowMs - this.limits.pacingMarginMs;
    for (const [t, at] of this.recent) {
      if (at <= horizon) this.recent.delete(t);
    }
    if (this.privileged) return base;
    let candidate = base;
    // U+E0000 is an unassigned tag character: invisible in Twitch chat, but makes the text differ.
    for (let k = 1; this.recent.has(candidate); k++) {
      candidate = `${base} ${'\u{E0000}'.repeat(k)}`;
      if (candidate.length > this.limits.maxLength) {
        return this.recent.get(base)! + this.limits.duplicateWindowMs + this.limits.pacingMarginMs + 1;
      }
    }
    return candidate;
  }

  private write(entry: Entry, text: string, now: number): void {
    this.inflight = true;
    this.attempts.push(now);
    this.lastAttemptAt = now;
    this.transport.send(this.channel, text).then(
      () => {
        this.inflight = false;
        this.recent.set(text, now);
        this.counters.written++;
        if (this.confirmMode) {
          if (this.paused) {
            // The disconnect was reported while this write was under way: not known to be answered.
            this.queues[entry.priority].unshift(entry);
            this.counters.requeued++;
          } else {
            this.awaiting.push({ entry, text, at: now });
            this.emit('written', text);
          }
        } else {
          this.lastSent = { entry, at: now };
          this.counters.sent++;
          this.emit('sent', text);
        }
        this.pump();
      },
      (err: unknown) => {
        this.inflight = false;
        if (err instanceof NotSentError) {
          // Not written, so it does not count against the window; retry after a pause instead of
          // spinning while the client has not yet reported the disconnect (a closing socket).
          this.attempts.pop();
          this.block(this.clock.now() + this.limits.minIntervalMs + this.limits.pacingMarginMs);
          this.queues[entry.priority].unshift(entry);
          this.log.debug({ channel: this.channel }, 'chat line not written; re-queued');
        } else {
          this.recent.set(text, now);
          this.drop(entry, 'uncertain', err instanceof Error ? err.message : String(err));
          this.log.warn({ channel: this.channel, err }, 'chat line may or may not have been written; not resent');
        }
        this.pump();
      },
    );
  }

  private drop(entry: Entry, reason: DropReason, detail?: string): void {
    this.counters.dropped++;
    if (reason === 'stale') this.log.debug({ channel: this.channel, priority: entry.priority }, 'stale chat line dropped');
    this.emit('dropped', entry.text, reason, detail);
  }

  /** While paused, keeps at most `maxQueued` lines: oldest low first, then oldest normal; never high. */
  private trim(): void {
    if (!this.paused || this.closed) return;
    let excess = this.pending() - this.limits.maxQueued;
    if (excess <= 0) return;
    let dropped = 0;
    for (const p of ['low', 'normal'] as const) {
      const q = this.queues[p];
      while (excess > 0 && q.length > 0) {
        this.drop(q.shift()!, 'overflow');
        excess--;
        dropped++;
      }
    }
    if (dropped === 0) return;
    this.counters.overflow += dropped;
    this.log.warn(
      { channel: this.channel, dropped, droppedSoFar: this.counters.overflow, kept: this.pending(), max: this.limits.maxQueued },
      `chat outbox full while disconnected: dropped ${dropped} low-priority line(s) (${this.counters.overflow} so far); winner announcements are kept`,
    );
  }

  private block(until: number): void {
    this.blockedUntil = Math.max(this.blockedUntil, until);
  }

  private cancelTimer(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private isIdle(): boolean {
    return !this.inflight && (this.closed || (this.pending() === 0 && this.awaiting.length === 0));
  }

  private notifyIdle(): void {
    if (!this.isIdle() || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
