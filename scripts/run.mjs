/**
 * The entry of every package script that runs the bot or a CLI: `node scripts/run.mjs <entry>
 * [args...]` runs dist/<entry>.js in THIS process (no tsx, no child process), after bringing
 * dist/ up to date with src/ (scripts/build.mjs: a no-op when nothing changed, so a developer
 * edits src/ and runs `npm start` with no build step to remember).
 *
 * Contract: process.argv[1] is set to the entry's path, so the entry sees itself as the main
 * module, exactly as under `node dist/<entry>.js`. The package scripts run it without `exec`
 * (cmd.exe, which npm uses on Windows, has none), so a shell may sit between npm and this process.
 * When run by npm (npm_lifecycle_event is set) a watchdog (src/platform/parent-watch.ts) stops the
 * process when npm goes away: npm does not forward SIGHUP (or survive SIGKILL), and a bot whose
 * `npm start` is gone must not stay in chat as an orphan; the entry's own clean shutdown runs.
 * Node older than 22 and a build that cannot be done are each one line naming the problem, exit 1.
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

const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  console.error(
    `giftdrop: needs Node.js 22 or newer (this is ${process.version}): install the LTS from https://nodejs.org and run the command again`,
  );
  process.exit(1);
}

try {
  ensureBuilt({ log: (line) => process.stderr.write(`${line}\n`) });
} catch (err) {
  console.error(`giftdrop: ${err.message}`);
  process.exit(1);
}

if (process.env.npm_lifecycle_event) {
  const { watchParent } = await import(pathToFileURL(join(distDir, 'platform/parent-watch.js')).href);
  watchParent(process.platform, process.env.npm_lifecycle_script);
}

// Node's on-disk cache of compiled modules.
module.enableCompileCache();

const file = join(distDir, `${entry}.js`);
process.argv.splice(1, 2, file);
await import(pathToFileURL(file).href);
