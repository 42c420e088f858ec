/**
 * src/platform/files.ts on every platform's branch, run on this machine: Windows' answers to a
 * directory sync (EPERM, EISDIR, EINVAL) are skipped there and thrown elsewhere; a rename held by
 * another program (EPERM, EBUSY, EACCES) is retried a bounded number of times on Windows only.
 * The real directory sync runs on a real temp directory.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RENAME_ATTEMPTS, renameReplacing, syncDirectory, type DirectoryCalls } from '../src/platform/files.js';

const failing = (code: string) => Object.assign(new Error(code), { code });

function dirCalls(openError?: string, syncError?: string): DirectoryCalls & { synced: number; closed: number } {
  const calls = {
    synced: 0,
    closed: 0,
    openDir: async () => {
      if (openError) throw failing(openError);
      return {
        sync: async () => {
          if (syncError) throw failing(syncError);
          calls.synced += 1;
        },
        close: async () => {
          calls.closed += 1;
        },
      };
    },
  };
  return calls;
}

describe('syncDirectory', () => {
  it('syncs a real directory on this machine', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'giftdrop-platform-'));
    try {
      await expect(syncDirectory(dir, process.platform)).resolves.toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each(['EPERM', 'EISDIR', 'EINVAL'])(
    'win32: a directory that cannot be opened (%s) is skipped without error',
    async (code) => {
      await expect(syncDirectory('C:\\data', 'win32', dirCalls(code))).resolves.toBeUndefined();
    },
  );

  it.each(['EPERM', 'EINVAL'])(
    'win32: a directory that cannot be flushed (%s) is skipped, and its handle closed',
    async (code) => {
      const calls = dirCalls(undefined, code);
      await expect(syncDirectory('C:\\data', 'win32', calls)).resolves.toBeUndefined();
      expect(calls.closed).toBe(1);
    },
  );

  it('linux and darwin: EPERM or EISDIR are real failures and thrown; EINVAL (no directory fsync) is skipped', async () => {
    for (const platform of ['linux', 'darwin'] as const) {
      await expect(syncDirectory('/data', platform, dirCalls('EPERM'))).rejects.toMatchObject({ code: 'EPERM' });
      await expect(syncDirectory('/data', platform, dirCalls(undefined, 'EIO'))).rejects.toMatchObject({ code: 'EIO' });
      await expect(syncDirectory('/data', platform, dirCalls(undefined, 'EINVAL'))).resolves.toBeUndefined();
    }
  });

  it('win32: any other failure (EIO) is thrown', async () => {
    await expect(syncDirectory('C:\\data', 'win32', dirCalls(undefined, 'EIO'))).rejects.toMatchObject({ code: 'EIO' });
  });
});

/** A rename that fails with `code` the first `failures` times. */
function flakyRename(code: string, failures: number) {
  const state = { attempts: 0, pauses: [] as number[] };
  return {
    state,
    calls: {
      rename: async () => {
        state.attempts += 1;
        if (state.attempts <= failures) throw failing(code);
      },
      sleep: async (ms: number) => {
        state.pauses.push(ms);
      },
    },
  };
}

describe('renameReplacing', () => {
  it('renames over an existing file on this machine', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'giftdrop-platform-'));
    try {
      await writeFile(join(dir, 'a'), 'new');
      await writeFile(join(dir, 'b'), 'old');
      await renameReplacing(join(dir, 'a'), join(dir, 'b'), process.platform);
      expect(await readFile(join(dir, 'b'), 'utf8')).toBe('new');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each(['EPERM', 'EBUSY', 'EACCES'])(
    'win32: a file held by another program (%s) is retried until the rename goes through',
    async (code) => {
      const { state, calls } = flakyRename(code, 3);
      await renameReplacing('a', 'b', 'win32', calls);
      expect(state.attempts).toBe(4);
      expect(state.pauses).toEqual([20, 40, 80]);
    },
  );

  it('win32: the retries are bounded, then the error is thrown', async () => {
    const { state, calls } = flakyRename('EBUSY', 1000);
    await expect(renameReplacing('a', 'b', 'win32', calls)).rejects.toMatchObject({ code: 'EBUSY' });
    expect(state.attempts).toBe(RENAME_ATTEMPTS);
    expect(state.pauses.reduce((a, b) => a + b, 0)).toBeLessThan(3000);
  });

  it('linux: EPERM is thrown at once; win32: other errors (ENOENT) are not retried', async () => {
    const linux = flakyRename('EPERM', 1);
    await expect(renameReplacing('a', 'b', 'linux', linux.calls)).rejects.toMatchObject({ code: 'EPERM' });
    expect(linux.state.attempts).toBe(1);
    const win = flakyRename('ENOENT', 1);
    await expect(renameReplacing('a', 'b', 'win32', win.calls)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(win.state.attempts).toBe(1);
  });
});
