/**
 * Retry and backoff, in one place for every outgoing call that is retried: the Fourthwall client
 * (client-transport.ts), the Helix client, whispers, the chat start-up connection, the event
 * intake, and the gift-draw, gift-purchase and link-giveaway flows. A loop that decides WHAT to
 * retry (a finish that turns into a read-back, a 401 that refreshes a token) stays with its
 * caller; how long to wait, with jitter, and waiting on the injected clock are here.
 *
 * Contract:
 * - `backoffDelay(policy, n)`: the wait before retry n (1-based): `baseMs * 2^(n-1)` capped at
 *   `maxMs`; with `jitter: 'equal'` (the default) a uniformly random point in the upper half of
 *   that (so retries of many callers spread out, and the wait is never under half the step).
 * - `sleep(clock, ms, signal)`: waits on the clock; rejects with the signal's reason when it aborts.
 * - `retry(attempt, options)`: runs `attempt(n)` until it resolves; a rejection that `retryable`
 *   accepts is retried after `delayMs` (its own answer, e.g. Retry-After) or the backoff, while
 *   attempts are left and the wait ends before `deadline`; otherwise the error is thrown as is.
 */
import type { Clock } from './clock.js';
import { cryptoRandom, type RandomSource } from './random.js';

export interface Backoff {
  /** The first wait (ms); doubles per retry. */
  baseMs: number;
  /** The longest one wait (ms). */
  maxMs: number;
  /** Retries after the first attempt (default: no limit but the deadline). */
  retries?: number;
  /** 'equal' (default): a random point in the upper half of the wait; 'none': the wait itself. */
  jitter?: 'equal' | 'none';
}

/** The wait before retry `retryNo` (1-based) under `policy` (see the module header). */
export function backoffDelay(policy: Backoff, retryNo: number, random: RandomSource = cryptoRandom): number {
  const step = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(Math.max(0, retryNo - 1), 30));
  if (policy.jitter === 'none') return step;
  const u = random.bytes(4).readUInt32BE(0) / 0x1_0000_0000;
  return Math.round(step * (0.5 + 0.5 * u));
}

/** Waits `ms` on `clock`; rejects with the signal's reason when `signal` aborts first. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      timer.cancel();
      reject(signal!.reason);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** No retry at all (tests, one-shot checks). */
export const NO_RETRY: Backoff = { baseMs: 0, maxMs: 0, retries: 0 };

export interface RetryOptions {
  backoff: Backoff;
  clock: Clock;
  /** Whether `err` may be retried; `{ delayMs }` asks for that wait instead of the backoff. */
  retryable: (err: unknown) => boolean | { delayMs: number };
  /** No wait that would end at or after this time (on the clock) is started: the error is thrown. */
  deadline?: number;
  signal?: AbortSignal;
  random?: RandomSource;
  /** Told before each wait (logging, status lines). */
  onRetry?: (err: unknown, attemptNo: number, delayMs: number) => void;
}

/** Runs `attempt(1)`, `attempt(2)`, ... as the module header says. */
export async function retry<T>(attempt: (attemptNo: number) => Promise<T>, o: RetryOptions): Promise<T> {
  for (let attemptNo = 1; ; attemptNo++) {
    o.signal?.throwIfAborted();
    try {
      return await attempt(attemptNo);
    } catch (err) {
      o.signal?.throwIfAborted();
      const verdict = o.retryable(err);
      if (verdict === false || attemptNo > (o.backoff.retries ?? Infinity)) throw err;
      const delayMs = verdict === true ? backoffDelay(o.backoff, attemptNo, o.random) : verdict.delayMs;
      if (o.deadline !== undefined && o.clock.now() + delayMs >= o.deadline) throw err;
      o.onRetry?.(err, attemptNo, delayMs);
      await sleep(o.clock, delayMs, o.signal);
    }
  }
}
