/**
 * One draw in memory: its record, its entrants, its secret seed, its timers and where it is in the
 * state machine.
 *
 *   open --close--> picking --> [claim] --> finalizing --> done
 *     \--cancel (link giveaways, before links exist)-------------> done
 *
 * Contract: `phase` only moves forward and every transition is made synchronously by the caller
 * before any await, so two triggers (timer and command) can never both act. `persist` writes
 * snapshots in call order. Does not talk to chat or the shop.
 */
import type { Clock, TimerHandle } from '../shared/clock.js';
import { snapshot } from './context.js';
import type { DrawRecord, DrawRepository, Entrant } from './ports.js';

export type SessionPhase = 'open' | 'picking' | 'claim' | 'finalizing' | 'done';

export class DrawSession {
  readonly record: DrawRecord;
  readonly entrants = new Map<string, Entrant>();
  readonly seed: Buffer;
  phase: SessionPhase;
  /** Entrants since the last batched acknowledgement. */
  unacknowledged = 0;
  private readonly timers = new Set<TimerHandle>();
  private saving: Promise<void> = Promise.resolve();

  constructor(record: DrawRecord, seed: Buffer, entrants: Iterable<Entrant> = [], phase: SessionPhase = 'open') {
    this.record = record;
    this.seed = seed;
    this.phase = phase;
    for (const e of entrants) if (!this.entrants.has(e.userId)) this.entrants.set(e.userId, e);
    if (this.entrants.size > record.entrants) record.entrants = this.entrants.size;
  }

  get id(): string {
    return this.record.id;
  }

  get closesAtMs(): number {
    return Date.parse(this.record.closesAt);
  }

  /** Fourthwall's hard deadline of a gift draw: duration plus one minute. */
  get fourthwallDeadlineMs(): number {
    return this.closesAtMs + 60_000;
  }

  /** Adds an entrant once per user id; false when already in. */
  addEntrant(e: Entrant): boolean {
    if (this.entrants.has(e.userId)) return false;
    this.entrants.set(e.userId, e);
    this.record.entrants = this.entrants.size;
    this.unacknowledged += 1;
    return true;
  }

  displayNameOf(userId: string): string | undefined {
    return this.entrants.get(userId)?.displayName;
  }

  /** Runs `fn` at `atMs` on `clock` unless the timers are cleared first. */
  schedule(clock: Clock, atMs: number, fn: () => void): void {
    const handle = clock.setTimeout(() => {
      this.timers.delete(handle);
      fn();
    }, Math.max(0, atMs - clock.now()));
    this.timers.add(handle);
  }

  clearTimers(): void {
    for (const t of this.timers) t.cancel();
    this.timers.clear();
  }

  /** Moves the seed into the record's public fairness data (once entrants are frozen). */
  reveal(): void {
    this.record.fairness.seed = this.seed.toString('hex');
    delete this.record.pendingSeed;
  }

  /** Saves a snapshot of the record after every earlier save; rejects if this save fails. */
  persist(repo: DrawRepository): Promise<void> {
    const copy = snapshot(this.record);
    const done = this.saving.then(() => repo.saveDraw(copy));
    this.saving = done.catch(() => undefined);
    return done;
  }
}
