/**
 * Per-client rate limits for the public surface (src/http/surfaces.ts): one token bucket per
 * client key, so one client's flood is answered 429 without touching anyone else's budget. Used
 * by /verify, /healthz and any public route that wants a bound (the claim routes included).
 *
 * Contract: `take(key, cost = 1)` spends `cost` tokens and returns `{ ok: true }`, or `{ ok: false,
 * retryAfterSeconds }` when that key's bucket holds fewer than `min(cost, burst)` (a cost larger
 * than the whole bucket is let through from a full bucket, leaving it in debt). A bucket holds `burst` tokens and refills
 * at `perSecond`. At most `maxClients` buckets are kept (least recently used dropped, so memory
 * does not grow with the number of addresses seen); a dropped client starts again with a full
 * bucket. Time comes from `now` (ms), injectable. `answer429` writes the refusal. Does not decide
 * who a client is (surfaces.ts `clientKey` does) or which routes are limited.
 */
import type { ServerResponse } from 'node:http';
import { LruCache } from '../shared/lru-cache.js';

export interface RateLimitOptions {
  /** Tokens added per second. */
  perSecond: number;
  /** Bucket size: how many requests a client may send at once. */
  burst: number;
  /** Buckets kept (default 10,000). */
  maxClients?: number;
  now?: () => number;
}

export type RateVerdict = { ok: true } | { ok: false; retryAfterSeconds: number };

export class RateLimiter {
  private readonly buckets: LruCache<string, { tokens: number; at: number }>;
  private readonly now: () => number;

  constructor(private readonly o: RateLimitOptions) {
    if (!(o.perSecond > 0) || !(o.burst >= 1)) throw new RangeError('RateLimiter needs perSecond > 0 and burst >= 1');
    this.now = o.now ?? Date.now;
    this.buckets = new LruCache({ maxEntries: o.maxClients ?? 10_000 });
  }

  take(key: string, cost = 1): RateVerdict {
    const now = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.o.burst, at: now };
    b.tokens = Math.min(this.o.burst, b.tokens + ((now - b.at) / 1000) * this.o.perSecond);
    b.at = now;
    const need = Math.min(cost, this.o.burst);
    if (b.tokens >= need) {
      b.tokens -= cost;
      this.buckets.set(key, b);
      return { ok: true };
    }
    this.buckets.set(key, b);
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((need - b.tokens) / this.o.perSecond)) };
  }
}

/** The 429 answer (plain text, Retry-After), connection kept cheap: nothing else is read. */
export function answer429(res: ServerResponse, retryAfterSeconds: number): void {
  const body = 'too many requests; try again later\n';
  res.writeHead(429, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'retry-after': String(retryAfterSeconds),
  });
  res.end(body);
}
