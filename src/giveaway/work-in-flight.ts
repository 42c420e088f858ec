/**
 * The giveaway engine's work in flight: whether the engine is stopped, the asynchronous work it
 * has started, and clock sleeps that end early when it stops.
 *
 * Contract: `track` registers a promise until it settles, so `whenIdle` can wait for every piece
 * of work the engine started (including work started while waiting). `sleep` resolves true after
 * `ms` on the injected clock, or false at once if / when `halt` is called. One per
 * GiveawayEngine. Does not: know about draws, sessions or ports other than the clock.
 */
import type { Clock, TimerHandle } from '../shared/clock.js';

export class WorkInFlight {
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly sleepers = new Set<{ timer: TimerHandle; resolve: (v: boolean) => void }>();
  private stopped = false;

  constructor(private readonly clock: Clock) {}

  /** True between `halt` and the next `resume`. */
  isStopped(): boolean {
    return this.stopped;
  }

  /** Lets work run again (a new start after a stop). */
  resume(): void {
    this.stopped = false;
  }

  /** Marks the engine stopped and wakes every sleeper with false. */
  halt(): void {
    this.stopped = true;
    for (const sl of this.sleepers) {
      sl.timer.cancel();
      sl.resolve(false);
    }
    this.sleepers.clear();
  }

  /** Resolves true after `ms` on the engine clock, or false at once if / when the engine halts. */
  sleep(ms: number): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const entry = {
        timer: this.clock.setTimeout(() => {
          this.sleepers.delete(entry);
          resolve(true);
        }, ms),
        resolve,
      };
      this.sleepers.add(entry);
    });
  }

  /** Counts `p` as work in flight until it settles; returns `p`. */
  track<T>(p: Promise<T>): Promise<T> {
    this.inflight.add(p);
    const done = () => void this.inflight.delete(p);
    p.then(done, done);
    return p;
  }

  /** Resolves once no tracked work is in flight (timers may still be set). */
  async whenIdle(): Promise<void> {
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
  }
}
