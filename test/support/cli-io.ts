/**
 * For the CLIs' tests (src/cli/history.ts, verify.ts): their stdout/stderr captured, a run of their
 * run function, and the file's data folder with the history the tests read.
 */
import { afterAll, beforeAll } from 'vitest';
import type { CliIo } from '../../src/cli/history.js';
import { FileDrawRepository } from '../../src/storage/index.js';
import { tempDataDir } from './storage-helpers.js';

export function captureIo(dataDir: string): {
  io: { dataDir: string; out: { write(t: string): boolean }; err: { write(t: string): boolean } };
  out: () => string;
  err: () => string;
} {
  let out = '';
  let err = '';
  return {
    io: {
      dataDir,
      out: { write: (t: string) => ((out += t), true) },
      err: { write: (t: string) => ((err += t), true) },
    },
    out: () => out,
    err: () => err,
  };
}

/** Runs a CLI's run function (`runHistoryCli`, `runVerifyCli`) over `dataDir`, its output captured. */
export async function runCli(
  cli: (argv: readonly string[], io: CliIo) => Promise<number>,
  dataDir: string,
  ...argv: string[]
): Promise<{ code: number; out: string; err: string }> {
  const c = captureIo(dataDir);
  const code = await cli(argv, c.io);
  return { code, out: c.out(), err: c.err() };
}

/**
 * A data folder for a test file, made before its tests (`fill` saves draws into its history, then
 * `after`, with the history closed, may change its files) and removed after them. Returns the
 * folder's path once made.
 */
export function historyForFile(
  fill: (repo: FileDrawRepository) => Promise<void>,
  after?: (dir: string) => Promise<void>,
): () => string {
  let dir = '';
  let cleanup: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDataDir());
    const repo = await FileDrawRepository.open(dir);
    await fill(repo);
    await repo.close();
    await after?.(dir);
  });
  afterAll(() => cleanup?.());
  return () => dir;
}
