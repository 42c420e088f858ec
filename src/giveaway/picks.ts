/**
 * Winner picks over a draw record: the first winners, and the swap of a winner for the next pick.
 *
 * Contract: positions follow fairness/procedure.ts's prefix-stable sequence over the record's frozen list;
 * the next free position is `winners.length + rerolls.length + setAside.length` (each reroll
 * record removed exactly one winner; checked-picks.ts finds the next pick that holds the account
 * rules), which is what fairness/verify.ts recomputes. Does not: decide eligibility, persist, or talk to
 * anyone.
 */
import { pickSequenceOfWeights } from '../fairness/index.js';
import type { FrozenList } from './entrants/index.js';
import type { DrawRecord, FrozenEntrant, RerollRecord, Winner } from './model.js';

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
}

/**
 * Replaces the winner with `userId` by `next` (the next free pick, from checked-picks.ts),
 * mutating `record`: the new winner takes the old one's place, gift id and redeem link. Returns
 * undefined (record unchanged) when there is no next pick or `userId` is no winner.
 */
export function replaceWinner(
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
    ...(old.giftId !== undefined ? { giftId: old.giftId } : {}),
    ...(old.redeemUrl !== undefined ? { redeemUrl: old.redeemUrl } : {}),
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
  });
  return { old, winner };
}
