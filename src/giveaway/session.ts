/**
 * One draw in memory: its record, its entrants, its secret seed, its timers and its phase in the
 * draw state machine (draw-machine.ts).
 *
 * Contract: `phase` is set only by the runner (runner.ts), synchronously, from the machine's
 * transition table, before any effect awaits; so two triggers (timer and command) can never both
 * act. Listeners (`phaseWatch`) hear every change. `persist` writes
 * snapshots in call order. Entrants are held in columns (the entrant store, entrants/) and the frozen list of
 * a closed draw as a FrozenList beside the record, never inside it: `record.frozenEntrants` of a
 * record handed in (from storage) is moved into `frozen`, so snapshots and events stay small and
 * `persist` passes the list to the repository separately. Does not talk to chat or the shop.
 */
import type { Clock, TimerHandle } from '../shared/clock.js';
import type { DrawPhase } from './draw-machine.js';
import type { ExclusionReason } from './eligibility.js';
import { EntrantTable, FrozenList, packRoles } from './entrants/index.js';
import type { DrawRecord, Entrant, TicketGrant } from './model.js';
import type { DrawRepository } from './ports.js';
import type { Candidate } from './eligibility.js';
import { TicketLedger, type TicketDraw } from './tickets.js';

/** Who hears a session's phase changes (ActiveSessions, while the session is active). */
export interface PhaseWatch {
  phaseChanged(from: DrawPhase, to: DrawPhase): void;
}

export class DrawSession implements TicketDraw {
  readonly record: DrawRecord;
  readonly entrants: EntrantTable;
  /** The frozen entrant list once entries closed (or as loaded from storage). */
  frozen: FrozenList | undefined;
  readonly seed: Buffer;
  #phase: DrawPhase;
  /** Told of every phase change (set by ActiveSessions while the session is active). */
  phaseWatch: PhaseWatch | undefined;
  /** Entrants since the last batched acknowledgement. */
  unacknowledged = 0;
  /** A claim window's unclaimed winners are being replaced (their picks checked with Twitch). */
  replacing = false;
  /** Replacement picks of this draw run one at a time (winner-picks.ts): the last one queued. */
  pickChain: Promise<unknown> = Promise.resolve();
  /** The one deadline of the close (beacon wait and account checks), set when entries close. */
  picksUntil: number | undefined;
  /**
   * A redraw that speaks only when spoken to (giveaway/redraws.ts): no opened line, no reminders,
   * handed back without a line unless someone entered. Set when the draw opens.
   */
  quiet = false;
  /** Tickets granted beyond chat (channel points, bits): refs applied and per-viewer counts (tickets.ts). */
  readonly tickets = new TicketLedger();
  /** Entrants left out of the frozen list, by reason (logged with the picks). */
  excluded: Partial<Record<ExclusionReason, number>> | undefined;
  private readonly timers = new Set<TimerHandle>();
  private saving: Promise<void> = Promise.resolve();

  constructor(record: DrawRecord, seed: Buffer, entrants: Iterable<Entrant> = [], phase: DrawPhase = 'open') {
    this.record = record;
    this.seed = seed;
    this.#phase = phase;
    this.entrants = new EntrantTable(entrants);
    if (this.entrants.size > record.entrants) record.entrants = this.entrants.size;
    if (record.frozenEntrants) {
      this.frozen = FrozenList.fromStored(record.frozenEntrants, record.fairness.entrantsDigest ?? '');
      delete record.frozenEntrants;
    }
  }

  get id(): string {
    return this.record.id;
  }

  get phase(): DrawPhase {
    return this.#phase;
  }

  /** Set by the runner only (see the module contract). */
  set phase(to: DrawPhase) {
    const from = this.#phase;
    if (from === to) return;
    this.#phase = to;
    this.phaseWatch?.phaseChanged(from, to);
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
    return this.counted(this.entrants.add(e));
  }

  /** `addEntrant` from the entrant's fields (EntrantTable.addFields); false when already in. */
  addEntrantFields(
    userId: string,
    login: string,
    displayName: string,
    weight: number,
    roleBits: number,
    subMonths: number,
    enteredAt: number,
    partnerChannelId?: string,
  ): boolean {
    return this.counted(
      this.entrants.addFields(userId, login, displayName, weight, roleBits, subMonths, enteredAt, partnerChannelId),
    );
  }

  private counted(added: boolean): boolean {
    if (!added) return false;
    this.record.entrants = this.entrants.size;
    this.unacknowledged += 1;
    return true;
  }

  /**
   * Applies a ticket grant (tickets.ts): the viewer enters with its tickets when not in yet (true
   * then), else they are added to their weight; the ledger counts it either way. `restoring`: from
   * the journal at restart (not counted as a new entrant to acknowledge).
   */
  applyGrant(g: TicketGrant, restoring = false): boolean {
    this.tickets.apply(g);
    if (g.tickets <= 0) return false;
    if (this.entrants.addTickets(g.userId, g.tickets)) return false;
    // A viewer the draw did not know from chat enters with the roles the grant was decided on (tickets.ts).
    const roles = g.roles
      ? packRoles({ broadcaster: false, vip: false, subMonths: 0, firstMessage: false, ...g.roles })
      : 0;
    const added = this.entrants.addFields(g.userId, g.login, g.displayName, g.tickets, roles, 0, g.at);
    if (!added) return false;
    if (restoring) {
      if (this.entrants.size > this.record.entrants) this.record.entrants = this.entrants.size;
      return true;
    }
    return this.counted(true);
  }

  /** The viewer as this draw knows them (tickets.ts), when they are in. */
  candidate(userId: string): Candidate | undefined {
    return this.entrants.get(userId);
  }

  displayNameOf(userId: string): string | undefined {
    return this.entrants.displayNameOf(userId);
  }

  /** Runs `fn` at `atMs` on `clock` unless the timers are cleared first. */
  schedule(clock: Clock, atMs: number, fn: () => void): void {
    const handle = clock.setTimeout(
      () => {
        this.timers.delete(handle);
        fn();
      },
      Math.max(0, atMs - clock.now()),
    );
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
    const frozen = this.frozen;
    const done = this.saving.then(() => repo.saveDraw(copy, frozen));
    this.saving = done.catch(() => undefined);
    return done;
  }
}

/** A deep copy of a record, for saves and event payloads. */
export function snapshot(record: DrawRecord): DrawRecord {
  return structuredClone(record);
}
