/**
 * The entrant store's interface: one draw's entrants while it is open (`EntrantTable`: one row per
 * distinct user id, in entry order, never removed; tickets granted later in their own column),
 * their freeze at close, in slices, into the canonical list the picks run on (`freezeEntrantTable`
 * -> `FrozenList`, with the exclusion counts and the rules record), and the journal line each
 * entrant is saved as (`LineBytes`, `entrantOfLine`). Nothing outside entrants/ imports its other
 * files (eslint.config.mjs; tests may).
 *
 * Inside, sized for a 1M-entrant close and a chat flood that leaves the garbage collector nothing
 * to do (bench rows e2e.close1M, engine.heapPerEntrant, e2e.chat.heapPerEntrant through the socket):
 *   entrant-table.ts        the columns: typed arrays and byte buffers, no object per entrant
 *   id-index.ts             user id -> row, an open-addressing hash on the ids' digit keys
 *   eligibility-columns.ts  a pre-check of eligibility over the columns (strings read only if needed)
 *   canonical-table.ts      the canonical list over the columns: exactly src/fairness's canonicalise
 *   freeze.ts               eligibility, then the canonical list, in slices
 *   frozen-list.ts          the frozen list: positions into the rows it was frozen from
 *   journal-line.ts         the journal line: compact JSON arrays written byte by byte
 *   owned-string.ts         copies of kept strings that do not pin the chat frame they came from
 * Does not: decide eligibility rules (../eligibility.ts), pick winners (src/fairness/,
 * winner-picks.ts), write files (storage/) or know about draws beyond their entrants.
 */
import type { ChannelIdentity } from '../eligibility.js';
import type { EntrantRows } from '../entrant-rows.js';
import type { Entrant } from '../model.js';
import type { GiveawaySettings } from '../settings.js';
import { EntrantTable as Table } from './entrant-table.js';
import { freezeEntrantTable as freezeTable, type FreezeResult } from './freeze.js';

export { packRoles } from './entrant-table.js';
export { FrozenList } from './frozen-list.js';
export { LineBytes, entrantOfLine } from './journal-line.js';

/** One draw's entrants: what the flows and views may do with them (see the module header). */
export interface EntrantTable extends EntrantRows {
  /** Distinct entrants so far. */
  readonly size: number;
  has(userId: string): boolean;
  /** Adds an entrant once per user id; false when that user id is already in. */
  add(e: Entrant): boolean;
  /** `add` from the entrant's fields (roleBits as packRoles makes them): the `!enter` path; `partnerChannelId` for a Shared Chat partner viewer. */
  addFields(
    userId: string,
    login: string,
    displayName: string,
    weight: number,
    roleBits: number,
    subMonths: number,
    enteredAt: number,
    partnerChannelId?: string,
  ): boolean;
  /** Entrants by the Shared Chat partner channel they entered from (this channel's viewers are not in it). */
  partnerCounts(): Map<string, number>;
  /** Tickets granted after entry (channel points, bits); false when that user id is not in. */
  addTickets(userId: string, tickets: number): boolean;
  /** A row's tickets: its weight as added plus later grants (what the freeze uses). */
  ticketsAt(row: number): number;
  /** The entrant with this user id, materialised; undefined when not in. */
  get(userId: string): Entrant | undefined;
  /** Every entrant in entry order, one object at a time (read-only views). */
  values(): IterableIterator<Entrant>;
  displayNameOf(userId: string): string | undefined;
  /** The first entrant whose login equals `login` (case-insensitive). */
  findByLogin(login: string): Entrant | undefined;
}

/** A new, empty store (or one holding `entrants`, a restored draw's journal). */
export const EntrantTable: new (entrants?: Iterable<Entrant>) => EntrantTable = Table;

/** Freezes `entrants` at close on the event loop, yielding whenever a slice has run `budgetMs`. */
export function freezeEntrantTable(
  entrants: EntrantTable,
  settings: Pick<GiveawaySettings, 'eligibility' | 'luck' | 'tickets'>,
  id: ChannelIdentity,
  recentWinners: ReadonlySet<string>,
  budgetMs?: number,
): Promise<FreezeResult> {
  if (!(entrants instanceof Table))
    throw new TypeError('freezeEntrantTable: the entrants must come from new EntrantTable()');
  return freezeTable(entrants, settings, id, recentWinners, budgetMs);
}
