/**
 * Unrevealed seeds in the storage adapter: moved out of history.json into DATA_DIR/seeds/<id>.seed
 * (0600, folder 0700), read back for open draws (restart), dropped from the vault once revealed or
 * final, never in the history export; written once per draw (not on every save); an old
 * history.json that still holds a `pendingSeed` is migrated when the repository opens it (both
 * history generations clean); temp files left by an interrupted durable write are removed at open
 * in every folder the storage writes in (ours only).
 */
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileDrawRepository } from '../src/storage/index.js';
import { toExport } from '../src/storage/export.js';
import { openRecord, readHistoryLog, tempDataDir } from './support/storage-helpers.js';

const SEED = '5eed'.repeat(16);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function repoIn(): Promise<{ dir: string; repo: FileDrawRepository }> {
  const { dir, cleanup } = await tempDataDir();
  cleanups.push(cleanup);
  const repo = await FileDrawRepository.open(dir);
  cleanups.push(() => repo.close());
  return { dir, repo };
}

describe('seed vault', () => {
  it("keeps an open draw's seed owner-only, out of history.json, and gives it back on restart", async () => {
    const { dir, repo } = await repoIn();
    await repo.saveDraw({ ...openRecord('d1'), pendingSeed: SEED });
    const file = join(dir, 'seeds', 'd1.seed');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'seeds'))).mode & 0o777).toBe(0o700);
    expect((await readHistoryLog(dir)).text).not.toContain(SEED);
    expect((await repo.getDraw('d1'))!.pendingSeed).toBe(SEED);
    await repo.close();

    const again = await FileDrawRepository.open(dir);
    cleanups.push(() => again.close());
    const [open] = await again.openDraws();
    expect(open!.record.pendingSeed).toBe(SEED);
    expect(toExport(open!.record)).not.toHaveProperty('pendingSeed');
    expect(JSON.stringify(toExport(open!.record))).not.toContain(SEED);

    // Revealed: the seed moves into the public record and the vault file goes.
    await again.saveDraw({
      ...open!.record,
      status: 'drawing',
      pendingSeed: undefined,
      fairness: { ...open!.record.fairness, seed: SEED },
    });
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await again.getDraw('d1'))!.fairness.seed).toBe(SEED);
  });

  it('drops the seed of a draw cancelled before its reveal', async () => {
    const { dir, repo } = await repoIn();
    await repo.saveDraw({ ...openRecord('d2'), pendingSeed: SEED });
    await repo.saveDraw({ ...openRecord('d2'), status: 'cancelled', pendingSeed: SEED });
    await expect(stat(join(dir, 'seeds', 'd2.seed'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await readHistoryLog(dir)).text).not.toContain(SEED);
  });

  it('writes the seed file once, not on every save of the draw, and removes it at the reveal', async () => {
    const { dir, repo } = await repoIn();
    const record = { ...openRecord('once'), pendingSeed: SEED };
    await repo.saveDraw(record);
    const file = join(dir, 'seeds', 'once.seed');
    const first = await stat(file);
    // Later saves (entrant counts, closing) carry the same pendingSeed: the file stays the same
    // inode (a rewrite through temp + rename would replace it).
    await repo.saveDraw({ ...record, entrants: 3 });
    await repo.saveDraw({ ...record, entrants: 5, status: 'drawing' });
    const after = await stat(file);
    expect(after.ino).toBe(first.ino);
    expect(after.mtimeMs).toBe(first.mtimeMs);
    await repo.saveDraw({
      ...record,
      status: 'drawing',
      pendingSeed: undefined,
      fairness: { ...record.fairness, seed: SEED },
    });
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
    // After a restart the file is found in place, not rewritten either.
    await repo.saveDraw({ ...openRecord('again'), pendingSeed: SEED });
    const before = await stat(join(dir, 'seeds', 'again.seed'));
    await repo.close();
    const reopened = await FileDrawRepository.open(dir);
    cleanups.push(() => reopened.close());
    const [open] = await reopened.openDraws();
    await reopened.saveDraw({ ...open!.record, entrants: 1 });
    expect((await stat(join(dir, 'seeds', 'again.seed'))).ino).toBe(before.ino);
  });

  it('removes left-over temps of an interrupted durable write at open, in every storage folder, ours only', async () => {
    const { dir, cleanup } = await tempDataDir();
    cleanups.push(cleanup);
    const ours = (name: string) => `.${name}.0123456789ab.tmp`;
    const planted: Record<string, string[]> = {
      '': [ours('history.json'), ours('merch-train.json'), 'notes.tmp', '.history.json.xyz.tmp'],
      draws: [ours('d1.entrants.json')],
      seeds: [ours('d1.seed'), 'keep-me.seed.tmp'],
      journal: [ours('d1.jsonl'), '.d1.jsonl.tmp'],
    };
    for (const [sub, names] of Object.entries(planted)) {
      await mkdir(join(dir, sub), { recursive: true });
      for (const name of names) await writeFile(join(dir, sub, name), `half-written ${SEED}`);
    }
    const repo = await FileDrawRepository.open(dir);
    cleanups.push(() => repo.close());
    const left = async (sub: string) => (await readdir(join(dir, sub))).filter((n) => n.includes('tmp')).sort();
    expect(await left('')).toEqual(['.history.json.xyz.tmp', 'notes.tmp']);
    expect(await left('draws')).toEqual([]);
    expect(await left('seeds')).toEqual(['keep-me.seed.tmp']);
    expect(await left('journal')).toEqual(['.d1.jsonl.tmp']);
  });

  it('migrates an old history.json that still holds pendingSeed when it is opened (the log and both kept generations clean)', async () => {
    const { dir, cleanup } = await tempDataDir();
    cleanups.push(cleanup);
    const OTHER = 'c0de'.repeat(16);
    const old = JSON.stringify({
      version: 1,
      draws: [
        { ...openRecord('old'), pendingSeed: SEED },
        {
          ...openRecord('done'),
          status: 'finished',
          pendingSeed: OTHER,
          fairness: { ...openRecord('done').fairness, seed: OTHER },
        },
      ],
    });
    await writeFile(join(dir, 'history.json'), old);
    await writeFile(join(dir, 'history.json.bak'), old);

    // Read-only (the CLIs): nothing changes on disk, but nothing read carries the seed either.
    const reader = await FileDrawRepository.open(dir, { readOnly: true });
    expect(JSON.stringify(await reader.listDraws())).not.toContain(SEED);
    await reader.close();
    expect(await readFile(join(dir, 'history.json'), 'utf8')).toBe(old);

    const repo = await FileDrawRepository.open(dir);
    cleanups.push(() => repo.close());
    // Without any save: the seed is in the vault (0600) and in neither history generation.
    const file = join(dir, 'seeds', 'old.seed');
    expect((await readFile(file, 'utf8')).trim()).toBe(SEED);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    for (const name of ['history.jsonl', 'history.v1.json', 'history.json.bak']) {
      const text = await readFile(join(dir, name), 'utf8');
      expect(text, name).not.toContain(SEED);
      expect(text, name).not.toContain('pendingSeed');
    }
    await expect(stat(join(dir, 'seeds', 'done.seed'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await repo.getDraw('old'))!.pendingSeed).toBe(SEED);
    expect((await repo.getDraw('done'))!.fairness.seed).toBe(OTHER);
  });
});
