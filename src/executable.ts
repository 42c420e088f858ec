/**
 * The single executable's entry: scripts/package.mjs bundles it (with everything it loads) into
 * Node's own binary as giftdrop-win-x64.exe and giftdrop-linux-x64. It behaves like the npm
 * scripts of a clone:
 *   giftdrop                        what `npm start` runs (src/main.ts): the sandbox demo without
 *                                   credentials, live mode with them
 *   giftdrop --reset                `npm start -- --reset` (sandbox-world.ts)
 *   giftdrop history [args]         `npm run history -- [args]`
 *   giftdrop verify <id> [args]     `npm run verify -- <id> [args]`
 *   giftdrop setup                  `npm run setup`: the setup page's questions in the terminal
 *                                   (nothing set up yet), else the check of every setting
 *   giftdrop --version | --help
 *
 * Contract (shared contract "The single executables and their release"):
 * - It reads the `.env` in the folder it is started from, else the one beside it. It works in the
 *   folder of the `.env` it reads, or, with none, in its own folder (wherever it was started
 *   from): it changes into that folder first, so `.env`, config/giftdrop.json, DATA_DIR (default
 *   `data`: beside the executable unless a `.env` says otherwise) and LOG_FILE are found relative
 *   to it exactly as `npm start` finds them relative to the clone.
 * - It names itself in everything it prints (`.\giftdrop-win-x64.exe history --draw <id>`,
 *   `./giftdrop-linux-x64 --help`), never npm: it declares itself to platform/invocation.ts
 *   before anything else runs.
 * - In a Windows console window of its own (double-clicked), a failure waits for Enter before the
 *   window closes (platform/console-window.ts).
 * Every command module is loaded only when chosen. No top-level await: the bundle is CommonJS.
 * A command it does not know: one line, exit 2.
 */
import { existsSync, readSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { holdWindowOnFailure, ownsConsoleWindow } from './platform/console-window.js';
import { giftdropCommand, startedAsExecutable } from './platform/invocation.js';

/** package.json's version, defined by scripts/package.mjs (esbuild `define`); undefined elsewhere. */
declare const GIFTDROP_VERSION: string | undefined;
/** The address of giftdrop's README (the repository), when scripts/package.mjs knew it; undefined elsewhere. */
declare const GIFTDROP_HOME: string | undefined;

/** The usage text, naming this file as it is typed (`name`: the executable's file name). */
function usage(name: string): string {
  return `usage: ${giftdropCommand('start', '[command]')}
  (none)              run the bot: until it is set up, the sandbox demo and the setup page it
                      prints (set up for your channel there, then Go live); once set up, live
  --reset             run the sandbox demo with a new dashboard token (every run is a new sandbox world)
  history [options]   the draws in the history (${giftdropCommand('history', '--help')} for the options)
  verify <draw id>    re-check a draw's fairness from the history (${giftdropCommand('verify', '--help')})
  setup               the setup page in this terminal (for a machine without a browser): asks its
                      questions until the bot can go live; once set up, checks every setting
                      and says what to fix
  --version           print the version
Settings: what the setup page saves (in its data folder), or a .env file (which wins) in the
folder it is started from, else beside ${name}; its data (DATA_DIR, default data) goes beside
that .env, or beside ${name} when there is none.
`;
}

/** The folder the executable works in (see the contract): `cwd` or the executable's own folder. */
function workingFolder(cwd: string, executable: string): string {
  return existsSync(join(cwd, '.env')) ? cwd : dirname(executable);
}

/** Runs the command `argv` names (process.argv without the executable). */
async function runExecutable(argv: readonly string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v') {
    process.stdout.write(
      `giftdrop ${typeof GIFTDROP_VERSION === 'string' ? GIFTDROP_VERSION : '(development)'} (Node.js ${process.version}, ${process.platform}-${process.arch})\n`,
    );
    return;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage(basename(process.execPath)));
    return;
  }
  const folder = workingFolder(process.cwd(), process.execPath);
  if (folder !== process.cwd()) process.chdir(folder);
  switch (name) {
    case undefined:
    case '--reset': // main reads it from process.argv (as `npm start -- --reset`)
      await import('./main.js'); // runs the bot (as `npm start` does)
      return;
    case 'history':
      return (await import('./cli/history.js')).historyCommand(rest);
    case 'verify':
      return (await import('./cli/verify.js')).verifyCommand(rest);
    case 'setup':
      return (await import('./cli/setup.js')).setupCommand();
    default:
      process.stderr.write(
        `giftdrop: unknown command "${name}": run ${giftdropCommand('start', '--help')} for the commands.\n`,
      );
      process.exitCode = 2;
  }
}

// First, before anything can set it: the console title (platform/console-window.ts) and the folder
// it was started from (how its messages name it).
const consoleTitle = process.title;
startedAsExecutable(process.execPath, process.cwd(), typeof GIFTDROP_HOME === 'string' ? GIFTDROP_HOME : undefined);
if (
  ownsConsoleWindow(process.platform, {
    title: consoleTitle,
    file: process.execPath,
    stdinIsTerminal: process.stdin.isTTY === true,
    stdoutIsTerminal: process.stdout.isTTY === true,
  })
) {
  holdWindowOnFailure(process, process.stderr, () => readSync(0, Buffer.alloc(256)));
}

runExecutable(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`giftdrop: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
