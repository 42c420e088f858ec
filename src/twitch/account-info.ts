/**
 * AccountInfoPort over Helix: creation dates from `GET /users` (100 ids per call; only when asked,
 * i.e. with an account-age rule; a failed call leaves that batch unchecked) and follow dates
 * from `GET /channels/followers?user_id=` (one per account, 8 at a time), for the few picks the
 * draw asks about (never the whole crowd), with bounded caches
 * (least recently used evicted past `maxCached` entries each, default 50 000): creation dates
 * never change and stay until evicted, follow answers for `followTtlMs` (default 10 min). One
 * lookup answers from what it fetched itself, so a batch larger than the cache still works.
 * Never throws: a failed lookup puts the ids it could not answer in `unchecked` with one sentence
 * saying why (the account rules decide what that means). Calls are not retried here (the Helix
 * client does that within its deadline, and within the caller's `until`; the client's one rate
 * budget is shared by every lookup). Each answer carries when Twitch gave it (`answeredAt`, also
 * for cached answers).
 */
import type { AccountInfo, AccountLookup } from '../giveaway/model.js';
import type { AccountInfoPort } from '../giveaway/ports.js';
import type { Logger } from '../logging/index.js';
import type { Clock } from '../shared/clock.js';
import { LruCache } from '../shared/lru-cache.js';
import type { HelixClient } from './helix.js';

export interface HelixAccountInfoOptions {
  helix: Pick<HelixClient, 'users' | 'followedAt'>;
  /** The channel's user id (the chat room id), when known. */
  broadcasterId: () => string | undefined;
  clock: Clock;
  logger: Logger;
  followTtlMs?: number;
  /** Largest number of accounts each cache keeps (default 50 000). */
  maxCached?: number;
}

export class HelixAccountInfo implements AccountInfoPort {
  private readonly created: LruCache<string, { createdAt: number; answeredAt: number }>;
  /** The follow date, or null: does not follow; with when Twitch said so. */
  private readonly follows: LruCache<string, { at: number | null; answeredAt: number }>;
  private readonly log: Logger;

  constructor(private readonly o: HelixAccountInfoOptions) {
    this.log = o.logger.child({ module: 'twitch.accounts' });
    const maxEntries = o.maxCached ?? 50_000;
    const now = () => o.clock.now();
    this.created = new LruCache({ maxEntries, now });
    this.follows = new LruCache({ maxEntries, now, ttlMs: o.followTtlMs ?? 600_000 });
  }

  /**
   * Background warm-up (warm-up.ts): looks `userIds` up and caches the answers for the picks at
   * close, giving up at `until`. Only "follows" answers are kept from it, never "does not follow"
   * (a viewer may follow during the entry window; the close asks again). Never throws.
   */
  async warm(userIds: readonly string[], needs: { follows: boolean; created: boolean; until: number }): Promise<void> {
    const ids = userIds.filter(
      (id) =>
        (needs.created && this.created.get(id) === undefined) || (needs.follows && this.follows.get(id) === undefined),
    );
    if (ids.length === 0) return;
    try {
      const missing = needs.created ? ids.filter((id) => this.created.get(id) === undefined) : [];
      if (missing.length) {
        const users = await this.o.helix.users(missing, needs.until);
        const answeredAt = this.o.clock.now();
        for (const u of users) this.created.set(u.id, { createdAt: u.createdAt, answeredAt });
      }
      const b = this.o.broadcasterId();
      if (!needs.follows || !b) return;
      await Promise.all(
        ids.map(async (id) => {
          const at = await this.o.helix.followedAt(b, id, needs.until);
          if (at !== undefined) this.follows.set(id, { at, answeredAt: this.o.clock.now() });
        }),
      );
    } catch (err) {
      this.log.debug({ err }, 'warm-up lookup failed (the close will ask again)');
    }
  }

  /** Accounts held in the caches (creation dates, follow answers). */
  cached(): { created: number; follows: number } {
    return { created: this.created.size, follows: this.follows.size };
  }

  async lookup(
    userIds: readonly string[],
    needs: { follows: boolean; created?: boolean; until?: number },
  ): Promise<AccountLookup> {
    const ids = [...new Set(userIds)];
    const unchecked = new Set<string>();
    let problem: string | undefined;
    const until = needs.until;
    const wantCreated = needs.created ?? true;
    // This lookup's answers: the caches may evict some of them before the end of a large batch.
    const created = new Map<string, { createdAt: number; answeredAt: number }>();
    const follows = new Map<string, { at: number | null; answeredAt: number }>();
    const missing: string[] = [];
    if (wantCreated) {
      for (const id of ids) {
        const at = this.created.get(id);
        if (at === undefined) missing.push(id);
        else created.set(id, at);
      }
    }
    if (missing.length > 0) {
      try {
        const users = await this.o.helix.users(missing, until);
        const answeredAt = this.o.clock.now();
        for (const u of users) {
          const c = { createdAt: u.createdAt, answeredAt };
          created.set(u.id, c);
          this.created.set(u.id, c);
        }
      } catch (err) {
        problem = `Twitch API: ${(err as Error).message}`;
        for (const id of missing) unchecked.add(id);
      }
    }
    if (needs.follows) {
      const b = this.o.broadcasterId();
      const todo: string[] = [];
      for (const id of ids) {
        if (unchecked.has(id)) continue;
        const f = this.follows.get(id);
        if (f === undefined) todo.push(id);
        else follows.set(id, f);
      }
      if (!b) {
        problem ??= 'the channel id is not known yet';
        for (const id of todo) unchecked.add(id);
      } else {
        let next = 0;
        const worker = async () => {
          while (next < todo.length) {
            const id = todo[next++]!;
            try {
              const f = { at: (await this.o.helix.followedAt(b, id, until)) ?? null, answeredAt: this.o.clock.now() };
              follows.set(id, f);
              this.follows.set(id, f);
            } catch (err) {
              problem ??= `Twitch API: ${(err as Error).message}`;
              unchecked.add(id);
            }
          }
        };
        await Promise.all(Array.from({ length: Math.min(8, todo.length) }, worker));
      }
    }
    const info = new Map<string, AccountInfo>();
    for (const id of ids) {
      if (unchecked.has(id)) continue;
      const c = created.get(id);
      if (wantCreated && c === undefined) {
        unchecked.add(id); // Helix does not know the id (deleted or banned account)
        problem ??= 'Twitch does not know some accounts';
        continue;
      }
      const f = needs.follows ? follows.get(id) : undefined;
      info.set(id, {
        ...(c ? { createdAt: c.createdAt } : {}),
        answeredAt: Math.max(f?.answeredAt ?? 0, c?.answeredAt ?? 0),
        ...(f && f.at !== null ? { followedAt: f.at } : {}),
      });
    }
    if (unchecked.size > 0)
      this.log.warn({ unchecked: unchecked.size, problem }, 'some entrants could not be checked with Twitch');
    return { info, unchecked: [...unchecked], ...(problem ? { problem } : {}) };
  }
}
