/**
 * The v2 procedure (`giftdrop-hmac-sha256-drand-v2`) in Node: the known-answer vectors over real
 * drand quicknet rounds, the key derivation as specified, the BLS check against the pinned
 * quicknet key, and the statistics of the picks when the beacon randomness varies.
 */
import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FAIRNESS_ALGORITHM_V2, drawKey, pickKey } from '../src/fairness/beacon-key.js';
import { commitmentOf, freezeEntrants, pickSequence } from '../src/fairness/procedure.js';
import { verifyDraw } from '../src/fairness/verify.js';
import { QUICKNET, randomnessOf, roundAfter, roundTimeMs, verifyRoundSignature } from '../src/fairness/drand.js';
import { KNOWN_ANSWERS, localChain, vectorEntrants, vectorRecord } from './support/beacon-vectors.js';

function chiSquare(observed: number[], expected: number[]): number {
  return observed.reduce((s, o, i) => s + (o - expected[i]!) ** 2 / expected[i]!, 0);
}
/** Distinct beacon randomness values (deterministic, so the tests never flake). */
function randomnessNo(i: number): string {
  return createHash('sha256').update(`beacon-randomness-${i}`).digest('hex');
}

describe('drand-v2: known answers (computed once, frozen in test/support/beacon-vectors.ts)', () => {
  for (const v of KNOWN_ANSWERS) {
    it(`${v.label}: seed + digest + quicknet round ${v.round} -> ${v.winners.join(', ')}`, () => {
      const seed = Buffer.from(v.seed, 'hex');
      expect(commitmentOf(seed)).toBe(v.commitment);
      const { frozen, digest } = freezeEntrants(vectorEntrants(v.entrantCount));
      expect(digest).toBe(v.digest);
      expect(verifyRoundSignature(QUICKNET, v.round, v.signature)).toBe(true);
      expect(randomnessOf(v.signature)).toBe(v.randomness);
      expect(roundAfter(QUICKNET, Date.parse(v.frozenAt))).toBe(v.round);
      const key = drawKey(seed, digest, v.round, v.randomness);
      expect(key.toString('hex')).toBe(v.key);
      expect(pickSequence(key, digest, frozen, v.winners.length).map((i) => frozen[i]!.login)).toEqual(v.winners);
      const record = vectorRecord(v);
      expect(pickKey(record, seed).toString('hex')).toBe(v.key);
      expect(verifyDraw(record)).toEqual({ ok: true, winners: v.winners });
    });
  }

  it('derives the key as HMAC-SHA256(seed, "giftdrop-drand-v2" 0x00 digest round(8, BE) randomness)', () => {
    const v = KNOWN_ANSWERS[0]!;
    const round = Buffer.alloc(8);
    round.writeBigUInt64BE(BigInt(v.round));
    const message = Buffer.concat([
      Buffer.from('giftdrop-drand-v2\0', 'ascii'),
      Buffer.from(v.digest, 'hex'),
      round,
      Buffer.from(v.randomness, 'hex'),
    ]);
    expect(createHmac('sha256', Buffer.from(v.seed, 'hex')).update(message).digest('hex')).toBe(v.key);
  });

  it('checks quicknet signatures against the pinned key: a signature of another round fails', () => {
    const [a, b] = KNOWN_ANSWERS;
    expect(verifyRoundSignature(QUICKNET, a!.round, b!.signature)).toBe(false);
    expect(verifyRoundSignature(QUICKNET, b!.round, b!.signature)).toBe(true);
    expect(verifyRoundSignature({ publicKey: localChain().chain.publicKey }, b!.round, b!.signature)).toBe(false);
    expect(verifyRoundSignature(QUICKNET, b!.round, 'zz')).toBe(false);
  });

  it('names the first round published strictly after a time', () => {
    const g = QUICKNET.genesis * 1000;
    expect(roundAfter(QUICKNET, g)).toBe(2);
    expect(roundAfter(QUICKNET, g + 2999)).toBe(2);
    expect(roundAfter(QUICKNET, g + 3000)).toBe(3);
    expect(roundTimeMs(QUICKNET, roundAfter(QUICKNET, g + 7_777))).toBeGreaterThan(g + 7_777);
    expect(roundTimeMs(QUICKNET, roundAfter(QUICKNET, g + 7_777) - 1)).toBeLessThanOrEqual(g + 7_777);
  });

  it('keeps a record under the old procedure on the seed alone', () => {
    const record = vectorRecord(KNOWN_ANSWERS[0]!);
    record.fairness.algorithm = 'giftdrop-hmac-sha256-v1';
    const seed = Buffer.from(record.fairness.seed!, 'hex');
    expect(pickKey(record, seed).equals(seed)).toBe(true);
    expect(FAIRNESS_ALGORITHM_V2).toBe('giftdrop-hmac-sha256-drand-v2');
  });
});

describe("drand-v2: distribution when only the beacon varies (the seed is the operator's and fixed)", () => {
  const seed = createHash('sha256').update('operator-knows-this-seed').digest();

  it('picks each of 10 equal entrants uniformly (10,000 beacon values, chi-square at p = 0.001)', () => {
    const { frozen, digest } = freezeEntrants(
      Array.from({ length: 10 }, (_, i) => ({ userId: `u${i}`, login: `l${i}`, weight: 1 })),
    );
    const counts = Array(10).fill(0) as number[];
    const draws = 10_000;
    for (let d = 0; d < draws; d++)
      counts[pickSequence(drawKey(seed, digest, 1 + d, randomnessNo(d)), digest, frozen, 1)[0]!]!++;
    expect(chiSquare(counts, Array(10).fill(draws / 10))).toBeLessThan(27.877); // 9 dof
  });

  it('weights 1,2,3,4: first and second picks follow the exact without-replacement probabilities', () => {
    const weights = [1, 2, 3, 4];
    const total = 10;
    const { frozen, digest } = freezeEntrants(weights.map((w, i) => ({ userId: `u${i}`, login: `l${i}`, weight: w })));
    const pFirst = weights.map((w) => w / total);
    const pSecond = weights.map((wj, j) =>
      weights.reduce((s, wi, i) => (i === j ? s : s + (wi / total) * (wj / (total - wi))), 0),
    );
    const draws = 20_000;
    const first = [0, 0, 0, 0];
    const second = [0, 0, 0, 0];
    for (let d = 0; d < draws; d++) {
      const [a, b] = pickSequence(drawKey(seed, digest, 7, randomnessNo(50_000 + d)), digest, frozen, 2);
      first[a!]!++;
      second[b!]!++;
    }
    expect(
      chiSquare(
        first,
        pFirst.map((p) => p * draws),
      ),
    ).toBeLessThan(16.266); // 3 dof
    expect(
      chiSquare(
        second,
        pSecond.map((p) => p * draws),
      ),
    ).toBeLessThan(16.266);
    expect(second[3]!).toBeLessThan(first[3]! * 0.9);
  });

  it('changes the key with every input: seed, digest, round and randomness', () => {
    const v = KNOWN_ANSWERS[0]!;
    const s = Buffer.from(v.seed, 'hex');
    const keys = new Set([
      drawKey(s, v.digest, v.round, v.randomness).toString('hex'),
      drawKey(Buffer.from(randomnessNo(1), 'hex'), v.digest, v.round, v.randomness).toString('hex'),
      drawKey(s, randomnessNo(2), v.round, v.randomness).toString('hex'),
      drawKey(s, v.digest, v.round + 1, v.randomness).toString('hex'),
      drawKey(s, v.digest, v.round, randomnessNo(3)).toString('hex'),
    ]);
    expect(keys.size).toBe(5);
    expect(() => drawKey(s, v.digest, 0, v.randomness)).toThrow(/round/);
    expect(() => drawKey(s, v.digest, 1, 'x')).toThrow(/randomness/);
  });
});
