/**
 * LruCache: a Map with a size bound and an optional time-to-live, for caches that must not grow
 * with the audience (e.g. Twitch account lookups, one entry per chatter ever seen).
 *
 * Contract: at most `maxEntries` entries; setting one more evicts the least recently used (read
 * or written); with `ttlMs`, an entry older than that (on `now()`) reads as absent and is dropped.
 * O(1) per operation (Map insertion order is the recency order).
 */
export interface LruCacheOptions {
  maxEntries: number;
  /** Entries expire this long after they were set (default: never). */
  ttlMs?: number;
  /** Clock for the TTL (ms). */
  now?: () => number;
}

export class LruCache<K, V> {
  private readonly map = new Map<K, { value: V; at: number }>();
  private readonly max: number;

  constructor(private readonly o: LruCacheOptions) {
    if (!Number.isInteger(o.maxEntries) || o.maxEntries < 1) throw new RangeError('LruCache maxEntries must be a positive integer');
    this.max = o.maxEntries;
  }

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    if (this.o.ttlMs !== undefined && this.now() - e.at >= this.o.ttlMs) {
      this.map.delete(key);
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
    this.map.delete(key);
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, { value, at: this.now() });
    while (this.map.size > this.max) this.map.delete(this.map.keys().next().value as K);
  }

  private now(): number {
    return this.o.now ? this.o.now() : Date.now();
  }
}
