/**
 * Optional warm-up of the account checks (`eligibility.warmUp`): while a draw's entries are open,
 * entrants are looked up in the background (HelixAccountInfo.warm) so the picks at close usually
 * find their answers cached.
 *
 * Contract: `add` only queues a user id (a Set insert: `!enter` never waits for Twitch); the
 * queue holds at most `maxQueued` ids (later ones are dropped). One batch at a time, `batch` ids,
 * `intervalMs` apart (engine clock), and only while the Helix client's shared budget has more
 * than `spareShare` of its bucket left (or is not known yet), so the close always finds budget.
 * `clear` empties the queue (a draw closed: its picks own the budget now); `stop` ends it for good.
 * Does not: decide eligibility, cache "does not follow" (see warm()), or retry.
 */
import type { Logger } from '../logging/index.js';
import type { Clock, TimerHandle } from '../shared/clock.js';
import type { HelixAccountInfo } from './account-info.js';

export interface AccountWarmUpOptions {
  accounts: Pick<HelixAccountInfo, 'warm'>;
  budget: () => { remaining: number; limit: number } | undefined;
  follows: boolean;
  /** Creation dates are needed (an account-age rule). */
  created: boolean;
  clock: Clock;
  logger: Logger;
  /** Ids per batch (default 8). */
  batch?: number;
  /** Gap between batches in ms (default 250). */
  intervalMs?: number;
  /** Share of the bucket kept for the close (default 0.5). */
  spareShare?: number;
  maxQueued?: number;
}

export class AccountWarmUp {
  private readonly queue = new Set<string>();
  private running = false;
  private stopped = false;
  private timer: TimerHandle | undefined;
  private readonly log: Logger;
  /** Ids looked up so far. */
  warmed = 0;

  constructor(private readonly o: AccountWarmUpOptions) {
    this.log = o.logger.child({ module: 'twitch.warm-up' });
  }

  add(userId: string): void {
    if (this.stopped || this.queue.size >= (this.o.maxQueued ?? 20_000)) return;
    this.queue.add(userId);
    if (!this.running && !this.timer) this.schedule(0);
  }

  clear(): void {
    this.queue.clear();
  }

  stop(): void {
    this.stopped = true;
    this.queue.clear();
    this.timer?.cancel();
    this.timer = undefined;
  }

  private schedule(ms: number): void {
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = undefined;
      void this.step();
    }, ms);
  }

  private spare(): boolean {
    const b = this.o.budget();
    return !b || b.remaining > b.limit * (this.o.spareShare ?? 0.5);
  }

  private async step(): Promise<void> {
    if (this.stopped || this.running || this.queue.size === 0) return;
    const interval = this.o.intervalMs ?? 250;
    if (!this.spare()) return this.schedule(interval);
    this.running = true;
    const ids: string[] = [];
    for (const id of this.queue) {
      ids.push(id);
      this.queue.delete(id);
      if (ids.length >= (this.o.batch ?? 8)) break;
    }
    try {
      await this.o.accounts.warm(ids, {
        follows: this.o.follows,
        created: this.o.created,
        until: this.o.clock.now() + 10_000,
      });
      this.warmed += ids.length;
    } catch (err) {
      this.log.debug({ err }, 'warm-up batch failed');
    } finally {
      this.running = false;
    }
    if (!this.stopped && this.queue.size > 0) this.schedule(interval);
  }
}
