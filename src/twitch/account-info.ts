/**
 * AccountInfoPort over Helix: creation dates from `GET /users` (100 ids per call) and follow dates
 * from `GET /channels/followers?user_id=` (one per entrant, 4 at a time), with a cache: creation
 * dates never change and are kept for the process's life, follow answers for `followTtlMs`
 * (default 10 min). Never throws: a failed lookup puts the ids it could not answer in `unchecked`
 * with one sentence saying why (the account rules decide what that means).
 */
import type { AccountInfo, AccountInfoPort, AccountLookup } from '../giveaway/ports.js';
import type { Logger } from '../logging/index.js';
import type { Clock } from '../shared/clock.js';
import type { HelixClient } from './helix.js';

export interface HelixAccountInfoOptions {
  helix: Pick<HelixClient, 'users' | 'followedAt'>;
  /** The channel's user id (the chat room id), when known. */
  broadcasterId: () => string | undefined;
  clock: Clock;
  logger: Logger;
  followTtlMs?: number;
}

export class HelixAccountInfo implements AccountInfoPort {
  private readonly created = new Map<string, number>();
  private readonly follows = new Map<string, { at: number | undefined; checked: number }>();
  private readonly log: Logger;

  constructor(private readonly o: HelixAccountInfoOptions) {
    this.log = o.logger.child({ module: 'twitch.accounts' });
  }

  async lookup(userIds: readonly string[], needs: { follows: boolean }): Promise<AccountLookup> {
    const ids = [...new Set(userIds)];
    const unchecked = new Set<string>();
    let problem: string | undefined;
    const missing = ids.filter((id) => !this.created.has(id));
    if (missing.length > 0) {
      try {
        for (const u of await this.o.helix.users(missing)) this.created.set(u.id, u.createdAt);
      } catch (err) {
        problem = `Twitch API: ${(err as Error).message}`;
        for (const id of missing) unchecked.add(id);
      }
    }
    if (needs.follows) {
      const b = this.o.broadcasterId();
      const ttl = this.o.followTtlMs ?? 600_000;
      const now = this.o.clock.now();
      const todo = ids.filter((id) => !unchecked.has(id) && !(this.follows.has(id) && now - this.follows.get(id)!.checked < ttl));
      if (!b) {
        problem ??= 'the channel id is not known yet';
        for (const id of todo) unchecked.add(id);
      } else {
        let next = 0;
        const worker = async () => {
          while (next < todo.length) {
            const id = todo[next++]!;
            try {
              this.follows.set(id, { at: await this.o.helix.followedAt(b, id), checked: this.o.clock.now() });
            } catch (err) {
              problem ??= `Twitch API: ${(err as Error).message}`;
              unchecked.add(id);
            }
          }
        };
        await Promise.all([worker(), worker(), worker(), worker()]);
      }
    }
    const info = new Map<string, AccountInfo>();
    for (const id of ids) {
      if (unchecked.has(id)) continue;
      const createdAt = this.created.get(id);
      if (createdAt === undefined) {
        unchecked.add(id); // Helix does not know the id (deleted or banned account)
        problem ??= 'Twitch does not know some accounts';
        continue;
      }
      const f = needs.follows ? this.follows.get(id)?.at : undefined;
      info.set(id, { createdAt, ...(f !== undefined ? { followedAt: f } : {}) });
    }
    if (unchecked.size > 0) this.log.warn({ unchecked: unchecked.size, problem }, 'some entrants could not be checked with Twitch');
    return { info, unchecked: [...unchecked], ...(problem ? { problem } : {}) };
  }
}
