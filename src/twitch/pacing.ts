/**
 * Pacer: the outbox's bookkeeping of Twitch's sending rules for one channel, on times the caller
 * passes in (the outbox's injected clock): the sliding window of written lines (regular or
 * moderator bucket), the minimum gap and slow mode for non-moderators, back-off blocks after a
 * NOTICE, and the duplicate rule (same text within `duplicateWindowMs`, avoided with an invisible
 * variation). Every recorded write counts, whether or not Twitch later confirms it; a write the
 * transport certainly did not make is taken back with `unrecordAttempt`. No I/O, no timers.
 */
import type { OutboxLimits } from './outbox-types.js';

export class Pacer {
  /** Write times inside the current window, oldest first. */
  private readonly attempts: number[] = [];
  /** Text actually written -> when, for the duplicate rule. */
  private readonly recent = new Map<string, number>();
  private lastAttemptAt = -Infinity;
  private blockedUntil = -Infinity;
  privileged = false;
  slowSeconds = 0;

  constructor(private readonly limits: OutboxLimits) {}

  /** Earliest time the next line may be written. */
  nextSlot(now: number): number {
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
  variant(base: string, now: number): string | number {
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

  recordAttempt(now: number): void {
    this.attempts.push(now);
    this.lastAttemptAt = now;
  }

  /** The last recorded write certainly did not happen: it does not count against the window. */
  unrecordAttempt(): void {
    this.attempts.pop();
  }

  rememberText(text: string, at: number): void {
    this.recent.set(text, at);
  }

  block(until: number): void {
    this.blockedUntil = Math.max(this.blockedUntil, until);
  }
}
