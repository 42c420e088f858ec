/**
 * Fairness: the public, checkable procedure behind every draw. Read procedure.ts first: it states
 * the procedure exactly (docs/fairness.md says it for viewers). Pure: no I/O; seeds come from an
 * injected RandomSource.
 *
 *   record.ts         the shapes of a draw's fairness data that this folder reads (the record's part)
 *   procedure.ts      the procedure (spec), commitment, freezeEntrants, the pick sequence
 *   canonical.ts      the canonical list (validation, sort, digest) at any size, in steps
 *   digit-keys.ts     decimal user ids as two sort keys and their radix sort (the fast canonical order)
 *   steps.ts          long work as a generator, run to the end or in slices that yield to I/O
 *   beacon-key.ts     v2: the draw key from the seed, the digest and the round's randomness
 *   drand-chain.ts    drand chain facts (quicknet pinned) and round <-> time, no cryptography
 *   drand.ts          the round's BLS signature check (@noble/curves); the verify page bundles it
 *   beacon-check.ts   the check of a v2 draw's recorded round (uses drand.ts)
 *   beacon-policy.ts  which beacon a draw may rest on (shared word for word with the verify page)
 *   verify.ts         verifyDraw: a stored draw's commitment, digest, picks and round re-checked
 *
 * Contract: this index is the door the domain (src/giveaway), storage and the CLI go through; it
 * re-exports only what loads without the BLS code, so a running bot does not load @noble/curves
 * at start-up (verify.ts and drand.ts are imported by path where a signature is checked). Imports
 * nothing from the domain or any adapter.
 * Does not: fetch beacon rounds (src/beacon/), decide eligibility or weights, keep entrants
 * (giveaway/entrants/), wait for the round during a draw (giveaway/beacon-step.ts), turn picks into
 * winners (giveaway/winner-picks.ts) or store anything.
 */

// The shapes of the fairness data a draw record carries (src/giveaway/model.ts builds on them).
export type { BeaconRecord, FairnessData, FrozenEntrant } from './record.js';
// The procedure: commitment, frozen list, pick sequence (v1), and the v2 beacon key.
export { FAIRNESS_ALGORITHM, fairCode, newSeed, pickSequenceOfWeights } from './procedure.js';
export { FAIRNESS_ALGORITHM_V2, drawKey, fetchedRound, pickKey } from './beacon-key.js';
// The canonical list's building blocks, for computing the same list over other storage (the
// entrant store's columns) and writing its lines (storage's entrants file).
export {
  FairnessError,
  canonicalise,
  checkField,
  checkWeight,
  writeLine,
  type Canonical,
  type ListRows,
} from './canonical.js';
export { fenwickSteps } from './procedure.js';
export { digitKey, readDigitKey, sortByDigitKeys, writeDigits } from './digit-keys.js';
export { runSliced, runToEnd, type Steps } from './steps.js';
