/**
 * Winners from the provably fair pick sequence (fairness/procedure.ts) over a draw's frozen list:
 * the first picks, the picks that hold the account rules, and a winner replaced by the next pick.
 *
 * Contract: positions follow the prefix-stable sequence; the next free position is
 * `winners + rerolls + setAside` (`nextPosition`: each reroll removed exactly one winner), which is
 * what fairness/verify.ts recomputes. `takeCheckedPicks` walks the sequence from a position, asks
 * the account gate about the next few picks at a time, sets aside each pick that fails a rule (with
 * its reason and the time of Twitch's answer) and keeps the others, until `wanted` picks passed,
 * the list is exhausted, or the deadline (`picksDeadline`) comes: the passed picks are exactly the
 * first `wanted` picks of the sequence that pass, in order, so the winners have the distribution of
 * a draw among the entrants who pass, and verify replays them from the list, the key and the
 * recorded set-asides. Picks looked up ahead but not needed stay free. Without an active gate it is
 * the plain sequence (same positions as `firstPicks`); a pick unanswered at the deadline ends the
 * walk (`outOfTime`) and the winners decided so far stand. `replaceWinner` swaps one winner for a
 * given pick (mutating the record: the new winner takes the old one's place, gift id and link);
 * `replaceWinnerChecked` finds that pick under the rules, serialised per draw, appending its
 * set-asides and saying them in chat through the gate; `replaceWinnerPlain` is its synchronous form
 * without rules. Does not: persist, or decide eligibility (account-rules.ts does).
 */
import type { AccountGate, PickVerdict } from './account-rules.js';
import { pickKey, pickSequenceOfWeights } from '../fairness/index.js';
import type { FrozenList } from './entrants/index.js';
import type { DrawRecord, FrozenEntrant, RerollRecord, SetAsidePick, Winner } from './model.js';
import type { DrawSession } from './session.js';

/** Time kept free before Fourthwall's deadline for the finish call after the picks. */
const PICKS_RESERVE_MS = 15_000;

/** Largest batch of picks looked up together (one GET /users). */
const MAX_BATCH = 100;

interface CheckedPick {
  entrant: FrozenEntrant;
  pick: number;
  accountCheck?: Winner['accountCheck'];
}

export interface CheckedPicks {
  picks: CheckedPick[];
  setAside: SetAsidePick[];
  /** Picks checked with Twitch (passed or set aside by a rule). */
  checked: number;
  /** Picks whose lookup failed (let in or set aside by `uncheckable`). */
  unchecked: number;
  problem?: string;
  /** The deadline came before `wanted` picks were decided. */
  outOfTime: boolean;
}

/** The first `count` picks over a frozen list as (entrant, position) pairs. */
/** `key`: the seed (procedure v1) or the draw key derived with the beacon (v2, fairness/beacon-key.ts). */
export function firstPicks(key: Buffer, frozen: FrozenList, count: number): { entrant: FrozenEntrant; pick: number }[] {
  return pickSequenceOfWeights(key, frozen.digest, frozen.weights, count, frozen.fenwick).map((index, pick) => ({
    entrant: frozen.entrant(index),
    pick,
  }));
}

/** What a replacement records besides the pick. */
export interface ReplaceMeta {
  at: string;
  reason: RerollRecord['reason'];
  byUserId?: string;
  displayNameOf(userId: string): string | undefined;
  claimPending: boolean;
  /**
   * A new link for the replacement (the old one had gone out, giveaway/reroll.ts): the new winner
   * gets it, and the reroll record keeps the old winner's link as theirs (`kept`).
   */
  newLink?: { giftId: string; redeemUrl: string };
}

/**
 * Replaces the winner with `userId` by `next` (the next free pick: replaceWinnerChecked, replaceWinnerPlain),
 * mutating `record`: the new winner takes the old one's place and, unless `meta.newLink` gives
 * them their own, the old one's gift id and redeem link. Returns undefined (record unchanged) when
 * there is no next pick or `userId` is no winner.
 */
function replaceWinner(
  record: DrawRecord,
  next: { entrant: FrozenEntrant; pick: number; accountCheck?: Winner['accountCheck'] } | undefined,
  userId: string,
  meta: ReplaceMeta,
): { old: Winner; winner: Winner } | undefined {
  const slot = record.winners.findIndex((w) => w.userId === userId);
  if (slot < 0) return undefined;
  if (!next) return undefined;
  const old = record.winners[slot]!;
  const winner: Winner = {
    userId: next.entrant.userId,
    login: next.entrant.login,
    displayName: meta.displayNameOf(next.entrant.userId) ?? next.entrant.login,
    pick: next.pick,
    ...(meta.newLink ? meta.newLink : {}),
    ...(!meta.newLink && old.giftId !== undefined ? { giftId: old.giftId } : {}),
    ...(!meta.newLink && old.redeemUrl !== undefined ? { redeemUrl: old.redeemUrl } : {}),
    ...(meta.claimPending ? { claimed: false } : {}),
    ...(next.accountCheck ? { accountCheck: next.accountCheck } : {}),
  };
  record.winners[slot] = winner;
  (record.rerolls ??= []).push({
    at: meta.at,
    replacedUserId: old.userId,
    replacedLogin: old.login,
    reason: meta.reason,
    ...(meta.byUserId !== undefined ? { byUserId: meta.byUserId } : {}),
    newUserId: winner.userId,
    pick: winner.pick,
    ...(meta.newLink
      ? {
          kept: {
            ...(old.giftId !== undefined ? { giftId: old.giftId } : {}),
            ...(old.redeemUrl !== undefined ? { redeemUrl: old.redeemUrl } : {}),
          },
        }
      : {}),
  });
  return { old, winner };
}

export interface CheckedPicksInput {
  key: Buffer;
  frozen: FrozenList;
  /** First position of the sequence to take. */
  from: number;
  wanted: number;
  gate?: AccountGate;
  /** Deadline on the engine clock. */
  until: number;
  now: () => number;
}

/**
 * The deadline of a draw's picks: Fourthwall's (entry window + 60 s) minus PICKS_RESERVE_MS for a
 * gift draw; for other kinds (no Fourthwall deadline) the same span counted from now when later.
 */
export function picksDeadline(s: DrawSession, now: number): number {
  const fourthwall = s.fourthwallDeadlineMs;
  if (s.record.kind === 'gift-draw') return fourthwall - PICKS_RESERVE_MS;
  return Math.max(fourthwall, now + 60_000) - PICKS_RESERVE_MS;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Walks the sequence (see the module contract). */
export async function takeCheckedPicks(o: CheckedPicksInput): Promise<CheckedPicks> {
  const { frozen, key } = o;
  const n = frozen.length;
  const out: CheckedPicks = { picks: [], setAside: [], checked: 0, unchecked: 0, outOfTime: false };
  if (!o.gate?.active) {
    const upto = Math.min(n, o.from + Math.max(0, o.wanted));
    if (upto > o.from) {
      const seq = pickSequenceOfWeights(key, frozen.digest, frozen.weights, upto, frozen.fenwick);
      for (let p = o.from; p < upto; p++) out.picks.push({ entrant: frozen.entrant(seq[p]!), pick: p });
    }
    return out;
  }
  let pos = o.from;
  let passed = 0;
  let decided = 0;
  walk: while (out.picks.length < o.wanted && pos < n) {
    if (o.now() >= o.until) {
      out.outOfTime = true;
      break;
    }
    const need = o.wanted - out.picks.length;
    // Look ahead as far as the pass rate seen so far says is needed (prior: one in two passes).
    const rate = (passed + 1) / (decided + 2);
    const batch = Math.min(n - pos, MAX_BATCH, Math.max(need, Math.ceil(need / rate)));
    const seq = pickSequenceOfWeights(key, frozen.digest, frozen.weights, pos + batch, frozen.fenwick);
    const candidates = seq.slice(pos, pos + batch).map((i) => frozen.entrant(i));
    const { verdicts, problem } = await o.gate.check(
      candidates.map((c) => c.userId),
      o.until,
    );
    for (const c of candidates) {
      if (out.picks.length >= o.wanted) break walk;
      const v: PickVerdict | undefined = verdicts.get(c.userId);
      if (!v) {
        out.outOfTime = true;
        break walk;
      }
      decided++;
      const failedLookup = v.ok ? v.result === 'unchecked' : v.reason === 'unchecked';
      if (failedLookup) {
        out.unchecked++;
        if (problem) out.problem ??= problem;
      } else out.checked++;
      if (v.ok) {
        passed++;
        out.picks.push({ entrant: c, pick: pos, accountCheck: { result: v.result, at: iso(v.at) } });
      } else {
        out.setAside.push({ pick: pos, userId: c.userId, login: c.login, reason: v.reason, at: iso(v.at) });
      }
      pos++;
    }
  }
  return out;
}

/** The next free position of a closed draw's sequence: every pick taken so far is a winner, a rerolled-away winner or set aside. */
/** True while the draw's pick sequence has a pick left to replace a winner with (its frozen list known). */
export function hasNextPick(s: DrawSession): boolean {
  return !!s.frozen?.digest && nextPosition(s.record) < s.frozen.length;
}

export function nextPosition(record: DrawRecord): number {
  return record.winners.length + (record.rerolls?.length ?? 0) + (record.setAside?.length ?? 0);
}

/** replaceWinner with the plain next pick (no account rules: nothing to look up, so synchronous). */
export function replaceWinnerPlain(
  s: DrawSession,
  userId: string,
  meta: ReplaceMeta,
): { old: Winner; winner: Winner } | undefined {
  const r = s.record;
  const frozen = s.frozen;
  if (!frozen || !frozen.digest) return undefined;
  const from = nextPosition(r);
  if (from >= frozen.length) return undefined;
  const seq = pickSequenceOfWeights(pickKey(r, s.seed), frozen.digest, frozen.weights, from + 1, frozen.fenwick);
  return replaceWinner(r, { entrant: frozen.entrant(seq[from]!), pick: from }, userId, meta);
}

/**
 * Replaces the winner `userId` of a closed draw by its next pick that holds the account rules (a
 * reroll or a claim-window replacement): the pick's set-asides are appended to the record's
 * `setAside`, then replaceWinner swaps the winner; undefined (the winner kept) when
 * nobody is left, the deadline came first, the winner is no longer one, or `still()` turned false
 * while the pick was checked. One at a time per draw: the next caller starts once this one's swap
 * is applied. Picks set aside or unchecked are said in chat by the gate (one line).
 */
export function replaceWinnerChecked(
  s: DrawSession,
  userId: string,
  o: { gate: AccountGate | undefined; now: () => number; meta: ReplaceMeta; still?: () => boolean },
): Promise<{ old: Winner; winner: Winner } | undefined> {
  const run = async () => {
    const r = s.record;
    const frozen = s.frozen;
    if (!frozen || !frozen.digest || !r.winners.some((w) => w.userId === userId)) return undefined;
    const from = nextPosition(r);
    if (from >= frozen.length) return undefined;
    const got = await takeCheckedPicks({
      key: pickKey(r, s.seed),
      frozen,
      from,
      wanted: 1,
      ...(o.gate ? { gate: o.gate } : {}),
      until: picksDeadline(s, o.now()),
      now: o.now,
    });
    if (got.setAside.length) (r.setAside ??= []).push(...got.setAside);
    if (o.gate?.active && (got.setAside.length > 0 || got.unchecked > 0 || got.picks.length === 0)) {
      const unfilled = got.picks.length
        ? undefined
        : { count: 1, of: 1, prize: r.offer.name, why: got.outOfTime ? ('time' as const) : ('exhausted' as const) };
      o.gate.report(r.id, {
        setAside: got.setAside,
        checked: got.checked,
        unchecked: got.unchecked,
        ...(got.problem ? { problem: got.problem } : {}),
        ...(unfilled ? { unfilled } : {}),
      });
    }
    if (o.still && !o.still()) return undefined;
    return replaceWinner(r, got.picks[0], userId, o.meta);
  };
  const mine = s.pickChain.then(run, run);
  s.pickChain = mine.catch(() => undefined);
  return mine;
}
