/**
 * The outbox's waiting lines (outbox.ts): one FIFO per priority (high > normal > low) and the
 * queue's drop policy.
 *
 * Contract:
 * - `next(now)` returns the line to send next (highest priority, oldest first) and leaves it
 *   queued; on the way it drops lines whose `staleAfterMs` has passed ('stale');
 * - `trim(max)` keeps at most `max` waiting lines by dropping the oldest low-priority lines, then
 *   the oldest normal ones ('overflow'); high-priority lines are never dropped by it;
 * - `clear()` drops every waiting line ('closed'), high first;
 * - every line the queue drops itself is reported to `onDrop`, in order, before it returns.
 * No clock, timers, pacing or transport here; the Outbox decides when to call what.
 */
import type { SayPriority } from '../giveaway/ports.js';
import type { DropReason } from './outbox-types.js';

/** A line waiting in the outbox. */
export interface QueuedLine {
  text: string;
  priority: SayPriority;
  queuedAt: number;
  staleAfterMs?: number;
  retries: number;
}

export class LineQueue {
  private readonly queues: Record<SayPriority, QueuedLine[]> = { high: [], normal: [], low: [] };

  constructor(private readonly onDrop: (line: QueuedLine, reason: DropReason) => void) {}

  /** Lines waiting. */
  size(): number {
    return this.queues.high.length + this.queues.normal.length + this.queues.low.length;
  }

  /** Appends a line to its priority's queue. */
  push(line: QueuedLine): void {
    this.queues[line.priority].push(line);
  }

  /** Puts a line back at the front of its priority's queue (a retry or a re-send). */
  unshift(line: QueuedLine): void {
    this.queues[line.priority].unshift(line);
  }

  /** Puts lines back at the front of their queues, keeping their order. */
  requeueFront(lines: readonly QueuedLine[]): void {
    for (let i = lines.length - 1; i >= 0; i--) this.unshift(lines[i]!);
  }

  /** Removes the line `next()` returned (the head of its priority's queue). */
  take(line: QueuedLine): void {
    this.queues[line.priority].shift();
  }

  /** The next line to send, after dropping stale ones; left in its queue. */
  next(now: number): QueuedLine | undefined {
    for (const p of ['high', 'normal', 'low'] as const) {
      const q = this.queues[p];
      while (q.length > 0) {
        const e = q[0]!;
        if (e.staleAfterMs !== undefined && now - e.queuedAt > e.staleAfterMs) {
          q.shift();
          this.onDrop(e, 'stale');
          continue;
        }
        return e;
      }
    }
    return undefined;
  }

  /** Keeps at most `max` lines: oldest low first, then oldest normal; never high. Returns how many it dropped. */
  trim(max: number): number {
    let excess = this.size() - max;
    if (excess <= 0) return 0;
    let dropped = 0;
    for (const p of ['low', 'normal'] as const) {
      const q = this.queues[p];
      while (excess > 0 && q.length > 0) {
        this.onDrop(q.shift()!, 'overflow');
        excess--;
        dropped++;
      }
    }
    return dropped;
  }

  /** Drops every waiting line ('closed'). Returns how many. */
  clear(): number {
    let n = 0;
    for (const p of ['high', 'normal', 'low'] as const) {
      for (const e of this.queues[p].splice(0)) {
        this.onDrop(e, 'closed');
        n++;
      }
    }
    return n;
  }
}
