/**
 * Independent re-check of a stored draw: recomputes the pick sequence from the revealed seed and
 * the frozen entrant list (see procedure.ts for the procedure) and compares it with the history.
 * A `giftdrop-hmac-sha256-drand-v2` draw must also carry a valid beacon round: a known chain, a
 * BLS signature that verifies, randomness = SHA-256(signature), and the first round published
 * after the list was frozen (beacon-check.ts); its picks then run with the derived key.
 *
 * Contract: a record verifies when its seed is revealed, SHA-256(seed) equals the announced
 * commitment, the digest of its frozen entrant list equals the recorded entrants digest, and the
 * picks the history shows (current winners at their `pick` positions, plus every winner that was
 * rerolled away) are exactly the first L picks of the sequence, L = current winners + reroll records
 * (each reroll record removed exactly one winner) + set-aside picks (`setAside`: picks the account
 * rules skipped, each at its recorded position and naming the entrant the sequence gives there);
 * and the reroll log is consistent with it: reroll k took the (current winners + k)-th pick that was
 * not set aside, names that pick as the replacement when it names one, and replaced someone drawn
 * at an earlier pick. Records without `setAside` (no account rules, or older ones) verify as before.
 * Does not: read storage, trust the record's own ordering of entrants (it re-canonicalises them),
 * or judge eligibility rules (those are recorded, not recomputed: a set-aside's reason rests on
 * Twitch's answer at the recorded time).
 */
import { timingSafeEqual } from 'node:crypto';
import type { VerifiableDraw } from './record.js';
import { commitmentOf, freezeEntrants, pickSequence } from './procedure.js';
import { FAIRNESS_ALGORITHM_V2, KNOWN_ALGORITHMS, pickKey } from './beacon-key.js';
import { checkBeaconRound } from './beacon-check.js';

/** The outcome of verifyDraw: on success, the current winners' logins in pick order. */
export type VerifyResult = { ok: true; winners: string[] } | { ok: false; reason: string };

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Recomputes the winners of `record` from its revealed seed and frozen entrants. */
export function verifyDraw(record: VerifiableDraw): VerifyResult {
  const fairness = record.fairness;
  if (!fairness || typeof fairness.commitment !== 'string') {
    return { ok: false, reason: 'record has no fairness commitment' };
  }
  if (!KNOWN_ALGORITHMS.includes(fairness.algorithm)) {
    return { ok: false, reason: `unknown fairness algorithm ${JSON.stringify(fairness.algorithm)}` };
  }
  if (!fairness.seed) {
    return { ok: false, reason: `seed not revealed (draw status is ${record.status})` };
  }
  if (!/^[0-9a-f]{64}$/.test(fairness.seed)) {
    return { ok: false, reason: 'seed is not 64 lower-case hex characters' };
  }
  const seed = Buffer.from(fairness.seed, 'hex');
  if (!sameHex(commitmentOf(seed), fairness.commitment.toLowerCase())) {
    return { ok: false, reason: 'seed does not match commitment' };
  }
  if (!record.frozenEntrants) {
    return { ok: false, reason: 'frozen entrant list is missing' };
  }
  if (!fairness.entrantsDigest) {
    return { ok: false, reason: 'entrants digest is missing' };
  }
  let canonical: ReturnType<typeof freezeEntrants>;
  try {
    canonical = freezeEntrants(record.frozenEntrants);
  } catch (err) {
    return { ok: false, reason: `frozen entrant list is invalid: ${(err as Error).message}` };
  }
  if (!sameHex(canonical.digest, fairness.entrantsDigest.toLowerCase())) {
    return { ok: false, reason: 'entrant list digest mismatch' };
  }
  const { frozen, digest } = canonical;
  if (fairness.algorithm === FAIRNESS_ALGORITHM_V2) {
    const beaconProblem = checkBeaconRound(record);
    if (beaconProblem) return { ok: false, reason: beaconProblem };
  }
  const key = pickKey(record, seed);

  const winners = record.winners ?? [];
  const rerolls = record.rerolls ?? [];
  const setAside = record.setAside ?? [];
  const byPick = new Map<number, (typeof winners)[number]>();
  // Every reroll record removed exactly one winner and every set-aside took one pick, so the
  // history used this many picks.
  const used = winners.length + rerolls.length + setAside.length;
  for (const w of winners) {
    if (!Number.isSafeInteger(w.pick) || w.pick < 0 || w.pick >= used) {
      return { ok: false, reason: `winner ${w.login} has an invalid pick position ${String(w.pick)}` };
    }
    if (byPick.has(w.pick)) {
      return { ok: false, reason: `two winners share pick ${w.pick}` };
    }
    byPick.set(w.pick, w);
  }
  const asideAt = new Map<number, (typeof setAside)[number]>();
  let last = -1;
  for (const a of setAside) {
    if (!Number.isSafeInteger(a.pick) || a.pick <= last || a.pick >= used) {
      return {
        ok: false,
        reason: `set-aside pick ${a.login} has an invalid or out-of-order pick position ${String(a.pick)}`,
      };
    }
    if (byPick.has(a.pick)) return { ok: false, reason: `pick ${a.pick} is both a winner and set aside` };
    last = a.pick;
    asideAt.set(a.pick, a);
  }
  if (used > frozen.length) {
    return { ok: false, reason: `history uses ${used} picks but there are only ${frozen.length} entrants` };
  }

  const sequence = pickSequence(key, digest, frozen, used);
  const rerolledAway = new Map<string, number>();
  for (const r of rerolls) rerolledAway.set(r.replacedUserId, (rerolledAway.get(r.replacedUserId) ?? 0) + 1);

  for (let p = 0; p < sequence.length; p++) {
    const expected = frozen[sequence[p]!]!;
    const winner = byPick.get(p);
    if (winner) {
      if (winner.userId !== expected.userId) {
        return {
          ok: false,
          reason: `winner #${p + 1} should be ${expected.login} (pick ${p}) but history has ${winner.login}`,
        };
      }
      continue;
    }
    const aside = asideAt.get(p);
    if (aside) {
      if (aside.userId !== expected.userId) {
        return {
          ok: false,
          reason: `pick ${p} is ${expected.login}, but the history says ${aside.login} was set aside there`,
        };
      }
      continue;
    }
    const left = rerolledAway.get(expected.userId) ?? 0;
    if (left === 0) {
      return {
        ok: false,
        reason: `pick ${p} is ${expected.login}, who is neither a current winner nor a rerolled-away winner in the history`,
      };
    }
    rerolledAway.set(expected.userId, left - 1);
  }
  for (const r of rerolls) {
    if ((rerolledAway.get(r.replacedUserId) ?? 0) > 0) {
      return { ok: false, reason: `rerolled-away winner ${r.replacedLogin} is not in the pick sequence` };
    }
  }
  // The reroll log itself: the picks not set aside, in order, are the first winners then one per
  // reroll; reroll k took the (winners + k)-th of them, its replacement is that pick, and the
  // winner it replaced had been drawn at an earlier pick.
  const taken: number[] = [];
  for (let p = 0; p < used; p++) if (!asideAt.has(p)) taken.push(p);
  const firstPickOf = new Map<string, number>();
  sequence.forEach((index, p) => {
    const id = frozen[index]!.userId;
    if (!firstPickOf.has(id)) firstPickOf.set(id, p);
  });
  for (let k = 0; k < rerolls.length; k++) {
    const r = rerolls[k]!;
    const position = taken[winners.length + k]!;
    if (r.pick !== undefined && r.pick !== position) {
      return {
        ok: false,
        reason: `reroll ${k + 1} took pick ${String(r.pick)}, but the next unused pick then was ${position}`,
      };
    }
    const drawn = frozen[sequence[position]!]!;
    if (r.newUserId !== undefined && r.newUserId !== drawn.userId) {
      return {
        ok: false,
        reason: `reroll ${k + 1} names ${r.newUserId} as the replacement, but pick ${position} is ${drawn.login}`,
      };
    }
    const replacedAt = firstPickOf.get(r.replacedUserId);
    if (replacedAt === undefined || replacedAt >= position) {
      return {
        ok: false,
        reason: `reroll ${k + 1} replaced ${r.replacedLogin}, who was not a winner before pick ${position}`,
      };
    }
  }
  const ordered = [...byPick.entries()].sort((a, b) => a[0] - b[0]).map(([, w]) => w.login);
  return { ok: true, winners: ordered };
}
