import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { FileDrawRepository } from '../src/storage/index.js';
import { makeEntrant } from './support/fairness-records.js';
import { tempDataDir } from './support/storage-helpers.js';

const root = fileURLToPath(new URL('..', import.meta.url));
let cleanup: (() => Promise<void>) | undefined;
let running: ChildProcess | undefined;
afterEach(async () => {
  if (running && running.exitCode === null && running.signalCode === null) running.kill('SIGKILL');
  await cleanup?.();
});

describe('entry journal durability', () => {
  it('loses no entry appended more than 250 ms before a SIGKILL', async () => {
    const temp = await tempDataDir();
    cleanup = temp.cleanup;
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/storage-crash-child.ts', temp.dir], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    running = child;
    const reports: { count: number; at: number }[] = [];
    const lines = createInterface({ input: child.stdout });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    let killedAt = 0;
    // Kill once the child has been appending for 400 ms; every entry it reported more than
    // 250 ms before the kill must be on disk afterwards.
    await new Promise<void>((resolve, reject) => {
      child.on('error', reject);
      lines.on('line', (line) => {
        const m = /^appended (\d+) (\d+)$/.exec(line);
        if (!m || killedAt) return;
        reports.push({ count: Number(m[1]), at: Number(m[2]) });
        const now = Date.now();
        if (reports[0]!.at <= now - 400) {
          killedAt = now;
          child.kill('SIGKILL');
          resolve();
        }
      });
    });
    expect(await exited).toBe('SIGKILL');
    const safe = reports.filter((r) => r.at <= killedAt - 250).at(-1)!;
    expect(safe.count).toBeGreaterThanOrEqual(50);

    const repo = await FileDrawRepository.open(temp.dir);
    const open = await repo.openDraws();
    await repo.close();
    expect(open).toHaveLength(1);
    const ids = open[0]!.entrants.map((e) => e.userId);
    const expected = Array.from({ length: safe.count }, (_, i) => makeEntrant(i).userId);
    expect(ids.slice(0, safe.count)).toEqual(expected);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
