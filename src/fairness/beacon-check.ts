/**
 * The check of a `giftdrop-hmac-sha256-drand-v2` draw's recorded beacon round (procedure.ts,
 * "Version 2"): a known chain (quicknet pinned, or a self-described sandbox chain in sandbox mode),
 * a BLS signature of that round that verifies, randomness = SHA-256(signature), and the round being
 * the first one published strictly after the entrant list was frozen.
 *
 * Contract: pure functions over a DrawRecord. Split from beacon-key.ts because it imports the
 * BLS code (drand.ts, @noble/curves): verify.ts loads it, and the running bot loads
 * verify.ts only when a draw is verified, never at start-up.
 */
import {
  QUICKNET,
  chainHashOf,
  randomnessOf,
  roundAfter,
  roundTimeMs,
  verifyRoundSignature,
  type DrandChain,
} from './drand.js';
import { beaconModeProblem } from './beacon-policy.js';
import { fetchedRound } from './beacon-key.js';
import type { BeaconRecord, VerifiableDraw } from './record.js';

/** The chain a recorded round claims to come from: quicknet (pinned), or a self-described sandbox chain. */
function chainOf(beacon: Exclude<BeaconRecord, { unavailable: true }>): DrandChain | string {
  if (beacon.sandbox) {
    const { publicKey, genesis, period } = beacon.sandbox;
    const chain: DrandChain = { hash: '', publicKey, genesis, period, scheme: 'bls-unchained-g1-rfc9380' };
    chain.hash = chainHashOf(chain);
    if (chain.hash !== beacon.chain)
      return 'the sandbox beacon chain hash does not match its recorded key and schedule';
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
export function checkBeaconRound(record: VerifiableDraw): string | undefined {
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
