import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  FAIRNESS_ALGORITHM,
  FairnessError,
  HmacByteStream,
  commitmentOf,
  freezeEntrants,
  newSeed,
  pickSequence,
  uniformBelow,
  type ByteSource,
} from '../src/fairness/procedure.js';
import type { FrozenEntrant } from '../src/giveaway/model.js';

/** Deterministic distinct seeds for statistical tests (the tests themselves never flake). */
function seedNo(i: number): Buffer {
  return createHash('sha256').update(`giftdrop-test-seed-${i}`).digest();
}

function fixedBytes(bytes: number[]): ByteSource & { used: number } {
  const src = {
    used: 0,
    nextByte(): number {
      if (src.used >= bytes.length) throw new Error('byte source exhausted');
      return bytes[src.used++]!;
    },
  };
  return src;
}

function list(weights: number[]): { frozen: FrozenEntrant[]; digest: string } {
  return freezeEntrants(
    weights.map((weight, i) => ({ userId: `u${String(i).padStart(4, '0')}`, login: `user${i}`, weight })),
  );
}

/** The documented procedure, step 6, written naively (O(n) per pick) as an independent reference. */
function naivePicks(seed: Buffer, digest: string, frozen: FrozenEntrant[], count: number): number[] {
  const stream = new HmacByteStream(seed, digest);
  const remaining = frozen.map((_, i) => i);
  const out: number[] = [];
  while (out.length < Math.min(count, frozen.length)) {
    const total = remaining.reduce((s, i) => s + frozen[i]!.weight, 0);
    const r = uniformBelow(stream, total);
    let acc = 0;
    for (let k = 0; k < remaining.length; k++) {
      acc += frozen[remaining[k]!]!.weight;
      if (acc > r) {
        out.push(remaining[k]!);
        remaining.splice(k, 1);
        break;
      }
    }
  }
  return out;
}

function chiSquare(observed: number[], expected: number[]): number {
  return observed.reduce((s, o, i) => s + (o - expected[i]!) ** 2 / expected[i]!, 0);
}

describe('fairness: known answer', () => {
  // Seed = bytes 0x00..0x1f. Entrants sort by userId in code-unit order: "1234" < "41" < "5" < "7" < "99"
  // (not numeric order). These values were computed once and cross-checked with an independent Python
  // implementation written only from the procedure in the src/fairness/procedure.ts header (hashlib + hmac).
  const seed = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
  const entrants = [
    { userId: '41', login: 'dora', weight: 1 },
    { userId: '7', login: 'alice', weight: 3 },
    { userId: '1234', login: 'bob', weight: 1 },
    { userId: '99', login: 'carol', weight: 2 },
    { userId: '5', login: 'eve', weight: 4 },
  ];

  it('commits, digests and picks exactly as documented', () => {
    expect(FAIRNESS_ALGORITHM).toBe('giftdrop-hmac-sha256-v1');
    expect(commitmentOf(seed)).toBe('630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd');
    const { frozen, digest } = freezeEntrants(entrants);
    expect(frozen.map((e) => e.login)).toEqual(['bob', 'dora', 'eve', 'alice', 'carol']);
    const serialization = frozen.map((e) => `${e.userId}\t${e.login}\t${e.weight}\n`).join('');
    expect(digest).toBe(createHash('sha256').update(serialization).digest('hex'));
    expect(digest).toBe('d57ed27f86a02200f85234f0159654911d0b5f0c88a0182cdf3306593dad4e4e');
    const picks = pickSequence(seed, digest, frozen, 5);
    expect(picks).toEqual([4, 3, 1, 0, 2]);
    expect(picks.map((i) => frozen[i]!.login)).toEqual(['carol', 'alice', 'dora', 'bob', 'eve']);
  });

  it('derives the byte stream from HMAC-SHA256(seed, digest bytes || 8-byte big-endian counter)', async () => {
    const { createHmac } = await import('node:crypto');
    const { digest } = freezeEntrants(entrants);
    const stream = new HmacByteStream(seed, digest);
    const got = Buffer.from(Array.from({ length: 40 }, () => stream.nextByte()));
    const block = (i: number) => {
      const counter = Buffer.alloc(8);
      counter.writeBigUInt64BE(BigInt(i));
      return createHmac('sha256', seed)
        .update(Buffer.concat([Buffer.from(digest, 'hex'), counter]))
        .digest();
    };
    expect(got).toEqual(Buffer.concat([block(0), block(1)]).subarray(0, 40));
  });

  it('newSeed takes 32 bytes from the random source and commits to them', () => {
    const bytes = Buffer.alloc(32, 0xab);
    const { seed: s, commitment } = newSeed({ bytes: (n) => bytes.subarray(0, n) });
    expect(s).toEqual(bytes);
    expect(commitment).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(() => newSeed({ bytes: () => Buffer.alloc(16) })).toThrow(FairnessError);
  });
});

describe('fairness: rejection sampling', () => {
  it('masks to the bit length and rejects out-of-range values instead of reducing modulo n', () => {
    // n = 3: 2 bits; 0xff -> 3 (rejected), 0x03 -> 3 (rejected), 0x02 -> 2 (accepted).
    const src = fixedBytes([0xff, 0x03, 0x02]);
    expect(uniformBelow(src, 3)).toBe(2);
    expect(src.used).toBe(3);
    // n = 300: 9 bits in 2 bytes; 0x012c = 300 rejected, then 0xff2b masked to 0x012b = 299 accepted.
    const src2 = fixedBytes([0x01, 0x2c, 0xff, 0x2b]);
    expect(uniformBelow(src2, 300)).toBe(299);
    expect(src2.used).toBe(4);
    // n = 1 consumes nothing.
    const src3 = fixedBytes([]);
    expect(uniformBelow(src3, 1)).toBe(0);
    expect(() => uniformBelow(src3, 0)).toThrow(FairnessError);
    expect(() => uniformBelow(src3, 2 ** 53)).toThrow(FairnessError);
  });

  it('is uniform over a range of 3 and really rejects about a quarter of the candidates', () => {
    const stream = new HmacByteStream(seedNo(1), '0'.repeat(64));
    const calls = 30_000;
    const counts = [0, 0, 0];
    for (let i = 0; i < calls; i++) counts[uniformBelow(stream, 3)]!++;
    const rejected = stream.consumed - calls;
    // Each candidate is rejected with probability 1/4: expect calls/3 rejections (10,000) give or take.
    expect(rejected).toBeGreaterThan(9_000);
    expect(rejected).toBeLessThan(11_000);
    // chi-square, 2 degrees of freedom, critical value at p = 0.001 is 13.816
    expect(chiSquare(counts, [calls / 3, calls / 3, calls / 3])).toBeLessThan(13.816);
  });
});

describe('fairness: distribution', () => {
  it('picks each of 10 equal entrants uniformly (10,000 draws, chi-square at p = 0.001)', () => {
    const { frozen, digest } = list(Array(10).fill(1));
    const counts = Array(10).fill(0) as number[];
    const draws = 10_000;
    for (let d = 0; d < draws; d++) counts[pickSequence(seedNo(d), digest, frozen, 1)[0]!]!++;
    // 9 degrees of freedom: critical value 27.877
    expect(chiSquare(counts, Array(10).fill(draws / 10))).toBeLessThan(27.877);
  });

  it('weights 1,2,3,4: first and second picks follow the exact without-replacement probabilities', () => {
    const weights = [1, 2, 3, 4];
    const total = 10;
    const { frozen, digest } = list(weights);
    const pFirst = weights.map((w) => w / total);
    // P(second = j) = sum over i != j of P(first = i) * w_j / (total - w_i)
    const pSecond = weights.map((wj, j) =>
      weights.reduce((s, wi, i) => (i === j ? s : s + (wi / total) * (wj / (total - wi))), 0),
    );
    expect(pSecond.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    const draws = 20_000;
    const first = [0, 0, 0, 0];
    const second = [0, 0, 0, 0];
    for (let d = 0; d < draws; d++) {
      const [a, b] = pickSequence(seedNo(100_000 + d), digest, frozen, 2);
      first[a!]!++;
      second[b!]!++;
      expect(a).not.toBe(b);
    }
    // 3 degrees of freedom: critical value 16.266
    expect(
      chiSquare(
        first,
        pFirst.map((p) => p * draws),
      ),
    ).toBeLessThan(16.266);
    expect(
      chiSquare(
        second,
        pSecond.map((p) => p * draws),
      ),
    ).toBeLessThan(16.266);
    // the two distributions genuinely differ: the heaviest entrant is less likely second (0.316) than first (0.4)
    expect(second[3]!).toBeLessThan(first[3]! * 0.9);
  });
});

describe('fairness: sequence properties', () => {
  it('matches a naive reference implementation of the documented procedure', () => {
    for (let t = 0; t < 40; t++) {
      const seed = seedNo(500 + t);
      const weights = Array.from({ length: 1 + (seed[0]! % 60) }, (_, i) => 1 + ((seed[i % 32]! * (i + 1)) % 97));
      const { frozen, digest } = list(weights);
      const n = frozen.length;
      expect(pickSequence(seed, digest, frozen, n)).toEqual(naivePicks(seed, digest, frozen, n));
    }
  });

  it('never repeats a winner and returns everyone when asked for more picks than entrants', () => {
    for (let t = 0; t < 50; t++) {
      const { frozen, digest } = list(Array.from({ length: 1 + t }, (_, i) => 1 + ((i * 7) % 5)));
      const picks = pickSequence(seedNo(t), digest, frozen, frozen.length + 10);
      expect(picks).toHaveLength(frozen.length);
      expect(new Set(picks).size).toBe(frozen.length);
    }
    const { frozen, digest } = list([1, 2]);
    expect(pickSequence(seedNo(0), digest, frozen, 0)).toEqual([]);
    expect(pickSequence(seedNo(0), digest, [], 3)).toEqual([]);
  });

  it('is prefix-stable: k picks are the first k picks of any longer sequence', () => {
    const { frozen, digest } = list(Array.from({ length: 30 }, (_, i) => 1 + (i % 4)));
    const seed = seedNo(42);
    const all = pickSequence(seed, digest, frozen, 30);
    for (let k = 0; k <= 30; k++) expect(pickSequence(seed, digest, frozen, k)).toEqual(all.slice(0, k));
  });

  it('depends on the seed and on the entrant list', () => {
    const { frozen, digest } = list(Array(50).fill(1));
    const a = pickSequence(seedNo(1), digest, frozen, 10);
    expect(pickSequence(seedNo(2), digest, frozen, 10)).not.toEqual(a);
    const other = list([...Array(49).fill(1), 2]);
    expect(pickSequence(seedNo(1), other.digest, other.frozen, 10)).not.toEqual(a);
  });

  it('rejects bad input with a clear error', () => {
    expect(() =>
      freezeEntrants([
        { userId: '1', login: 'a', weight: 1 },
        { userId: '1', login: 'b', weight: 1 },
      ]),
    ).toThrow(/duplicate entrant userId 1/);
    for (const weight of [0, -1, 1.5, Number.NaN, 2 ** 53]) {
      expect(() => freezeEntrants([{ userId: '1', login: 'a', weight }])).toThrow(/positive safe integer/);
    }
    expect(() => freezeEntrants([{ userId: '1', login: 'a\tb', weight: 1 }])).toThrow(/TAB, CR or LF/);
    expect(() => freezeEntrants([{ userId: '', login: 'a', weight: 1 }])).toThrow(/non-empty/);
    expect(() =>
      freezeEntrants([
        { userId: '1', login: 'a', weight: 2 ** 52 },
        { userId: '2', login: 'b', weight: 2 ** 52 },
      ]),
    ).toThrow(/total weight/);
    const { frozen, digest } = list([1]);
    expect(() => pickSequence(Buffer.alloc(31), digest, frozen, 1)).toThrow(/32 bytes/);
    expect(() => pickSequence(seedNo(0), 'xyz', frozen, 1)).toThrow(/64 lower-case hex/);
  });

  it('picks 100 winners among 200,000 entrants with a Fenwick tree (linear build)', () => {
    const entrants = Array.from({ length: 200_000 }, (_, i) => ({
      userId: String(1_000_000 + i),
      login: `u${i}`,
      weight: 1 + (i % 3),
    }));
    const { frozen, digest } = freezeEntrants(entrants);
    const picks = pickSequence(seedNo(9), digest, frozen, 100);
    expect(new Set(picks).size).toBe(100);
    expect(picks.every((i) => i >= 0 && i < frozen.length)).toBe(true);
  });
});
