/**
 * The beacon-backed fairness procedure `giftdrop-hmac-sha256-drand-v2` (specified in fairness.ts,
 * "Version 2"): the draw key derived from the committed seed, the frozen list's digest and the
 * drand round's randomness, and the check of a recorded beacon round.
 *
 * Contract: pure functions; the pick sequence itself is fairness.ts's `pickSequence`, run with the
 * derived key in place of the seed, so every property of v1 (uniform rejection sampling, weighted
 * without replacement, prefix-stable rerolls) carries over unchanged. Records under v1 keep
 * picking and verifying with the seed alone. Does not: talk to a beacon (src/beacon/ does, behind
 * BeaconPort) or decide when to wait for one (beacon-step.ts).
 */
import { createHmac } from 'node:crypto';
import {
  QUICKNET,
  chainHashOf,
  randomnessOf,
  roundAfter,
  roundTimeMs,
  verifyRoundSignature,
  type DrandChain,
} from '../shared/drand.js';
import { beaconModeProblem } from '../shared/beacon-policy.js';
import { FAIRNESS_ALGORITHM, FairnessError, SEED_BYTES } from './fairness.js';
import type { BeaconRecord, DrawRecord } from './ports.js';

/** The identifier recorded in `Fairness.algorithm` for draws that used a beacon round. */
export const FAIRNESS_ALGORITHM_V2 = 'giftdrop-hmac-sha256-drand-v2';

/** Domain label at the start of the key derivation's message (ASCII, then one zero byte). */
export const V2_KEY_LABEL = 'giftdrop-drand-v2';

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
export function pickKey(record: DrawRecord, seed: Buffer): Buffer {
  const f = record.fairness;
  const round = fetchedRound(f.beacon);
  if (f.algorithm !== FAIRNESS_ALGORITHM_V2) return seed;
  if (!round || !f.entrantsDigest) throw new FairnessError('a drand-v2 draw needs its beacon round and entrants digest');
  return drawKey(seed, f.entrantsDigest, round.round, round.randomness);
}

/** The chain a recorded round claims to come from: quicknet (pinned), or a self-described sandbox chain. */
export function chainOf(beacon: Exclude<BeaconRecord, { unavailable: true }>): DrandChain | string {
  if (beacon.sandbox) {
    const { publicKey, genesis, period } = beacon.sandbox;
    const chain: DrandChain = { hash: '', publicKey, genesis, period, scheme: 'bls-unchained-g1-rfc9380' };
    chain.hash = chainHashOf(chain);
    if (chain.hash !== beacon.chain) return 'the sandbox beacon chain hash does not match its recorded key and schedule';
    return chain;
  }
  if (beacon.chain !== QUICKNET.hash) return `unknown beacon chain ${beacon.chain}`;
  return QUICKNET;
}

/**
 * Checks the beacon round of a v2 record: a known chain, a valid BLS signature of that round, the
 * randomness equal to SHA-256(signature), and the round being exactly the first one published
 * strictly after the recorded freeze time. Returns the failure reason, or undefined when it holds.
 */
export function checkBeaconRound(record: DrawRecord): string | undefined {
  const f = record.fairness;
  if (!f.beacon || 'unavailable' in f.beacon) return 'a drand-v2 draw must record its beacon round';
  // A sandbox beacon is the bot's own key: it proves nothing about a live draw's randomness.
  const modeProblem = beaconModeProblem(record.mode, f.beacon);
  if (modeProblem) return modeProblem;
  const round = fetchedRound(f.beacon);
  if (!round) return 'the beacon round was never fetched (no randomness or signature recorded)';
  if (!Number.isSafeInteger(round.round) || round.round < 1) return `beacon round ${String(round.round)} is invalid`;
  if (!/^[0-9a-f]{96}$/.test(round.signature)) return 'beacon signature is not 96 lower-case hex characters';
  const chain = chainOf(f.beacon);
  if (typeof chain === 'string') return chain;
  if (!verifyRoundSignature(chain, round.round, round.signature)) {
    return `beacon signature of round ${round.round} does not verify against the chain's public key`;
  }
  if (round.randomness !== randomnessOf(round.signature)) return 'beacon randomness is not SHA-256 of its signature';
  const frozenMs = f.frozenAt ? Date.parse(f.frozenAt) : NaN;
  if (!Number.isFinite(frozenMs)) return 'the time the entrant list was frozen is missing';
  const published = roundTimeMs(chain, round.round);
  if (published <= frozenMs) {
    return `beacon round ${round.round} was published at ${new Date(published).toISOString()}, before the entrant list was frozen (${f.frozenAt})`;
  }
  const expected = roundAfter(chain, frozenMs);
  if (round.round !== expected) {
    return `beacon round ${round.round} is not the first round after the entrant list was frozen (that is round ${expected})`;
  }
  return undefined;
}
