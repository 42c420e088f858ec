/**
 * The read-only scripts' (history, verify) choice of data directory: the mode `npm start` would
 * run in (live data in DATA_DIR, sandbox data in DATA_DIR/sandbox), unless `--sandbox` or `--live`
 * says otherwise. A forced mode needs no credentials: the scripts never connect anywhere.
 */
import { loadConfigOrExit, takeModeFlag } from '../config/index.js';

/** Resolves the data directory for `argv`; exits 2 on conflicting flags, 1 on a bad config. */
export function cliDataDir(script: string, argv: readonly string[]): { dataDir: string; mode: 'sandbox' | 'live'; rest: string[] } {
  const taken = takeModeFlag(argv);
  if (typeof taken === 'string') {
    process.stderr.write(`${script}: ${taken}\n`);
    process.exit(2);
  }
  const config = loadConfigOrExit(taken.mode ? { readOnlyMode: taken.mode } : {});
  return { dataDir: config.dataDir, mode: config.mode, rest: taken.rest };
}
