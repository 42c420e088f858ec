/**
 * The entry of every package script that runs the bot or a CLI: `node scripts/run.mjs <entry>
 * [args...]` runs dist/<entry>.js in THIS process (no tsx, no child process), after bringing
 * dist/ up to date with src/ (scripts/build.mjs: a no-op when nothing changed, so a developer
 * edits src/ and runs `npm start` with no build step to remember).
 *
 * Contract: process.argv[1] is set to the entry's path, so the entry sees itself as the main
 * module, exactly as under `node dist/<entry>.js`. When run by npm (npm_lifecycle_event is set)
 * a watchdog stops the process when its parent goes away: npm does not forward SIGHUP (or survive
 * SIGKILL), and a bot whose `npm start` is gone must not stay in chat as an orphan. It sends
 * SIGTERM to this process, so the entry's own clean shutdown runs. A build that cannot be done
 * prints one line naming the problem and exits 1.
 */
import module from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { distDir, ensureBuilt } from './build.mjs';

const entry = process.argv[2];
if (!entry || !/^[\w/-]+$/.test(entry)) {
  console.error('usage: node scripts/run.mjs <entry under src/, without .ts> [args...]');
  process.exit(2);
}

try {
  ensureBuilt({ log: (line) => process.stderr.write(`${line}\n`) });
} catch (err) {
  console.error(`giftdrop: ${err.message}`);
  process.exit(1);
}

/** How often the watchdog looks at the parent process (ms). */
const PARENT_POLL_MS = 250;
if (process.env.npm_lifecycle_event) {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.kill(process.pid, 'SIGTERM');
  }, PARENT_POLL_MS);
  timer.unref();
}

// Node's on-disk cache of compiled modules (Node 22.1 and newer have it; Node 20 compiles as before).
module.enableCompileCache?.();

const file = join(distDir, `${entry}.js`);
process.argv.splice(1, 2, file);
await import(pathToFileURL(file).href);
