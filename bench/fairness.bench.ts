/**
 * PIECE benchmark, kept beside the end-to-end one (e2e-1-close.bench.ts, which is the figure that
 * counts): the fairness functions alone, no engine, no storage, no finish call. Rows are named
 * `piece.*` and carry no target.
 *
 * Fairness benchmarks: picking 100 winners among 1,000,000 weighted entrants (target well under
 * a second), the cost of freezing (sorting + digesting) that list, and memory per 100,000
 * entrants (heap and RSS growth while the frozen list and the pick tree are alive).
 */
import { createHash } from 'node:crypto';
import { freezeEntrants, pickSequence } from '../src/fairness/procedure.js';
import type { BenchResult } from './types.js';

const N = 1_000_000;

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

export async function run(): Promise<BenchResult[]> {
  gc();
  const before = process.memoryUsage();
  let peakHeap = before.heapUsed;
  let peakRss = before.rss;
  const sample = () => {
    const m = process.memoryUsage();
    peakHeap = Math.max(peakHeap, m.heapUsed);
    peakRss = Math.max(peakRss, m.rss);
  };

  const entrants = Array.from({ length: N }, (_, i) => ({
    userId: String(100_000_000 + ((i * 7919) % N)),
    login: `viewer_${i}`,
    weight: 1 + (i % 4),
  }));
  sample();
  const t0 = performance.now();
  const { frozen, digest } = freezeEntrants(entrants);
  const freezeMs = performance.now() - t0;
  sample();

  const pickTimes: number[] = [];
  let picks: number[] = [];
  for (let i = 0; i < 5; i++) {
    const seed = createHash('sha256').update(`bench-${i}`).digest();
    const t = performance.now();
    picks = pickSequence(seed, digest, frozen, 100);
    pickTimes.push(performance.now() - t);
    sample();
  }
  if (new Set(picks).size !== 100) throw new Error('bench: duplicate winners');
  const pickMs = median(pickTimes);
  const per100k = N / 100_000;
  const heapMb = (peakHeap - before.heapUsed) / 2 ** 20 / per100k;
  const rssMb = (peakRss - before.rss) / 2 ** 20 / per100k;

  return [
    {
      name: 'piece.fairness.pick100of1M',
      value: Number(pickMs.toFixed(1)),
      unit: 'ms',
      detail: `median of 5; weights 1-4; Fenwick build + 100 picks; freezing the list (sort + SHA-256) took ${freezeMs.toFixed(0)} ms`,
    },
    {
      name: 'piece.fairness.freeze1M',
      value: Number(freezeMs.toFixed(0)),
      unit: 'ms',
      detail: 'validate, sort by userId, digest 1,000,000 entrants',
    },
    {
      name: 'piece.fairness.heapPer100kEntrants',
      value: Number(heapMb.toFixed(2)),
      unit: 'MiB',
      detail: `peak heap growth / ${per100k} (input list + frozen copy + tree)`,
    },
    {
      name: 'piece.fairness.rssPer100kEntrants',
      value: Number(rssMb.toFixed(2)),
      unit: 'MiB',
      detail: `peak RSS growth / ${per100k}`,
    },
  ];
}
