/**
 * The client-side request budget: a precise sliding window shared by every call of one client.
 *
 * Contract: at most `limit` permits are handed out in any window of `intervalMs`, however many
 * callers wait concurrently; callers beyond the budget WAIT in FIFO order, they never fail
 * (unless their own AbortSignal fires). A caller takes one of `limit` slots and gives it back with
 * `permit.release()` once its request is over; the slot can be taken again only `intervalMs` after
 * that release. A request reaches the server before its answer is read, so this bounds arrivals at
 * the server too, whatever the latency (two requests on one slot arrive `intervalMs` apart), at the
 * cost of one round trip per slot per window. (Reusing a slot `intervalMs` after its request
 * STARTED would save that round trip but is not safe: a request that reaches the server late and
 * the next one that does not would land in one window.)
 * Why not p-queue's `interval`/`intervalCap`: it counts task STARTS on the real clock, Fourthwall
 * counts ARRIVALS. p-queue sits in front of this limiter (client-transport.ts) and decides WHO asks
 * next; this limiter decides WHEN. The budget's text form (`FOURTHWALL_RATE_LIMIT=100/10s`) is
 * parsed in config/rate-limit-spec.ts.
 * Does not: retry or back off (client-transport.ts, shared/retry.ts), or read server limits (429).
 */
import { systemClock, type Clock, type TimerHandle } from '../shared/clock.js';

/** A request budget: `limit` requests per `intervalMs`. */
export interface RateLimit {
  limit: number;
  intervalMs: number;
}

/** Fourthwall's documented budget: 100 requests per rolling 10 s. */
export const DEFAULT_RATE_LIMIT: RateLimit = { limit: 100, intervalMs: 10_000 };

/** One granted request start; call `release()` exactly once when the request is over. */
export interface Permit {
  release(): void;
}

interface Waiter {
  resolve(p: Permit): void;
  reject(e: unknown): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export interface LimiterOptions {
  /**
   * How far a clock reading may lag true time, in ms; added to every slot's cooldown. Default:
   * 1 for the system clock (Date.now reads whole milliseconds, so without it a loopback server can
   * see two requests of one slot up to 1 ms less than `intervalMs` apart), 0 for any other clock
   * (ManualClock is exact).
   */
  clockResolutionMs?: number;
}

/** A precise, FIFO sliding-window limiter (see the module header). */
export class SlidingWindowLimiter {
  readonly limit: number;
  readonly intervalMs: number;
  private readonly clock: Clock;
  /** Added to `intervalMs` when a released slot's reuse time is computed. */
  private readonly guardMs: number;
  /** Times from which each free slot may be reused, oldest first (non-decreasing). */
  private readonly freeAt: number[];
  private readonly waiters: Waiter[] = [];
  private timer: TimerHandle | undefined;
  private timerAt = Infinity;
  private held = 0;

  constructor(budget: RateLimit, clock: Clock, options: LimiterOptions = {}) {
    if (!Number.isSafeInteger(budget.limit) || budget.limit < 1)
      throw new RangeError('rate limit must be a positive integer');
    if (!(budget.intervalMs > 0)) throw new RangeError('rate limit interval must be positive');
    const guardMs = options.clockResolutionMs ?? (clock === systemClock ? 1 : 0);
    if (!(guardMs >= 0)) throw new RangeError('clock resolution must be >= 0');
    this.limit = budget.limit;
    this.intervalMs = budget.intervalMs;
    this.clock = clock;
    this.guardMs = guardMs;
    this.freeAt = new Array<number>(budget.limit).fill(-Infinity);
  }

  /** Callers waiting for a permit. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Permits handed out and not yet released. */
  get inFlight(): number {
    return this.held;
  }

  /**
   * Resolves with a permit as soon as the budget allows, in FIFO order. Rejects with the
   * signal's reason if `signal` aborts first (the caller then never got a permit).
   */
  acquire(signal?: AbortSignal): Promise<Permit> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<Permit>((resolve, reject) => {
      const w: Waiter = { resolve, reject, signal };
      if (signal) {
        w.onAbort = () => {
          const i = this.waiters.indexOf(w);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(signal.reason);
          this.pump();
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      this.waiters.push(w);
      this.pump();
    });
  }

  private grant(): Permit {
    this.freeAt.shift();
    this.held++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.held--;
        this.freeAt.push(this.clock.now() + this.intervalMs + this.guardMs);
        this.pump();
      },
    };
  }

  private pump(): void {
    const now = this.clock.now();
    while (this.waiters.length > 0 && this.freeAt.length > 0 && this.freeAt[0]! <= now) {
      const w = this.waiters.shift()!;
      if (w.signal && w.onAbort) w.signal.removeEventListener('abort', w.onAbort);
      w.resolve(this.grant());
    }
    const next = this.waiters.length > 0 ? this.freeAt[0] : undefined;
    if (next === undefined) {
      this.timer?.cancel();
      this.timer = undefined;
      this.timerAt = Infinity;
      return;
    }
    if (this.timer && this.timerAt === next) return;
    this.timer?.cancel();
    this.timerAt = next;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      this.pump();
    }, next - now);
  }
}
