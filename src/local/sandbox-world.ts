/**
 * Each sandbox run is a new sandbox world. The sandbox shop (its products, gift draws, prize links)
 * lives in memory and ends with its process, on a port that is gone afterwards; so what an earlier
 * run left in the sandbox folder (draws, prizes waiting to be redeemed, open draws' journals, the
 * merch train's count, processed events) cannot work with the next run's shop: every "Redeem"
 * link of it points at a shop that no longer exists. `startNewWorld` clears that folder before
 * the bot opens it, so the demo, the dashboard and the claim page only ever see prizes of their
 * own world. `--reset` (`npm start -- --reset`) clears the dashboard token too.
 *
 * Contract: acts only on the sandbox folder (DATA_DIR/sandbox, contract "Mode, and where each
 * mode keeps its data"): it throws for any other directory, so live data is never touched. The
 * data-directory lock (the running process's own) always stays. Returns what it removed, to say
 * it in one line. Does not: read the environment, print, or open the history.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../config/index.js';
import { modeDataDir } from '../config/mode.js';
import { LOCK_FILE } from '../storage/index.js';
import { TOKEN_FILE } from '../web/operator/dashboard-auth.js';
import { giftdropCommand } from '../platform/invocation.js';

export interface NewWorld {
  /** Names of the entries of the earlier world that were removed (empty: nothing was there). */
  cleared: string[];
  /** The dashboard token was removed too (`--reset`): the pages make a new one. */
  tokenReset: boolean;
}

/** Clears the earlier sandbox world from `config.dataDir` (DATA_DIR/sandbox only). */
export function startNewWorld(
  config: Pick<Config, 'mode' | 'dataDir' | 'dataRoot'>,
  options: { reset: boolean },
): NewWorld {
  const dir = resolve(config.dataDir);
  if (config.mode !== 'sandbox' || !config.dataRoot || dir !== resolve(modeDataDir(config.dataRoot, 'sandbox'))) {
    throw new Error(`refusing to clear ${dir}: only the sandbox folder (DATA_DIR/sandbox) holds a sandbox world`);
  }
  if (!existsSync(dir)) return { cleared: [], tokenReset: false };
  const cleared: string[] = [];
  let tokenReset = false;
  for (const name of readdirSync(dir)) {
    // The lock (and any file of its protocol) belongs to this process; the token stays unless reset.
    if (name.startsWith(LOCK_FILE) || (name === TOKEN_FILE && !options.reset)) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
    if (name === TOKEN_FILE) tokenReset = true;
    else cleared.push(name);
  }
  return { cleared, tokenReset };
}

/** The one line saying what `startNewWorld` did, or undefined when there was nothing to clear. */
export function newWorldLine(world: NewWorld, dataDir: string): string | undefined {
  const parts: string[] = [];
  if (world.cleared.length) {
    parts.push(
      `A new sandbox world: the earlier run's draws and prizes in ${dataDir} were cleared (its sandbox shop ended with it, so its prize links no longer work). This run's draws stay there until the next ${giftdropCommand('start')}.`,
    );
  }
  if (world.tokenReset) parts.push('The dashboard token was reset: a new one is made.');
  return parts.length ? parts.join(' ') : undefined;
}
