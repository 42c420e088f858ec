/**
 * The beacon-backed fairness procedure `giftdrop-hmac-sha256-drand-v2` (specified in procedure.ts,
 * "Version 2"): the draw key derived from the committed seed, the frozen list's digest and the
 * drand round's randomness, and the check of a recorded beacon round.
 *
 * Contract: pure functions; the pick sequence itself is procedure.ts's `pickSequence`, run with the
 * derived key in place of the seed, so every property of v1 (uniform rejection sampling, weighted
 * without replacement, prefix-stable rerolls) carries over unchanged. Records under v1 keep
 * picking and verifying with the seed alone. Does not: talk to a beacon (src/beacon/ does, behind
 * BeaconPort), decide when to wait for one (giveaway/beacon-step.ts) or check a recorded round's signature
 * (beacon-check.ts: it needs the BLS code, which the bot loads only to verify a draw).
 */
import { createHmac } from 'node:crypto';
import { FAIRNESS_ALGORITHM, FairnessError, SEED_BYTES } from './procedure.js';
import type { BeaconRecord, VerifiableDraw } from './record.js';

/** The identifier recorded in `Fairness.algorithm` for draws that used a beacon round. */
export const FAIRNESS_ALGORITHM_V2 = 'giftdrop-hmac-sha256-drand-v2';

/** Domain label at the start of the key derivation's message (ASCII, then one zero byte). */
const V2_KEY_LABEL = 'giftdrop-drand-v2';

/** The fairness algorithms this version verifies. */
export const KNOWN_ALGORITHMS: readonly string[] = [FAIRNESS_ALGORITHM, FAIRNESS_ALGORITHM_V2];

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * The v2 draw key: HMAC-SHA256(key = seed, message = "giftdrop-drand-v2" || 0x00 || digest (32
 * bytes) || round (8-byte big-endian) || randomness (32 bytes)).
 */
export function drawKey(seed: Buffer, digest: string, round: number, randomness: string): Buffer {
  if (!Buffer.isBuffer(seed) || seed.length !== SEED_BYTES) throw new FairnessError(`seed must be ${SEED_BYTES} bytes`);
  if (!HEX64.test(digest)) throw new FairnessError('digest must be 64 lower-case hex characters');
  if (!HEX64.test(randomness)) throw new FairnessError('beacon randomness must be 64 lower-case hex characters');
  if (!Number.isSafeInteger(round) || round < 1) throw new FairnessError('beacon round must be a positive integer');
  const message = Buffer.alloc(V2_KEY_LABEL.length + 1 + 32 + 8 + 32);
  let at = message.write(V2_KEY_LABEL, 0, 'ascii') + 1;
  at += Buffer.from(digest, 'hex').copy(message, at);
  message.writeBigUInt64BE(BigInt(round), at);
  at += 8;
  Buffer.from(randomness, 'hex').copy(message, at);
  return createHmac('sha256', seed).update(message).digest();
}

/** The beacon round's fields when `beacon` is a fetched round (not pending, not unavailable). */
export function fetchedRound(
  beacon: BeaconRecord | undefined,
): { chain: string; round: number; randomness: string; signature: string } | undefined {
  if (!beacon || 'unavailable' in beacon || !beacon.randomness || !beacon.signature) return undefined;
  return { chain: beacon.chain, round: beacon.round, randomness: beacon.randomness, signature: beacon.signature };
}

/**
 * The key the record's pick sequence runs with: the v2 draw key when the record is a v2 draw with
 * a fetched beacon round, otherwise the seed itself (v1).
 */
export function pickKey(record: Pick<VerifiableDraw, 'fairness'>, seed: Buffer): Buffer {
  const f = record.fairness;
  const round = fetchedRound(f.beacon);
  if (f.algorithm !== FAIRNESS_ALGORITHM_V2) return seed;
  if (!round || !f.entrantsDigest)
    throw new FairnessError('a drand-v2 draw needs its beacon round and entrants digest');
  return drawKey(seed, f.entrantsDigest, round.round, round.randomness);
}
