/**
 * Child process for the data-directory lock tests: takes the lock of argv[2] as the OS argv[3]
 * names (default this one), prints `held`, and keeps it until it is killed.
 */
import { acquireDataDirLock } from '../../src/storage/lock.js';

await acquireDataDirLock(process.argv[2]!, {
  warn: () => undefined,
  platform: (process.argv[3] as NodeJS.Platform | undefined) ?? process.platform,
});
process.stdout.write('held\n');
setInterval(() => undefined, 60_000);
