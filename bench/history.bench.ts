/**
 * History store benchmark (issue 40): what a save costs as the history grows, through the real
 * repository and disk protocol on this machine's disk, bytes counted at the disk protocol's
 * file-system layer (every byte the bot hands to write(), temp files and appends included).
 * - `storage.history.save{10,1000,10000}`: one more finished draw saved into a history of 10,
 *   1,000 and 10,000 draws (median time of ROUNDS saves, the sizes taking turns within each round;
 *   bytes per save); the 10,000 row's time as a ratio to the 10 row's, same run (target <= 2).
 * - `storage.history.giftDraw10000Bytes`: a whole gift draw (opened, 200 entries journaled, closed,
 *   finished at the fake shop, announced) run by the real engine with 10,000 draws in the history:
 *   bytes written under DATA_DIR (target < 2 MB).
 * - `storage.history.restart10000`: opening the repository on that folder (history log of 10,000
 *   draws), median of 3 (target <= 5 s).
 * The 10,000-draw folders start as a history.json of the previous format and are migrated by the
 * first open (`storage.history.migrate10000`, no target).
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileDrawRepository } from '../src/storage/index.js';
import { nodeFileSystem, type FileSystem } from '../src/storage/disk.js';
import { finishedRecord } from '../test/support/fairness-records.js';
import { chatMsg, harness } from '../test/support/giveaway-fakes.js';
import { loadNote, median, QUICK } from './e2e-support.js';
import type { BenchResult } from './types.js';

const ROUNDS = QUICK ? 5 : 31;

/** This machine's file system, counting the bytes written through it. */
function countingFs(): { fs: FileSystem; bytes: () => number } {
  const real = nodeFileSystem(process.platform);
  let bytes = 0;
  const counted = (open: (p: string) => ReturnType<FileSystem['openNew']>) => async (path: string) => {
    const file = await open(path);
    return { ...file, write: (data: Uint8Array) => ((bytes += data.length), file.write(data)) };
  };
  return { fs: { ...real, openNew: counted(real.openNew), openAppend: counted(real.openAppend) }, bytes: () => bytes };
}

/** A data folder holding a history.json (previous format) of `draws` finished draws. */
async function folderWith(draws: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'giftdrop-bench-history-'));
  const records = Array.from({ length: draws }, (_, i) => {
    const { frozenEntrants: _f, ...stored } = finishedRecord({ id: `past_${i}`, entrants: 3, winners: 2 });
    return stored;
  });
  await writeFile(join(dir, 'history.json'), JSON.stringify({ version: 1, draws: records }, null, 2));
  return dir;
}

interface Sized {
  draws: number;
  dir: string;
  migrateMs: number;
  repo: FileDrawRepository;
  counter: ReturnType<typeof countingFs>;
  times: number[];
  bytes: number;
}

/** A migrated folder of `draws` draws, opened on a counting file system. */
async function prepare(draws: number): Promise<Sized> {
  const dir = await folderWith(draws);
  const t = performance.now();
  await (await FileDrawRepository.open(dir)).close();
  const migrateMs = performance.now() - t;
  const counter = countingFs();
  const repo = await FileDrawRepository.open(dir, { fileSystem: counter.fs });
  return { draws, dir, migrateMs, repo, counter, times: [], bytes: 0 };
}

/**
 * ROUNDS saves into each history, the sizes taking turns within every round (in a rotating
 * order), so each samples the same stretches of a shared machine's load.
 */
async function saveCosts(sizes: Sized[]): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < sizes.length; k++) {
      const s = sizes[(round + k) % sizes.length]!;
      const { frozenEntrants: _f, ...record } = finishedRecord({ id: `new_${round}`, entrants: 3, winners: 2 });
      const before = s.counter.bytes();
      const t = performance.now();
      await s.repo.saveDraw(record);
      s.times.push(performance.now() - t);
      s.bytes += s.counter.bytes() - before;
    }
  }
  for (const s of sizes) await s.repo.close();
}

async function giftDrawBytes(dir: string): Promise<number> {
  const counter = countingFs();
  const h = await harness({ dir, fileSystem: counter.fs });
  const before = counter.bytes();
  const draw = h.shop.addDraw({ id: 'gdr_bench', gifts: 2, durationSeconds: 60 });
  await h.svc.handleGiftDrawStarted(draw, 'evt-bench');
  await h.repo.markEventProcessed('evt-bench');
  for (let i = 0; i < 200; i++) h.svc.enter(chatMsg(`viewer${i}`));
  await h.repo.flush();
  const done = once(h.svc.events, 'draw-finished');
  h.clock.advance(60_000);
  await done;
  await h.svc.whenIdle();
  await h.shutdown();
  return counter.bytes() - before;
}

export async function run(): Promise<BenchResult[]> {
  const load = loadNote();
  const sizes = [await prepare(10), await prepare(1000), await prepare(10_000)];
  await saveCosts(sizes);
  const [small, mid, large] = sizes.map((x) => ({ ...x, ms: median(x.times), bytes: x.bytes / ROUNDS })) as [
    Sized & { ms: number },
    Sized & { ms: number },
    Sized & { ms: number },
  ];
  const ratio = large.ms / small.ms;
  const drawBytes = await giftDrawBytes(large.dir);
  const restarts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    await (await FileDrawRepository.open(large.dir)).close();
    restarts.push(performance.now() - t);
  }
  for (const r of [small, mid, large]) await rm(r.dir, { recursive: true, force: true });
  const row = (n: number, r: { ms: number; bytes: number }): BenchResult => ({
    name: `storage.history.save${n}`,
    value: r.ms,
    unit: 'ms/save',
    detail: `${Math.round(r.bytes)} bytes written per save; median of ${ROUNDS}, sizes taking turns each round; ${load}`,
  });
  return [
    row(10, small),
    row(1000, mid),
    row(10_000, large),
    {
      name: 'storage.history.save10000Over10',
      value: ratio,
      unit: 'x',
      target: '<= 2',
      ok: ratio <= 2,
      detail: `${large.ms.toFixed(2)} / ${small.ms.toFixed(2)} ms, same run; ${load}`,
    },
    {
      name: 'storage.history.giftDraw10000Bytes',
      value: drawBytes,
      unit: 'bytes',
      target: '< 2000000',
      ok: drawBytes < 2_000_000,
      detail: `whole gift draw (200 entrants, 2 gifts) by the engine, 10,000 draws in the history; ${load}`,
    },
    {
      name: 'storage.history.restart10000',
      value: median(restarts),
      unit: 'ms',
      target: '<= 5000',
      ok: median(restarts) <= 5000,
      detail: `open + close on a 10,000-draw history log, median of 3; ${load}`,
    },
    {
      name: 'storage.history.migrate10000',
      value: large.migrateMs,
      unit: 'ms',
      detail: `first open of a 10,000-draw history.json (previous format); ${load}`,
    },
  ];
}
