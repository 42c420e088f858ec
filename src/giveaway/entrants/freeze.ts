/**
 * Freezing an open draw's entrants at close, at any size, without blocking the event loop:
 * eligibility over the entrant table's columns, then the canonical list of the eligible rows (over
 * the table's columns when every id is a decimal one, canonical-table.ts; else fairness/canonical.ts), all
 * in slices that yield to I/O.
 *
 * Contract: the result is what applyEligibility + freezeEntrants give for the same entrants (same
 * eligible set, same order, same digest, same rules record), computed without one object per
 * entrant. Throws FairnessError on invalid entrants. Does not: reveal the seed, pick winners or
 * persist.
 */
import {
  canonicalise,
  fenwickSteps,
  runSliced,
  type Canonical,
  type ListRows,
  type Steps,
} from '../../fairness/index.js';
import { canonicaliseTable } from './canonical-table.js';
import { excluder, rulesInForce, type ChannelIdentity, type ExclusionReason } from '../eligibility.js';
import type { EntrantTable } from './entrant-table.js';
import { surelyEligibleRows } from './eligibility-columns.js';
import { FrozenList } from './frozen-list.js';
import type { GiveawaySettings } from '../settings.js';
import { unpackRoles } from './entrant-table.js';

export interface FreezeResult {
  frozen: FrozenList;
  excluded: Partial<Record<ExclusionReason, number>>;
  /** For DrawRecord.rules. */
  rules: Record<string, unknown>;
}

const CHUNK = 4096;

/** Rows of `table` as ListRows: positions into a row list, or (without one) table rows. */
function rowsOf(table: EntrantTable, rows?: Uint32Array): ListRows {
  if (!rows) {
    return {
      length: table.size,
      userId: (row) => table.userIdAt(row),
      login: (row) => table.loginAt(row),
      weight: (row) => table.ticketsAt(row),
    };
  }
  return {
    length: rows.length,
    userId: (i) => table.userIdAt(rows[i]!),
    login: (i) => table.loginAt(rows[i]!),
    weight: (i) => table.ticketsAt(rows[i]!),
  };
}

type Why = ReturnType<typeof excluder>;

/**
 * Eligibility of rows [start, end) (a plain function: V8 optimises loops here, not inside the
 * generator): eligible rows go to `eligible` from `count`; returns the new count.
 */
function sieve(
  table: EntrantTable,
  sure: (row: number) => boolean,
  why: Why,
  excluded: Partial<Record<ExclusionReason, number>>,
  eligible: Uint32Array,
  count: number,
  start: number,
  end: number,
): number {
  // One reused candidate; roles are rebuilt only when a row's flags differ from the last row's.
  let bits = -1;
  let months = -1;
  const candidate = { userId: '', login: '', roles: unpackRoles(0, 0) };
  for (let row = start; row < end; row++) {
    if (sure(row)) {
      eligible[count++] = row;
      continue;
    }
    const b = table.roleBitsAt(row);
    const m = table.subMonthsAt(row);
    if (b !== bits || m !== months) {
      candidate.roles = unpackRoles(b, m);
      bits = b;
      months = m;
    }
    candidate.userId = table.userIdAt(row);
    candidate.login = table.loginAt(row);
    const reason = why(candidate);
    if (reason) excluded[reason] = (excluded[reason] ?? 0) + 1;
    else eligible[count++] = row;
  }
  return count;
}

/** The freeze as steps (see runSliced / runToEnd in fairness/steps.ts). */
function* freezeSteps(
  table: EntrantTable,
  settings: Pick<GiveawaySettings, 'eligibility' | 'luck' | 'tickets'>,
  id: ChannelIdentity,
  recentWinners: ReadonlySet<string>,
): Steps<FreezeResult> {
  const why = excluder(settings.eligibility, id, recentWinners);
  const sure = surelyEligibleRows(table, settings.eligibility, id, recentWinners);
  const excluded: Partial<Record<ExclusionReason, number>> = {};
  const n = table.size;
  const eligible = new Uint32Array(n);
  let count = 0;
  for (let start = 0; start < n; start += CHUNK) {
    count = sieve(table, sure, why, excluded, eligible, count, start, Math.min(n, start + CHUNK));
    yield;
  }
  const rows = eligible.subarray(0, count);
  const rules = rulesInForce(settings, excluded);
  // Decimal ids (Twitch's): over the table's columns, `order` in table rows.
  const columnar = yield* canonicaliseTable(table, rows);
  const source = columnar ? rowsOf(table) : rowsOf(table, rows);
  const canonical: Canonical = columnar ?? (yield* canonicalise(source));
  // The picks' weight tree, built here in slices rather than in one loop when picking.
  const fenwick = yield* fenwickSteps(canonical.weights);
  return { frozen: FrozenList.of(source, canonical, fenwick), excluded, rules };
}

/** Freezes `table` at close on the event loop, yielding whenever a slice has run `budgetMs`. */
export function freezeEntrantTable(
  table: EntrantTable,
  settings: Pick<GiveawaySettings, 'eligibility' | 'luck' | 'tickets'>,
  id: ChannelIdentity,
  recentWinners: ReadonlySet<string>,
  budgetMs?: number,
): Promise<FreezeResult> {
  return runSliced(freezeSteps(table, settings, id, recentWinners), budgetMs);
}
