/**
 * How the person at the keyboard runs giftdrop, and so how every message names one of its
 * commands: the one home for that wording.
 * - A clone runs the npm scripts: `npm start`, `npm run history -- --draw <id>` (on Windows the
 *   `--` quoted, `"--"`: PowerShell drops a bare one before npm sees it).
 * - The single executable runs itself with subcommands: `.\giftdrop-win-x64.exe history --draw
 *   <id>` in PowerShell (which runs a file of the current folder only with `.\`),
 *   `./giftdrop-linux-x64 history --draw <id>` in a POSIX shell; started from another folder, its
 *   full path (PowerShell's `& '...'` when the path needs quotes).
 * This process is the npm scripts' unless src/executable.ts, the executable's entry, declared it
 * first (`startedAsExecutable`, before it changes folder). The functions given an Invocation are
 * pure: each OS's and each runtime's wording is tested on any OS. Owns no other state.
 */
import { posix, win32 } from 'node:path';
import { psQuote, shQuote } from './advice.js';

/** A command of giftdrop's: `start` runs the bot (the sandbox demo without credentials). */
export type Command = 'start' | 'history' | 'verify' | 'setup';

export interface Invocation {
  platform: NodeJS.Platform;
  /**
   * The single executable: how its file is typed in the shell it was started from, its file name
   * (default: the last part of `typed`) and where its README is (when known). Absent: the npm scripts.
   */
  executable?: { typed: string; name?: string; home?: string };
}

let executable: Invocation['executable'];

/**
 * Declares this process the single executable `file`, started in folder `startedIn` (src/executable.ts
 * only, before it changes folder); `home`: the address of giftdrop's README, when the package knew it.
 */
export function startedAsExecutable(file: string, startedIn: string, home?: string): void {
  const name = (process.platform === 'win32' ? win32 : posix).basename(file);
  executable = { typed: executableAsTyped(process.platform, file, startedIn), name, ...(home ? { home } : {}) };
}

/** This process's invocation. */
export function thisInvocation(): Invocation {
  return { platform: process.platform, ...(executable ? { executable } : {}) };
}

/**
 * The command line that runs `command` with `args` (already written for the shell) as `inv` runs
 * it. `silent`: npm's `-s`, so only the command's own output reaches stdout (for `> file`).
 */
export function commandLine(inv: Invocation, command: Command, args = '', options: { silent?: boolean } = {}): string {
  const tail = args ? ` ${args}` : '';
  if (inv.executable) return `${inv.executable.typed}${command === 'start' ? '' : ` ${command}`}${tail}`;
  const npm =
    command === 'start'
      ? `npm${options.silent ? ' -s' : ''} start`
      : `npm run${options.silent ? ' -s' : ''} ${command}`;
  return args ? `${npm} ${inv.platform === 'win32' ? '"--"' : '--'}${tail}` : npm;
}

/** `commandLine` for this process. */
export function giftdropCommand(name: Command, args = '', options: { silent?: boolean } = {}): string {
  return commandLine(thisInvocation(), name, args, options);
}

/**
 * How `file` is typed in `platform`'s shell (PowerShell on Windows) from folder `startedIn`: by
 * `.\name` or `./name` in its own folder, else by its full path; quoted where the shell needs it.
 */
export function executableAsTyped(platform: NodeJS.Platform, file: string, startedIn: string): string {
  const path = platform === 'win32' ? win32 : posix;
  const folder = path.dirname(file);
  const here =
    platform === 'win32'
      ? folder.toLowerCase() === path.resolve(startedIn).toLowerCase()
      : folder === path.resolve(startedIn);
  const typed = here ? `.${path.sep}${path.basename(file)}` : file;
  if (platform !== 'win32') return /^[\w./@%+-]+$/.test(typed) ? typed : shQuote(typed);
  // PowerShell runs a quoted path only through its call operator.
  return /^[\w.:\\-]+$/.test(typed) ? typed : `& ${psQuote(typed)}`;
}

/**
 * Where a message sends someone to read about the settings: the clone's `.env.example` and
 * docs/settings.md; the executable (which comes without them) to the repository's docs/settings.md
 * and the `.env` beside it.
 */
export function settingsGuide(inv: Invocation): string {
  if (!inv.executable) return 'See .env.example and docs/settings.md for every setting.';
  const where = inv.executable.home
    ? `docs/settings.md in giftdrop's repository (${inv.executable.home})`
    : `docs/settings.md in giftdrop's repository`;
  return `See ${where} for every setting: settings go in a file named .env beside the executable, one NAME=value a line.`;
}

/**
 * Where a setting that only `.env` takes goes, for someone who may never have made one: the
 * clone's `.env` (from `.env.example`); for the executable, a file named `.env` beside it. On
 * Windows, how Notepad saves that name (with file extensions hidden it adds `.txt`, and the bot
 * would not read `.env.txt`).
 */
export function envFileHint(inv: Invocation): string {
  const where = inv.executable
    ? `a file named .env beside ${executableName(inv)}`
    : 'the .env file (copy .env.example to .env)';
  return inv.platform === 'win32' ? `${where} (in Notepad pick Save as type "All files", or it saves .env.txt)` : where;
}

/** The executable's file name (`giftdrop-win-x64.exe`), from `typed` when it was not given. */
function executableName(inv: Invocation): string {
  const e = inv.executable!;
  if (e.name) return e.name;
  const typed = e.typed.replace(/^& '(.*)'$/, '$1').replace(/^'(.*)'$/, '$1');
  return (inv.platform === 'win32' ? win32 : posix).basename(typed);
}
