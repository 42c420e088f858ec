/**
 * The single executable's entry: scripts/package.mjs bundles it (with everything it loads) into
 * Node's own binary as giftdrop-win-x64.exe and giftdrop-linux-x64. It behaves like the npm
 * scripts of a clone:
 *   giftdrop                        what `npm start` runs (src/main.ts): the sandbox demo without
 *                                   credentials, live mode with them
 *   giftdrop history [args]         `npm run history -- [args]`
 *   giftdrop verify <id> [args]     `npm run verify -- <id> [args]`
 *   giftdrop setup                  `npm run setup`
 *   giftdrop --version | --help
 *
 * Contract: the working folder is the folder it is started from when that holds a `.env`, else
 * the folder beside the executable when THAT holds one (started from a terminal elsewhere, or
 * from a shortcut), else the folder it is started from (a double click starts it in its own
 * folder). It changes into that folder first, so `.env`, config/giftdrop.json, DATA_DIR and
 * LOG_FILE are found relative to it exactly as `npm start` finds them relative to the clone.
 * Every command module is loaded only when chosen. No top-level await: Node 22 and 24 run a
 * single executable's entry as CommonJS. A command it does not know: one line, exit 2.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** package.json's version, defined by scripts/package.mjs (esbuild `define`); undefined elsewhere. */
declare const GIFTDROP_VERSION: string | undefined;

const USAGE = `usage: giftdrop [command]
  (none)              run the bot: the sandbox demo without credentials, live with a .env
  history [options]   the draws in the history (history --help for the options)
  verify <draw id>    re-check a draw's fairness from the history (verify --help)
  setup               check every setting in .env and say what to fix
  --version           print the version
`;

/** The folder the executable works in (see the contract): `cwd` or the executable's own folder. */
function workingFolder(cwd: string, executable: string): string {
  if (existsSync(join(cwd, '.env'))) return cwd;
  const beside = dirname(executable);
  return existsSync(join(beside, '.env')) ? beside : cwd;
}

/** Runs the command `argv` names (process.argv without the executable). */
async function runExecutable(argv: readonly string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === '--version' || command === '-v') {
    process.stdout.write(`giftdrop ${typeof GIFTDROP_VERSION === 'string' ? GIFTDROP_VERSION : '(development)'} (Node.js ${process.version}, ${process.platform}-${process.arch})\n`);
    return;
  }
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  const folder = workingFolder(process.cwd(), process.execPath);
  if (folder !== process.cwd()) process.chdir(folder);
  switch (command) {
    case undefined:
      await import('./main.js'); // runs the bot (as `npm start` does)
      return;
    case 'history':
      return (await import('./cli/history.js')).historyCommand(rest);
    case 'verify':
      return (await import('./cli/verify.js')).verifyCommand(rest);
    case 'setup':
      return (await import('./cli/setup.js')).setupCommand();
    default:
      process.stderr.write(`giftdrop: unknown command "${command}": run giftdrop --help for the commands.\n`);
      process.exitCode = 2;
  }
}

runExecutable(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`giftdrop: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
