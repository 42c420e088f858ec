/**
 * The operating system's part of the disk protocol (src/storage/disk.ts), with the platform
 * passed explicitly so every branch runs in the tests on any OS:
 * - `syncDirectory`: fsync of a directory, which makes the names created, renamed or removed in
 *   it durable. Windows cannot open or flush a directory (the OS answers EPERM, EISDIR or EINVAL;
 *   NTFS journals the rename itself), so there those answers mean "nothing to do" and are skipped
 *   without error; elsewhere only EINVAL (a file system without directory fsync) is skipped and
 *   every other failure is thrown (a sync that failed must not pass as done).
 * - `renameReplacing`: rename over an existing file. On Windows an antivirus scanner or the
 *   search indexer briefly holds files open, and a rename then fails with EPERM, EBUSY or EACCES;
 *   it is retried a bounded number of times (RENAME_ATTEMPTS, doubling pauses, about 2.5 s in all)
 *   before the error is thrown. Elsewhere the first failure is thrown.
 * Does not: decide when to sync (the disk protocol does), or touch file contents.
 */
import { open, rename } from 'node:fs/promises';

/** The calls these helpers make, injectable so a test can play Windows' answers on Linux. */
export interface DirectoryCalls {
  /** Opens a directory for reading (node's `open(dir, 'r')`). */
  openDir(dir: string): Promise<{ sync(): Promise<void>; close(): Promise<void> }>;
}

export interface RenameCalls {
  rename(from: string, to: string): Promise<void>;
  sleep(ms: number): Promise<void>;
}

const nodeDirectoryCalls: DirectoryCalls = { openDir: (dir) => open(dir, 'r') };
const nodeRenameCalls: RenameCalls = {
  rename,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Error codes by which Windows says a directory cannot be opened or flushed. */
const WINDOWS_NO_DIR_SYNC = new Set(['EPERM', 'EISDIR', 'EINVAL']);
/** Error codes by which any OS says its file system has no directory fsync. */
const NO_DIR_SYNC = new Set(['EINVAL']);

const errorCode = (err: unknown) => (err as NodeJS.ErrnoException | undefined)?.code ?? '';

/** Whether `err` from opening or syncing a directory means "this OS has no directory sync". */
function noDirectorySync(err: unknown, platform: NodeJS.Platform): boolean {
  return (platform === 'win32' ? WINDOWS_NO_DIR_SYNC : NO_DIR_SYNC).has(errorCode(err));
}

/** Flushes `dir`'s entries to disk where the OS can (see the module comment). */
export async function syncDirectory(
  dir: string,
  platform: NodeJS.Platform,
  calls: DirectoryCalls = nodeDirectoryCalls,
): Promise<void> {
  let handle;
  try {
    handle = await calls.openDir(dir);
  } catch (err) {
    if (noDirectorySync(err, platform)) return;
    throw err;
  }
  try {
    await handle.sync();
  } catch (err) {
    if (!noDirectorySync(err, platform)) throw err;
  } finally {
    await handle.close();
  }
}

/** Attempts of a rename on Windows before its EPERM/EBUSY/EACCES is thrown. */
export const RENAME_ATTEMPTS = 8;
/** Error codes of a file briefly held open by another program (Windows). */
const WINDOWS_FILE_HELD = new Set(['EPERM', 'EBUSY', 'EACCES']);

/** Renames `from` over `to`, retrying on Windows while another program holds a file (module comment). */
export async function renameReplacing(
  from: string,
  to: string,
  platform: NodeJS.Platform,
  calls: RenameCalls = nodeRenameCalls,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await calls.rename(from, to);
      return;
    } catch (err) {
      if (platform !== 'win32' || !WINDOWS_FILE_HELD.has(errorCode(err)) || attempt >= RENAME_ATTEMPTS) throw err;
      await calls.sleep(20 * 2 ** (attempt - 1)); // 20, 40, ... 1280 ms: 2.5 s at most in all
    }
  }
}
