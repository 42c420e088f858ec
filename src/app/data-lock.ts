/**
 * The entry points' use of the data-directory lock (storage/lock.ts): take it for the mode's data
 * directory or print one line naming the lock file and the holder's PID and exit non-zero. A stale
 * lock taken over is reported through `warn`. The lock is released on process exit.
 */
import { acquireDataDirLock, DataDirLockedError, type DataDirLock } from '../storage/lock.js';

/** Takes `<dataDir>/giftdrop.lock` or exits 1 with one line on stderr. */
export function lockDataDirOrExit(dataDir: string, warn: (message: string) => void): DataDirLock {
  try {
    return acquireDataDirLock(dataDir, { warn });
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      process.stderr.write(`giftdrop: ${err.message}\n`);
    } else {
      process.stderr.write(`giftdrop: cannot lock the data directory ${dataDir}: ${(err as Error).message}\n`);
    }
    process.exit(1);
  }
}
