/**
 * The outbox: every line the bot says in a channel goes through one Outbox, which keeps the bot
 * inside Twitch's limits (and a margin) so that no message is dropped for pacing. One per channel,
 * on the injected Clock; the transport is an interface (it does not know tmi.js). The waiting lines
 * and their drop policy are outbox-queue.ts, the rate window and gaps pacing.ts; this file owns the
 * flow between them.
 *
 * Contract:
 * - a sliding window of 20 lines per 32 s, 100 once moderator status is confirmed
 *   (`setPrivileged`); every written line counts (Twitch may count one it drops), a write refused
 *   with `NotSentError` does not and is retried, one the server refused for good (`RefusedError`)
 *   is dropped ('refused') without counting; unprivileged, a minimum gap (more in slow mode) and
 *   never the same text twice within `duplicateWindowMs`;
 * - text sanitised and split at word boundaries (`maxLength`), lists packed (`sayList`);
 *   priorities high > normal > low, FIFO within one; a line past its `staleAfterMs` is dropped;
 * - with `confirm: true` (the Twitch client) one line is written at a time and counts as sent only
 *   once the server answers it (`confirm()`; a NOTICE, `handleNotice`, answers the oldest awaiting
 *   line, backing off and retrying it once or dropping it); on `pause()` the awaiting lines go back
 *   to the front of their queues, so they are sent again after a reconnect, a confirmed one never;
 * - while paused at most `maxQueued` lines wait: the oldest low-priority, then normal ones go
 *   first; high-priority lines (winner announcements) are never dropped.
 * Why not p-queue: a chat line is not a task that finishes: it stays queued after it was written
 * until Twitch confirms it, goes back to the FRONT on a disconnect, and is paced by chat's rules.
 */
import { EventEmitter } from 'node:events';
import type { Clock, TimerHandle } from '../shared/clock.js';
import type { Logger } from '../logging/index.js';
import type { SayOptions } from '../giveaway/ports.js';
import { packList, splitText } from './text.js';
import { Pacer } from './pacing.js';
import { LineQueue, type QueuedLine } from './outbox-queue.js';
import {
  defaultOutboxLimits,
  NotSentError,
  RefusedError,
  type ChatTransport,
  type DropReason,
  type OutboxLimits,
  type OutboxOptions,
  type OutboxStats,
} from './outbox-types.js';

export { NotSentError } from './outbox-types.js';
export type { ChatTransport, DropReason, OutboxLimits, OutboxOptions, OutboxStats } from './outbox-types.js';

type Entry = QueuedLine;

/** Events: 'sent' (text: string), 'dropped' (text: string, reason: DropReason, detail?: string). */
export class Outbox extends EventEmitter {
  readonly channel: string;
  private readonly transport: ChatTransport;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly limits: OutboxLimits;
  private readonly queue = new LineQueue((line, reason) => this.drop(line, reason));
  private readonly pacer: Pacer;
  private paused: boolean;
  private closed = false;
  private inflight = false;
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
    this.pacer = new Pacer(this.limits);
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
    if (privileged === this.pacer.privileged) return;
    this.pacer.privileged = privileged;
    this.log.info({ privileged }, privileged ? 'outbox: moderator limits' : 'outbox: regular-user limits');
    this.pump();
  }

  isPrivileged(): boolean {
    return this.pacer.privileged;
  }

  /** Slow mode in seconds (0 = off), from ROOMSTATE. */
  setSlowMode(seconds: number): void {
    this.pacer.slowSeconds = Math.max(0, seconds);
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
      this.queue.requeueFront(back.map((a) => a.entry));
      this.counters.requeued += back.length;
      this.log.info(
        { channel: this.channel, lines: back.length },
        'chat lines not confirmed by Twitch before the disconnect; re-queued for after the reconnect',
      );
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
    this.log.warn(
      { channel: this.channel },
      'chat line never confirmed by Twitch although the connection answers; not resent',
    );
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
    return this.queue.size();
  }

  stats(): OutboxStats {
    return {
      queued: this.pending(),
      unconfirmed: this.awaiting.length,
      writing: this.inflight ? 1 : 0,
      ...this.counters,
    };
  }

  /** Resolves when nothing is queued or being written. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Feeds a NOTICE from the channel. Twitch names no message in it; it refers to the line sent
   * last, which is retried once (rate limit, duplicate, slow mode, time-out) or dropped. A NOTICE
   * whose msg-id does not start with `msg_` is not about a line and is ignored.
   */
  handleNotice(msgId: string, text = ''): void {
    if (!msgId.startsWith('msg_')) return;
    this.notSent(msgId, text);
  }

  /**
   * The server answered the line written last (in `confirm` mode: the oldest awaiting one) that it
   * was not sent, with Twitch's reason `code` (a NOTICE's msg-id, or Send Chat Message's
   * `drop_reason.code`, which Twitch does not document and may change): retried once after the
   * wait the reason asks for (rate limit, duplicate, slow mode, time-out), dropped for any other
   * reason, known or not ('notice', with the code), after a back-off.
   */
  notSent(code: string, text = ''): void {
    let last = this.lastSent;
    const now = this.clock.now();
    const seconds = /(\d+)\s*(?:more\s+)?seconds?/i.exec(text);
    const namedMs = seconds ? Number(seconds[1]) * this.limits.slowUnitMs + this.limits.pacingMarginMs : undefined;
    let retry = false;
    switch (code) {
      case 'msg_ratelimit':
        this.block(now + this.limits.windowMs);
        retry = true;
        break;
      case 'msg_duplicate':
        retry = true;
        break;
      case 'msg_slowmode':
        this.block(now + (namedMs ?? Math.max(this.pacer.slowSeconds * this.limits.slowUnitMs, this.limits.backoffMs)));
        retry = true;
        break;
      case 'msg_timedout':
        this.block(now + (namedMs ?? this.limits.backoffMs));
        retry = true;
        break;
      default:
        this.block(now + this.limits.backoffMs);
    }
    if (this.confirmMode) {
      // Twitch answers lines in order: a NOTICE answers the oldest line still awaiting an answer.
      const answered = this.awaiting.shift();
      last = answered ? { entry: answered.entry, at: answered.at } : undefined;
    }
    if (!last) {
      this.log.warn({ msgId: code, channel: this.channel }, 'chat notice with no line to attribute it to');
      this.pump();
      return;
    }
    this.lastSent = undefined;
    if (retry && last.entry.retries === 0) {
      last.entry.retries++;
      this.counters.retried++;
      this.queue.unshift(last.entry);
      this.log.warn({ msgId: code, channel: this.channel }, 'chat line refused by Twitch; retrying once');
    } else {
      this.drop(last.entry, 'notice', code);
      this.log.warn({ msgId: code, channel: this.channel }, 'chat line refused by Twitch; dropped');
    }
    this.pump();
  }

  /** Stops for good: cancels timers and drops what is queued. Returns the number of lines dropped. */
  close(): number {
    this.closed = true;
    this.paused = true;
    this.cancelTimer();
    const n = this.queue.clear();
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
      this.queue.push(entry);
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
    const entry = this.queue.next(now);
    if (!entry) {
      this.notifyIdle();
      return;
    }
    let at = this.pacer.nextSlot(now);
    let text: string | undefined;
    if (at <= now) {
      const choice = this.pacer.variant(entry.text, now);
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
    this.queue.take(entry);
    this.write(entry, text, now);
  }

  private write(entry: Entry, text: string, now: number): void {
    this.inflight = true;
    this.pacer.recordAttempt(now);
    this.transport.send(this.channel, text).then(
      () => {
        this.inflight = false;
        this.pacer.rememberText(text, now);
        this.counters.written++;
        if (this.confirmMode) {
          if (this.paused) {
            // The disconnect was reported while this write was under way: not known to be answered.
            this.queue.unshift(entry);
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
          this.pacer.unrecordAttempt();
          this.block(this.clock.now() + this.limits.minIntervalMs + this.limits.pacingMarginMs);
          this.queue.unshift(entry);
          this.log.debug({ channel: this.channel }, 'chat line not written; re-queued');
        } else if (err instanceof RefusedError) {
          this.pacer.unrecordAttempt();
          this.drop(entry, 'refused', err.message);
          this.log.warn({ channel: this.channel, reason: err.message }, 'chat line refused by Twitch; dropped');
        } else {
          this.pacer.rememberText(text, now);
          this.drop(entry, 'uncertain', err instanceof Error ? err.message : String(err));
          this.log.warn({ channel: this.channel, err }, 'chat line may or may not have been written; not resent');
        }
        this.pump();
      },
    );
  }

  private drop(entry: Entry, reason: DropReason, detail?: string): void {
    this.counters.dropped++;
    if (reason === 'stale')
      this.log.debug({ channel: this.channel, priority: entry.priority }, 'stale chat line dropped');
    this.emit('dropped', entry.text, reason, detail);
  }

  /** While paused, keeps at most `maxQueued` lines: oldest low first, then oldest normal; never high. */
  private trim(): void {
    if (!this.paused || this.closed) return;
    const dropped = this.queue.trim(this.limits.maxQueued);
    if (dropped === 0) return;
    this.counters.overflow += dropped;
    this.log.warn(
      {
        channel: this.channel,
        dropped,
        droppedSoFar: this.counters.overflow,
        kept: this.pending(),
        max: this.limits.maxQueued,
      },
      `chat outbox full while disconnected: dropped ${dropped} low-priority line(s) (${this.counters.overflow} so far); winner announcements are kept`,
    );
  }

  private block(until: number): void {
    this.pacer.block(until);
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
