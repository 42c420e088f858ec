/**
 * Storage benchmark: the cost of journaling 1,000 entries (appendEntrant x 1000 + flush) with an
 * empty history and with 1,000 past draws in it. The ratio shows whether the per-entry cost grows
 * with the history (target <= 1.5). Rounds alternate which data directory goes first and the
 * medians are compared, because the machine is shared and noisy.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DrawRecord, Entrant } from '../src/giveaway/model.js';
import { noRoles } from '../src/shared/chat.js';
import { FileDrawRepository } from '../src/storage/index.js';
import type { BenchResult } from './types.js';

const ENTRIES = 1000;
const ROUNDS = 15;

function record(id: string, status: DrawRecord['status'], winners: number): DrawRecord {
  return {
    id,
    kind: 'link-giveaway',
    status,
    source: { packageId: `pkg_${id}` },
    offer: { id: 'prod_1', name: 'Sticker pack' },
    gifts: winners,
    openedAt: '2026-01-01T00:00:00.000Z',
    closesAt: '2026-01-01T00:01:00.000Z',
    closedAt: status === 'open' ? undefined : '2026-01-01T00:01:00.000Z',
    entrants: 500,
    winners: Array.from({ length: winners }, (_, i) => ({
      userId: String(1000 + i),
      login: `winner${i}`,
      displayName: `Winner${i}`,
      pick: i,
      redeemUrl: `https://shop.example/gifts/gft_${id}_${i}`,
    })),
    fairness: {
      commitment: 'c'.repeat(64),
      seed: 's'.repeat(64),
      entrantsDigest: 'd'.repeat(64),
      algorithm: 'giftdrop-hmac-sha256-v1',
    },
  };
}

function entrant(i: number): Entrant {
  return {
    userId: String(5_000_000 + i),
    login: `viewer${i}`,
    displayName: `Viewer${i}`,
    weight: 1,
    roles: noRoles,
    enteredAt: 1_767_225_600_000 + i,
  };
}

async function prepare(pastDraws: number): Promise<{ repo: FileDrawRepository; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'giftdrop-bench-'));
  const draws = Array.from({ length: pastDraws }, (_, i) => record(`past_${i}`, 'finished', 3));
  await writeFile(join(dir, 'history.json'), JSON.stringify({ version: 1, draws }));
  const repo = await FileDrawRepository.open(dir);
  return { repo, dir };
}

async function journalRound(repo: FileDrawRepository, round: number): Promise<number> {
  const id = `bench_${round}`;
  await repo.saveDraw(record(id, 'open', 0));
  const t = performance.now();
  for (let i = 0; i < ENTRIES; i++) repo.appendEntrant(id, entrant(i));
  await repo.flush();
  const ms = performance.now() - t;
  await repo.saveDraw(record(id, 'cancelled', 0));
  return ms;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function run(): Promise<BenchResult[]> {
  const empty = await prepare(0);
  const full = await prepare(1000);
  const a: number[] = [];
  const b: number[] = [];
  try {
    await journalRound(empty.repo, -1);
    await journalRound(full.repo, -1);
    for (let r = 0; r < ROUNDS; r++) {
      if (r % 2 === 0) {
        a.push(await journalRound(empty.repo, r));
        b.push(await journalRound(full.repo, r));
      } else {
        b.push(await journalRound(full.repo, r));
        a.push(await journalRound(empty.repo, r));
      }
    }
  } finally {
    await empty.repo.close();
    await full.repo.close();
    await rm(empty.dir, { recursive: true, force: true });
    await rm(full.dir, { recursive: true, force: true });
  }
  const ma = median(a);
  const mb = median(b);
  const ratio = mb / ma;
  return [
    {
      name: 'storage.journal1000.emptyHistory',
      value: Number(ma.toFixed(2)),
      unit: 'ms',
      detail: `1,000 appendEntrant + flush, median of ${ROUNDS}`,
    },
    {
      name: 'storage.journal1000.history1000',
      value: Number(mb.toFixed(2)),
      unit: 'ms',
      detail: `same with 1,000 past draws in history.json, median of ${ROUNDS}`,
    },
    {
      name: 'storage.journal1000.ratio',
      value: Number(ratio.toFixed(3)),
      unit: 'x',
      target: '<= 1.5',
      ok: ratio <= 1.5,
      detail: 'history1000 / emptyHistory',
    },
  ];
}
