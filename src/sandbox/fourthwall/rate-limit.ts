/**
 * Fourthwall's rate rule as the service applies it: at most `limit` requests are admitted per
 * rolling `intervalMs` window; requests beyond that are DELAYED (first come, first served) until
 * the window has room, never refused. Time comes from an injected Clock.
 * It does not count or know routes; the server decides which requests pass through it.
 */
import type { Clock, TimerHandle } from '../../shared/clock.js';

export interface RateLimit {
  limit: number;
  intervalMs: number;
}

/** A FIFO rolling-window admission gate. */
export class RollingWindowGate {
  private admitted: number[] = [];
  private tail: Promise<void> = Promise.resolve();
  private readonly timers = new Set<{ handle: TimerHandle; resolve: () => void }>();
  private waitingCount = 0;
  private closed = false;

  constructor(
    private readonly rule: RateLimit,
    private readonly clock: Clock,
  ) {
    if (!Number.isInteger(rule.limit) || rule.limit < 1)
      throw new RangeError('rateLimit.limit must be a positive integer');
    if (!(rule.intervalMs > 0)) throw new RangeError('rateLimit.intervalMs must be positive');
  }

  /** Requests currently held back. */
  waiting(): number {
    return this.waitingCount;
  }

  /**
   * Resolves when the caller may proceed, with the admission time (the one the window counts)
   * and the milliseconds it was held back.
   */
  acquire(): Promise<{ admittedAt: number; delayedMs: number }> {
    const start = this.clock.now();
    this.waitingCount++;
    const turn = this.tail.then(() => this.waitForRoom());
    this.tail = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn.then(
      (admittedAt) => {
        this.waitingCount--;
        return { admittedAt, delayedMs: admittedAt - start };
      },
      (err: unknown) => {
        this.waitingCount--;
        throw err;
      },
    );
  }

  /** Releases everyone still waiting (server shutdown). */
  close(): void {
    this.closed = true;
    for (const t of this.timers) {
      t.handle.cancel();
      t.resolve();
    }
    this.timers.clear();
  }

  private async waitForRoom(): Promise<number> {
    for (;;) {
      const now = this.clock.now();
      if (this.closed) return now;
      this.admitted = this.admitted.filter((t) => t > now - this.rule.intervalMs);
      if (this.admitted.length < this.rule.limit) {
        this.admitted.push(now);
        return now;
      }
      const oldest = this.admitted[0] as number;
      await new Promise<void>((resolve) => {
        const entry = {
          handle: this.clock.setTimeout(
            () => {
              this.timers.delete(entry);
              resolve();
            },
            oldest + this.rule.intervalMs - now,
          ),
          resolve,
        };
        this.timers.add(entry);
      });
    }
  }
}
