/**
 * LruCache: a Map with a size bound and an optional time-to-live, for caches that must not grow
 * with the audience (e.g. Twitch account lookups, one entry per chatter ever seen).
 *
 * Contract: at most `maxEntries` entries; setting one more evicts the least recently used (read
 * or written); with `ttlMs`, an entry older than that (on `now()`) reads as absent and is dropped.
 * With `maxWeight` and `weigh`, the entries' total weight (e.g. bytes) is bounded as well: the least
 * recently used go until it fits (an entry heavier than the bound alone is not kept).
 * O(1) per operation (Map insertion order is the recency order).
 */
export interface LruCacheOptions<V = unknown> {
  maxEntries: number;
  /** Entries expire this long after they were set (default: never). */
  ttlMs?: number;
  /** Clock for the TTL (ms). */
  now?: () => number;
  /** Bound on the sum of `weigh(value)` over the entries (default: none). */
  maxWeight?: number;
  weigh?: (value: V) => number;
}

export class LruCache<K, V> {
  private readonly map = new Map<K, { value: V; at: number; weight: number }>();
  private readonly max: number;
  private weight = 0;

  constructor(private readonly o: LruCacheOptions<V>) {
    if (!Number.isInteger(o.maxEntries) || o.maxEntries < 1)
      throw new RangeError('LruCache maxEntries must be a positive integer');
    this.max = o.maxEntries;
  }

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    if (this.o.ttlMs !== undefined && this.now() - e.at >= this.o.ttlMs) {
      this.forget(key);
      return undefined;
    }
    this.map.delete(key);
    this.map.set(key, e);
    return e.value;
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  /** Drops `key` (no-op when absent). */
  forget(key: K): void {
    const e = this.map.get(key);
    if (!e) return;
    this.weight -= e.weight;
    this.map.delete(key);
  }

  set(key: K, value: V): void {
    this.forget(key);
    const weight = this.o.weigh ? this.o.weigh(value) : 0;
    if (this.o.maxWeight !== undefined && weight > this.o.maxWeight) return;
    this.map.set(key, { value, at: this.now(), weight });
    this.weight += weight;
    const maxWeight = this.o.maxWeight ?? Infinity;
    while (this.map.size > this.max || this.weight > maxWeight) this.forget(this.map.keys().next().value as K);
  }

  private now(): number {
    return this.o.now ? this.o.now() : Date.now();
  }
}
