/**
 * Winner picks over a draw record: the first winners, and the next pick for a reroll.
 *
 * Contract: positions follow fairness.ts's prefix-stable sequence over the record's frozen list;
 * the next free position is `winners.length + rerolls.length` (each reroll record removed exactly
 * one winner), which is what verify.ts recomputes. Does not: decide eligibility, persist, or talk
 * to anyone.
 */
import { pickSequenceOfWeights } from './fairness.js';
import { pickKey } from './beacon-fairness.js';
import type { FrozenList } from './frozen-list.js';
import type { DrawRecord, FrozenEntrant, RerollRecord, Winner } from './ports.js';

/** The first `count` picks over a frozen list as (entrant, position) pairs. */
/** `key`: the seed (procedure v1) or the draw key derived with the beacon (v2, beacon-fairness.ts). */
export function firstPicks(key: Buffer, frozen: FrozenList, count: number): { entrant: FrozenEntrant; pick: number }[] {
  return pickSequenceOfWeights(key, frozen.digest, frozen.weights, count, frozen.fenwick).map((index, pick) => ({
    entrant: frozen.entrant(index),
    pick,
  }));
}

/** The next unused pick of a closed draw, or undefined when everybody has been picked. */
export function nextPick(
  record: DrawRecord,
  frozen: FrozenList | undefined,
  seed: Buffer,
): { entrant: FrozenEntrant; pick: number } | undefined {
  if (!frozen || !frozen.digest) return undefined;
  const position = record.winners.length + (record.rerolls?.length ?? 0);
  if (position >= frozen.length) return undefined;
  const seq = pickSequenceOfWeights(pickKey(record, seed), frozen.digest, frozen.weights, position + 1, frozen.fenwick);
  const index = seq[position];
  return index === undefined ? undefined : { entrant: frozen.entrant(index), pick: position };
}

/**
 * Replaces the winner with `userId` by the next pick (mutating `record`): the new winner takes the
 * old one's place, gift id and redeem link. Returns undefined (record unchanged) when nobody is left.
 */
export function replaceWinner(
  record: DrawRecord,
  frozen: FrozenList | undefined,
  seed: Buffer,
  userId: string,
  meta: { at: string; reason: RerollRecord['reason']; byUserId?: string; displayNameOf(userId: string): string | undefined; claimPending: boolean },
): { old: Winner; winner: Winner } | undefined {
  const slot = record.winners.findIndex((w) => w.userId === userId);
  if (slot < 0) return undefined;
  const next = nextPick(record, frozen, seed);
  if (!next) return undefined;
  const old = record.winners[slot]!;
  const winner: Winner = {
    userId: next.entrant.userId,
    login: next.entrant.login,
    displayName: meta.displayNameOf(next.entrant.userId) ?? next.entrant.login,
    pick: next.pick,
    ...(old.giftId !== undefined ? { giftId: old.giftId } : {}),
    ...(old.redeemUrl !== undefined ? { redeemUrl: old.redeemUrl } : {}),
    ...(meta.claimPending ? { claimed: false } : {}),
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
  });
  return { old, winner };
}
