/**
 * Unrevealed seeds in the storage adapter: moved out of history.json into DATA_DIR/seeds/<id>.seed
 * (0600, folder 0700), read back for open draws (restart), dropped from the vault once revealed or
 * final, never in the history export; an old history.json that still holds a `pendingSeed` is
 * migrated on the next save.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileDrawRepository } from '../src/storage/index.js';
import { toExport } from '../src/storage/export.js';
import { openRecord, tempDataDir } from './support/storage-helpers.js';

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
  it('keeps an open draw\'s seed owner-only, out of history.json, and gives it back on restart', async () => {
    const { dir, repo } = await repoIn();
    await repo.saveDraw({ ...openRecord('d1'), pendingSeed: SEED });
    const file = join(dir, 'seeds', 'd1.seed');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'seeds'))).mode & 0o777).toBe(0o700);
    expect(await readFile(join(dir, 'history.json'), 'utf8')).not.toContain(SEED);
    expect((await repo.getDraw('d1'))!.pendingSeed).toBe(SEED);
    await repo.close();

    const again = await FileDrawRepository.open(dir);
    cleanups.push(() => again.close());
    const [open] = await again.openDraws();
    expect(open!.record.pendingSeed).toBe(SEED);
    expect(toExport(open!.record)).not.toHaveProperty('pendingSeed');
    expect(JSON.stringify(toExport(open!.record))).not.toContain(SEED);

    // Revealed: the seed moves into the public record and the vault file goes.
    await again.saveDraw({ ...open!.record, status: 'drawing', pendingSeed: undefined, fairness: { ...open!.record.fairness, seed: SEED } });
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await again.getDraw('d1'))!.fairness.seed).toBe(SEED);
  });

  it('drops the seed of a draw cancelled before its reveal', async () => {
    const { dir, repo } = await repoIn();
    await repo.saveDraw({ ...openRecord('d2'), pendingSeed: SEED });
    await repo.saveDraw({ ...openRecord('d2'), status: 'cancelled', pendingSeed: SEED });
    await expect(stat(join(dir, 'seeds', 'd2.seed'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readFile(join(dir, 'history.json'), 'utf8')).not.toContain(SEED);
  });

  it('migrates an old history.json that still holds pendingSeed on the next save', async () => {
    const { dir, cleanup } = await tempDataDir();
    cleanups.push(cleanup);
    await writeFile(join(dir, 'history.json'), JSON.stringify({ version: 1, draws: [{ ...openRecord('old'), pendingSeed: SEED }] }));
    const repo = await FileDrawRepository.open(dir);
    cleanups.push(() => repo.close());
    const record = (await repo.getDraw('old'))!;
    expect(record.pendingSeed).toBe(SEED);
    await repo.saveDraw(record);
    expect(await readFile(join(dir, 'history.json'), 'utf8')).not.toContain(SEED);
    expect((await readFile(join(dir, 'seeds', 'old.seed'), 'utf8')).trim()).toBe(SEED);
    expect((await repo.getDraw('old'))!.pendingSeed).toBe(SEED);
  });
});
