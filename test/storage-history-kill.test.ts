/**
 * A kill -9 in the middle of history writes, at 20 random points: a real child process (first
 * migrating a 300-draw history.json of older versions) saves finished draws one after another
 * (each appended to history.jsonl and synced) and is SIGKILLed after a random number of completed
 * saves plus a random delay. After every kill the history is readable as it is (a torn last line
 * is dropped quietly) and holds every draw the child had reported finished; a restart removes any
 * temp file a killed write left behind.
 */
import { spawn } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { FileDrawRepository } from '../src/storage/index.js';
import { finishedRecord } from './support/fairness-records.js';
import { tempDataDir } from './support/storage-helpers.js';

const root = fileURLToPath(new URL('..', import.meta.url));
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

/** Runs the child until it has reported `saves` finished draws, waits `delayMs`, kills it with SIGKILL. */
function runAndKill(dir: string, saves: number, delayMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/history-kill-child.ts', dir], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const finished: string[] = [];
    let killing = false;
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /^finished (\S+)$/.exec(line);
      if (!m) return;
      finished.push(m[1]!);
      if (finished.length >= saves && !killing) {
        killing = true;
        setTimeout(() => child.kill('SIGKILL'), delayMs);
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`child ended with code ${code}, signal ${signal}`));
      // Lines read before the kill are the saves that had resolved.
      else resolve(finished);
    });
  });
}

describe('the history log under kill -9', () => {
  it('stays readable with every finished draw, at 20 random kill points', async () => {
    const temp = await tempDataDir();
    cleanup = temp.cleanup;
    // A history of realistic size, so a kill is likely to land inside a write.
    const seed = Array.from({ length: 300 }, (_, i) => {
      const { frozenEntrants: _f, ...record } = finishedRecord({ id: `seed_${i}`, entrants: 3, winners: 1 });
      return record;
    });
    await writeFile(join(temp.dir, 'history.json'), JSON.stringify({ version: 1, draws: seed }));

    const reported: string[] = [];
    for (let round = 0; round < 20; round++) {
      const saves = 1 + Math.floor(Math.random() * 6);
      const delayMs = Math.floor(Math.random() * 15);
      reported.push(...(await runAndKill(temp.dir, saves, delayMs)));

      const repo = await FileDrawRepository.open(temp.dir, { readOnly: true });
      try {
        expect(repo.notes, `round ${round}: the history log must be readable`).toEqual([]);
        const byId = new Map((await repo.listDraws()).map((r) => [r.id, r]));
        expect(byId.size).toBeGreaterThanOrEqual(300 + reported.length);
        for (const id of reported) expect(byId.get(id)?.status, `round ${round}: ${id}`).toBe('finished');
      } finally {
        await repo.close();
      }
    }
    expect(reported.length).toBeGreaterThanOrEqual(20);

    // A restart (writable) clears the temp files killed writes left behind.
    const repo = await FileDrawRepository.open(temp.dir);
    await repo.close();
    expect((await readdir(temp.dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  }, 120_000);
});
