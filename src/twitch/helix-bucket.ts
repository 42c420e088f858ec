/**
 * Twitch's Helix point bucket as the answers describe it, kept beside the Helix client's p-queue
 * (helix.ts): `Ratelimit-Limit` (bucket size), `Ratelimit-Remaining` and `Ratelimit-Reset` (epoch
 * seconds, when the bucket is full again) are read on every answer. p-queue's interval model
 * cannot hold this: the budget is the server's, it changes with every answer, and the points come
 * back continuously (one every `pointMs`) rather than all at a window's edge.
 *
 * Contract: `spend()` takes one point at once when a request is sent (so concurrent calls never
 * overspend the last count; `read` subtracts the requests still in flight); `exhausted(now)` is
 * true while no point is left before the reset; `reserve(now, leftMs)` reserves the caller the
 * next point that comes back (waiters one after another, never later than the reset) and returns
 * the wait, or undefined when that is not within `leftMs`. Without Ratelimit-Limit the wait is
 * until the reset. All times are the injected clock's.
 */

type Headers = Record<string, string | string[] | undefined>;

export class HelixBucket {
  private remaining: number | undefined;
  private limit: number | undefined;
  private resetAt = 0;
  /** How long one point takes to come back, from the last answer. */
  private pointMs: number | undefined;
  /** The next point not yet reserved by a waiting caller. */
  private nextSlotAt = 0;

  /** The budget as last counted (points left, bucket size); undefined before the first answer. */
  counted(): { remaining: number; limit: number } | undefined {
    if (this.remaining === undefined || this.limit === undefined) return undefined;
    return { remaining: this.remaining, limit: this.limit };
  }

  spend(): void {
    if (this.remaining !== undefined) this.remaining -= 1;
  }

  exhausted(now: number): boolean {
    return this.remaining !== undefined && this.remaining <= 0 && this.resetAt > now;
  }

  reserve(now: number, leftMs: number): number | undefined {
    const toReset = Math.max(0, this.resetAt - now);
    if (this.pointMs === undefined) return toReset < leftMs ? toReset : undefined;
    const at = Math.max(this.nextSlotAt, now + this.pointMs);
    const wait = Math.min(at - now, toReset);
    if (wait >= leftMs) return undefined;
    this.nextSlotAt = at + this.pointMs;
    return wait;
  }

  /** One answer's headers; `pending`: other requests in flight, whose points it may not count yet. */
  read(headers: Headers, pending: number, now: number): void {
    const one = (h: string | string[] | undefined) => (Array.isArray(h) ? h[0] : h);
    const remaining = Number(one(headers['ratelimit-remaining']));
    const reset = Number(one(headers['ratelimit-reset']));
    const limit = Number(one(headers['ratelimit-limit']));
    if (Number.isFinite(limit) && limit > 0) this.limit = limit;
    if (Number.isFinite(remaining) && one(headers['ratelimit-remaining']) !== undefined)
      this.remaining = remaining - pending;
    if (Number.isFinite(reset) && reset > 0) this.resetAt = reset * 1000;
    // Ratelimit-Reset is when the bucket is full again: the missing points come back evenly until then.
    const missing = this.limit !== undefined && Number.isFinite(remaining) ? this.limit - remaining : undefined;
    const toReset = this.resetAt - now;
    if (missing !== undefined && missing > 0 && toReset > 0) this.pointMs = toReset / missing;
  }
}
