/**
 * Which mode a run is in and where each mode keeps its data (contract "Mode, and where each mode
 * keeps its data"): live data in DATA_DIR, sandbox data in DATA_DIR/sandbox, so a demo never reads
 * or writes the real history. Also the read-only scripts' `--sandbox` / `--live` flags. Pure
 * helpers: reads no environment and touches no file (index.ts does the reading).
 */
import { join } from 'node:path';

/** The variables whose presence means "this is meant to be a live bot". */
export const LIVE_CREDENTIAL_ENV = [
  'TWITCH_CHANNEL',
  'TWITCH_USERNAME',
  'TWITCH_TOKEN',
  'FOURTHWALL_USERNAME',
  'FOURTHWALL_PASSWORD',
  'FOURTHWALL_ACCESS_TOKEN',
  'FOURTHWALL_REFRESH_TOKEN',
  'FOURTHWALL_CLIENT_ID',
  'FOURTHWALL_CLIENT_SECRET',
  'FOURTHWALL_WEBHOOK_SECRET',
  'FOURTHWALL_APP_HMAC_KEY',
] as const;

/** Name of the sandbox's own folder inside DATA_DIR. */
const SANDBOX_SUBDIR = 'sandbox';

/** The directory a mode reads and writes: DATA_DIR for live, DATA_DIR/sandbox for sandbox. */
export function modeDataDir(dataRoot: string, mode: 'sandbox' | 'live'): string {
  return mode === 'sandbox' ? join(dataRoot, SANDBOX_SUBDIR) : dataRoot;
}

/** The leading problem line when some live credentials are set but not all (names only, never values). */
export function partialCredentialsProblem(set: readonly string[]): string {
  return (
    `live credentials are partly set (${set.join(', ')}): the bot will not fall back to the demo. ` +
    'Set each missing variable below, or GIFTDROP_MODE=sandbox to run the demo'
  );
}

/**
 * Takes `--sandbox` / `--live` out of a script's arguments. Returns the forced mode (undefined
 * when neither is given) and the other arguments, or an error text when both are given.
 */
export function takeModeFlag(argv: readonly string[]): { mode?: 'sandbox' | 'live'; rest: string[] } | string {
  let mode: 'sandbox' | 'live' | undefined;
  const rest: string[] = [];
  for (const arg of argv) {
    if (arg === '--sandbox' || arg === '--live') {
      const wanted = arg === '--sandbox' ? 'sandbox' : 'live';
      if (mode && mode !== wanted) return '--sandbox and --live cannot be combined';
      mode = wanted;
    } else rest.push(arg);
  }
  return { mode, rest };
}
