/**
 * Provably fair winner picking: a public, checkable procedure (algorithm `giftdrop-hmac-sha256-v1`,
 * and `giftdrop-hmac-sha256-drand-v2`, which adds a public beacon round; see "Version 2" below).
 *
 * Owns: the seed commitment, the canonical frozen entrant list and its digest, and the pick
 * sequence. Anyone holding the revealed seed and the frozen entrant list can recompute the winners
 * with nothing but SHA-256 and HMAC-SHA256. Does not: store anything, talk to chat, decide
 * eligibility or weights (callers pass final weights in), or handle claims/rerolls beyond taking
 * the next picks of the same sequence.
 *
 * The procedure, exactly:
 *
 * 1. Commitment. At open a 32-byte seed is drawn from a cryptographic source. The commitment is
 *    the lower-case hex SHA-256 of the 32 seed bytes; it is announced when entries open and the
 *    seed is revealed once the draw is closed. Chat carries it as the draw code: its first
 *    CODE_HEX_DIGITS (16) hex digits (`fairCode`), 64 bits, so changing the seed afterwards means
 *    finding another seed whose SHA-256 starts the same (about 2^64 tries; the seed is revealed
 *    seconds after the close). The record and the verify page keep all 64.
 *
 * 2. Frozen entrant list. At close every entrant is `(userId, login, weight)`; `weight` is a
 *    positive safe integer and the weights' total must also be a safe integer (<= 2^53 - 1).
 *    `userId` and `login` are non-empty and contain no TAB, CR or LF. userIds are unique. The list
 *    is sorted by `userId` in ascending plain code-unit order (JavaScript's default string order,
 *    which for Twitch's decimal ASCII ids is byte order, NOT numeric order: "10" < "9").
 *
 * 3. Digest. The canonical serialization is the UTF-8 encoding of, for each entrant in canonical
 *    order, the line `userId \t login \t weight \n` (weight in decimal, no leading zeros, no
 *    sign). An empty list serializes to zero bytes. The entrants digest is the lower-case hex
 *    SHA-256 of that serialization.
 *
 * 4. Random byte stream. Block i (i = 0, 1, 2, ...) is HMAC-SHA256 with key = the 32 seed bytes and
 *    message = the 32 raw digest bytes (hex-decoded) followed by i as an 8-byte big-endian unsigned
 *    integer. The stream is block 0 || block 1 || ...; bytes are consumed in order, never reused.
 *
 * 5. Uniform integer in [0, n). For n = 1 the result is 0 and no byte is consumed. Otherwise let
 *    m be the bit length of n - 1 and B = ceil(m / 8). Take the next B bytes as a big-endian
 *    unsigned integer and keep its low m bits (the excess high bits of the first byte are cleared).
 *    If the value is < n it is the result; otherwise it is rejected and the step repeats with the
 *    next B bytes. (Rejection, not modulo: every value in [0, n) is exactly equally likely.)
 *
 * 6. Picks. Weighted sampling without replacement. Repeat for pick p = 0, 1, ...: let T be the
 *    sum of the weights of the entrants not yet picked, draw r = uniform integer in [0, T) (step 5),
 *    and pick the first not-yet-picked entrant, in canonical order, whose cumulative weight (over
 *    not-yet-picked entrants, in canonical order, including itself) exceeds r. Each pick is thus
 *    exactly proportional to weight among the remaining entrants. The sequence is prefix-stable:
 *    asking for k picks gives the first k picks of any longer sequence, so rerolls take the next
 *    picks. Asking for more picks than entrants gives all of them.
 *
 * The implementation uses a Fenwick tree over the weights: O(n) to build (in slices during a big
 * draw's freeze: fenwickSteps), O(log n) per pick. Steps 2-3 live in canonical.ts (packed-key
 * radix or merge sort, one digest pass, sliceable for big draws) and, over an entrant table's
 * columns, giveaway/entrants/canonical-table.ts.
 *
 * Version 2, `giftdrop-hmac-sha256-drand-v2` (beacon-key.ts, giveaway/beacon-step.ts): steps 1-3 and
 * 5-6 are unchanged; step 4's HMAC key is not the seed but a draw key that also depends on a public
 * randomness beacon round published after the list was frozen:
 *   a. At close the list is frozen (step 2), its digest computed (step 3) and the freeze time
 *      recorded (`fairness.frozenAt`).
 *   b. The round is R = the first drand quicknet round published strictly after the freeze
 *      (round r is published at genesis + (r - 1) * period; quicknet: genesis 1692803367, 3 s).
 *      The digest (as the list code: its first 16 hex digits, as the draw code above) and R are
 *      announced in chat before R is published.
 *   c. Round R is fetched and checked: its 48-byte G1 BLS signature over SHA-256(R as 8-byte
 *      big-endian), hashed to G1 per RFC 9380 with DST `BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_`,
 *      verifies against the chain's pinned G2 public key; its randomness is SHA-256(signature).
 *   d. draw key = HMAC-SHA256(key = seed, message = ASCII "giftdrop-drand-v2" || 0x00 || the 32
 *      digest bytes || R as 8-byte big-endian || the 32 randomness bytes).
 *   e. Steps 4-6 run with the draw key in place of the seed. Rerolls take the next picks of the
 *      same sequence. The history records `fairness.beacon = { chain, round, randomness,
 *      signature }` (a sandbox beacon adds its key and schedule under `sandbox`).
 * If round R cannot be fetched and verified within `fairness.beaconWaitSeconds`, the draw uses v1
 * (the seed alone), says so in chat and records `beacon: { unavailable: true, chain, round }`.
 *
 * Threat model (what each party can and cannot do under v2):
 * - Operator (holds the seed, runs the bot, can add accounts, chooses when to close): cannot
 *   change the seed after the commitment, nor the list after the digest is announced, and cannot
 *   know the winners before the list is frozen, because round R does not exist yet. Can still
 *   withhold a draw (stop the bot; a restart waits for the SAME announced round), or force the v1
 *   fallback by blocking the beacon, which chat and the history show.
 * - Viewer: sees the commitment at open, the digest and R at close, the seed after; can recompute
 *   every step (npm run verify, or the self-contained verify page in a browser) but cannot
 *   influence the picks beyond entering (one entry per account).
 * - Fourthwall: only receives the chosen winners; it cannot influence who they are.
 * - Beacon (drand League of Entropy): a threshold of its independent nodes would have to collude
 *   to bias or predict a round; it never sees the seed or the list, so it cannot aim at a winner.
 *   A sandbox beacon is the bot's own key and proves nothing; the history marks it as such.
 */
import { createHash, createHmac } from 'node:crypto';
import type { RandomSource } from '../shared/random.js';
import { FairnessError, canonicalise, checkWeight } from './canonical.js';
import { runToEnd, type Steps } from './steps.js';
import type { FrozenEntrant } from './record.js';

export { FairnessError } from './canonical.js';

/** The identifier recorded in `Fairness.algorithm` for this procedure. */
export const FAIRNESS_ALGORITHM = 'giftdrop-hmac-sha256-v1';

/** Seed length in bytes. */
export const SEED_BYTES = 32;

/** A source of the pick procedure's random bytes (step 4), one byte at a time. */
export interface ByteSource {
  nextByte(): number;
}

/** How many leading hex digits of a commitment or digest chat shows (step 1). */
const CODE_HEX_DIGITS = 16;

/** The short form chat and the overlay's operator pages show of a 64-hex commitment or digest. */
export function fairCode(hex: string): string {
  return hex.slice(0, CODE_HEX_DIGITS);
}

/** Lower-case hex SHA-256 of the seed: the commitment announced at open. */
export function commitmentOf(seed: Buffer): string {
  return createHash('sha256').update(seed).digest('hex');
}

/** Draws a fresh 32-byte seed from `random` and returns it with its commitment. */
export function newSeed(random: RandomSource): { seed: Buffer; commitment: string } {
  const seed = Buffer.from(random.bytes(SEED_BYTES));
  if (seed.length !== SEED_BYTES) {
    throw new FairnessError(`random source returned ${seed.length} bytes, expected ${SEED_BYTES}`);
  }
  return { seed, commitment: commitmentOf(seed) };
}

/**
 * Validates entrants, sorts them into canonical order (userId, code-unit order) and computes the
 * entrants digest. Throws FairnessError on a duplicate userId, an empty or TAB/CR/LF-bearing
 * userId or login, a weight that is not a positive safe integer, or a total weight above 2^53 - 1.
 */
export function freezeEntrants(entrants: readonly { userId: string; login: string; weight: number }[]): {
  frozen: FrozenEntrant[];
  digest: string;
} {
  const { order, digest } = runToEnd(
    canonicalise({
      length: entrants.length,
      userId: (i) => entrants[i]!.userId,
      login: (i) => entrants[i]!.login,
      weight: (i) => entrants[i]!.weight,
    }),
  );
  const frozen = new Array<FrozenEntrant>(order.length);
  for (let p = 0; p < order.length; p++) {
    const e = entrants[order[p]!]!;
    frozen[p] = { userId: e.userId, login: e.login, weight: e.weight };
  }
  return { frozen, digest };
}

/** The HMAC-SHA256 counter-mode byte stream of step 4. */
export class HmacByteStream implements ByteSource {
  private readonly seed: Buffer;
  private readonly message: Buffer;
  private block: Buffer = Buffer.alloc(0);
  private offset = 0;
  private counter = 0n;
  /** Bytes consumed so far (for tests and audits). */
  consumed = 0;

  constructor(seed: Buffer, digest: string) {
    this.seed = checkSeed(seed);
    this.message = Buffer.alloc(32 + 8);
    digestBytes(digest).copy(this.message, 0);
  }

  nextByte(): number {
    if (this.offset >= this.block.length) {
      this.message.writeBigUInt64BE(this.counter, 32);
      this.counter += 1n;
      this.block = createHmac('sha256', this.seed).update(this.message).digest();
      this.offset = 0;
    }
    this.consumed += 1;
    return this.block[this.offset++]!;
  }
}

function checkSeed(seed: Buffer): Buffer {
  if (!Buffer.isBuffer(seed) || seed.length !== SEED_BYTES) {
    throw new FairnessError(`seed must be ${SEED_BYTES} bytes`);
  }
  return seed;
}

function digestBytes(digest: string): Buffer {
  if (typeof digest !== 'string' || !/^[0-9a-f]{64}$/.test(digest)) {
    throw new FairnessError('digest must be 64 lower-case hex characters');
  }
  return Buffer.from(digest, 'hex');
}

/**
 * A uniform integer in [0, n) by masked rejection sampling (step 5). `n` must be a positive safe
 * integer. Rejected candidates consume bytes from `source` like accepted ones.
 */
export function uniformBelow(source: ByteSource, n: number): number {
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new FairnessError(`range must be a positive safe integer, got ${n}`);
  }
  if (n === 1) return 0;
  const bits = (n - 1).toString(2).length;
  const bytes = Math.ceil(bits / 8);
  const firstMask = (1 << (bits - 8 * (bytes - 1))) - 1;
  for (;;) {
    let v = source.nextByte() & firstMask;
    for (let i = 1; i < bytes; i++) v = v * 256 + source.nextByte();
    if (v < n) return v;
  }
}

/** Adds weights [start, end) (0-based) into the Fenwick array `tree` (length n + 1). */
function fenwickRange(tree: Float64Array, weights: ArrayLike<number>, start: number, end: number): void {
  const n = weights.length;
  for (let i = start + 1; i <= end; i++) {
    tree[i] = tree[i]! + weights[i - 1]!;
    const parent = i + (i & -i);
    if (parent <= n) tree[parent] = tree[parent]! + tree[i]!;
  }
}

/**
 * The Fenwick array of `weights` built in slices (a big draw's is built during its sliced freeze,
 * so picking does not run an O(n) loop on the event loop); pass it to pickSequenceOfWeights, which
 * borrows it and leaves it as it was.
 */
export function* fenwickSteps(weights: Float64Array): Steps<Float64Array> {
  const n = weights.length;
  const tree = new Float64Array(n + 1);
  for (let start = 0; start < n; start += 16_384) {
    fenwickRange(tree, weights, start, Math.min(n, start + 16_384));
    yield;
  }
  return tree;
}

/** Fenwick (binary indexed) tree over weights, supporting removal and weighted search. */
class WeightTree {
  private readonly tree: Float64Array;
  private readonly size: number;
  private readonly topStep: number;
  total: number;

  /**
   * `built`: the Fenwick array of exactly these weights (fenwickSteps), borrowed rather than
   * rebuilt: the caller puts every removal back (`putBack`) before anyone else reads it.
   */
  constructor(weights: ArrayLike<number>, built?: Float64Array) {
    const n = weights.length;
    this.size = n;
    if (built && built.length === n + 1) {
      this.tree = built;
    } else {
      this.tree = new Float64Array(n + 1);
      fenwickRange(this.tree, weights, 0, n);
    }
    let total = 0;
    for (let i = n; i > 0; i -= i & -i) total += this.tree[i]!;
    this.total = total;
    let step = 1;
    while (step * 2 <= n) step *= 2;
    this.topStep = n === 0 ? 0 : step;
  }

  /** 0-based index of the first entry whose cumulative weight exceeds r (0 <= r < total). */
  find(r: number): number {
    let pos = 0;
    let rest = r;
    for (let step = this.topStep; step > 0; step >>= 1) {
      const next = pos + step;
      if (next <= this.size && this.tree[next]! <= rest) {
        pos = next;
        rest -= this.tree[next]!;
      }
    }
    return pos;
  }

  remove(index: number, weight: number): void {
    for (let i = index + 1; i <= this.size; i += i & -i) this.tree[i] = this.tree[i]! - weight;
    this.total -= weight;
  }

  /** Undoes `remove(index, weight)` (exact: the sums are integers below 2^53). */
  putBack(index: number, weight: number): void {
    this.remove(index, -weight);
  }
}

/**
 * The first `count` picks (step 6) as indices into `frozen` (which must be the canonical list
 * whose digest is `digest`; this function does not re-sort it). Distinct, prefix-stable; `count`
 * above the number of entrants gives all of them, `count` <= 0 gives none.
 */
export function pickSequence(seed: Buffer, digest: string, frozen: readonly FrozenEntrant[], count: number): number[] {
  const weights = new Float64Array(frozen.length);
  frozen.forEach((e, i) => {
    const w = e.weight;
    weights[i] = Number.isSafeInteger(w) && w > 0 ? w : checkWeight(w, `frozen entrant ${i}`);
  });
  return pickSequenceOfWeights(seed, digest, weights, count);
}

/**
 * pickSequence over the weights of a canonical list (position p = the entrant at canonical
 * position p), for callers that hold the list in columns. Weights must be positive safe integers.
 * `built`: their Fenwick array from fenwickSteps, when the caller made it ahead (same picks).
 */
export function pickSequenceOfWeights(
  seed: Buffer,
  digest: string,
  weights: ArrayLike<number>,
  count: number,
  built?: Float64Array,
): number[] {
  const stream = new HmacByteStream(seed, digest);
  const tree = new WeightTree(weights, built);
  if (!Number.isSafeInteger(tree.total)) {
    throw new FairnessError('total weight exceeds 2^53 - 1');
  }
  if (Number.isNaN(count)) throw new FairnessError('pick count must be a number');
  const wanted = Math.max(0, Math.min(Math.floor(count), weights.length));
  const picks: number[] = [];
  try {
    while (picks.length < wanted) {
      const r = uniformBelow(stream, tree.total);
      const index = tree.find(r);
      picks.push(index);
      tree.remove(index, weights[index]!);
    }
  } finally {
    // A borrowed tree goes back as it came.
    if (built) for (const index of picks) tree.putBack(index, weights[index]!);
  }
  return picks;
}
