/**
 * The entry points' use of the data-directory lock (storage/lock.ts): take it for the mode's data
 * directory or print one line naming the lock file and the holder's PID and exit non-zero. A stale
 * lock taken over is reported through `warn`. The lock is released on process exit. Before that,
 * where file modes protect (not Windows), DATA_DIR (and the mode's folder in it) must be the user's
 * own and not writable by others (platform/protection.ts `privacyProblem`): otherwise one line
 * with the fix, exit 1, nothing written.
 */
import { privacyProblem } from '../platform/protection.js';
import { acquireDataDirLock, DataDirLockedError, type DataDirLock } from '../storage/index.js';

/**
 * Takes `<dataDir>/giftdrop.lock` or exits 1 with one line on stderr. `dataRoot`: DATA_DIR itself,
 * when `dataDir` is below it; `secretFiles`: files in it that hold secrets (the dashboard token).
 */
export async function lockDataDirOrExit(
  dataDir: string,
  warn: (message: string) => void,
  o: { dataRoot?: string; secretFiles?: string[] } = {},
): Promise<DataDirLock> {
  const checks: [string, string][] = [
    ...[...new Set([o.dataRoot ?? dataDir, dataDir])].map((d): [string, string] => [
      d,
      'the data directory (DATA_DIR)',
    ]),
    ...(o.secretFiles ?? []).map((f): [string, string] => [f, 'the secret file']),
  ];
  for (const [path, what] of checks) {
    const problem = privacyProblem(path, what, process.platform);
    if (problem) {
      process.stderr.write(`giftdrop: ${problem}\n`);
      process.exit(1);
    }
  }
  try {
    return await acquireDataDirLock(dataDir, { warn, platform: process.platform });
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      process.stderr.write(`giftdrop: ${err.message}\n`);
    } else {
      process.stderr.write(`giftdrop: cannot lock the data directory ${dataDir}: ${(err as Error).message}\n`);
    }
    process.exit(1);
  }
}
