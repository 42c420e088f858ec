/**
 * The read-only commands' (history, verify) choice of data directory: the mode `npm start` would
 * run in (live data in DATA_DIR, sandbox data in DATA_DIR/sandbox), unless `--sandbox` or `--live`
 * says otherwise. A forced mode needs no credentials: the scripts never connect anywhere.
 */
import { ConfigError, loadConfig, takeModeFlag } from '../config/index.js';
import { giftdropCommand, settingsGuide, thisInvocation } from '../platform/invocation.js';

/** Resolves the data directory for `argv`; exits 2 on conflicting flags, 1 on a bad config. */
export function cliDataDir(
  script: 'history' | 'verify',
  argv: readonly string[],
): { dataDir: string; mode: 'sandbox' | 'live'; rest: string[] } {
  const taken = takeModeFlag(argv);
  if (typeof taken === 'string') {
    process.stderr.write(`${script}: ${taken}\n`);
    process.exit(2);
  }
  try {
    const config = loadConfig(taken.mode ? { readOnlyMode: taken.mode } : {});
    return { dataDir: config.dataDir, mode: config.mode, rest: taken.rest };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(
      `giftdrop: ${err.message}\n${settingsGuide(thisInvocation())} ` +
        `To read a mode's data anyway: ${giftdropCommand(script, '--live')} (or --sandbox)\n`,
    );
    process.exit(1);
  }
}
