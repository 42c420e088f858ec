/**
 * A Windows console window that closes with the process: what a double-clicked giftdrop-win-x64.exe
 * (or its shortcut) runs in. Stopping on a bad setting there would close the window before the
 * message could be read, so the executable then waits for Enter before it goes.
 *
 * How it is told from a shell: Windows gives a console it makes for a program the program's own
 * path as its title (or the shortcut's, started from a .lnk); a console a shell runs in carries the
 * shell's title (cmd.exe: "Command Prompt - <command>", PowerShell: its own). Node reads the console
 * title as `process.title` on Windows, until something sets it. Both stdin and stdout must be that
 * console: with either redirected (a service, a script, CI) nobody is there to press a key.
 * Owns no state; the platform and the facts are arguments, so every branch is tested on any OS.
 */

export interface ConsoleFacts {
  /** The console's title (`process.title` on Windows, read before anything sets it). */
  title: string;
  /** The executable's own path (`process.execPath`). */
  file: string;
  stdinIsTerminal: boolean;
  stdoutIsTerminal: boolean;
}

/** Whether the process runs in a console window of its own that closes when it exits (see the header). */
export function ownsConsoleWindow(platform: NodeJS.Platform, facts: ConsoleFacts): boolean {
  if (platform !== 'win32' || !facts.stdinIsTerminal || !facts.stdoutIsTerminal) return false;
  const title = facts.title.trim().toLowerCase();
  return title === facts.file.toLowerCase() || title.endsWith('.lnk');
}

/** The exit codes after which the window is held: a failure, not a stop asked for (0, or 130 for a repeated Ctrl+C). */
function holdsWindow(exitCode: number): boolean {
  return exitCode !== 0 && exitCode !== 130;
}

export const PRESS_ENTER = 'Press Enter to close this window.';

/**
 * Makes `proc`'s exit after a failure wait for Enter: the prompt written to `out`, then
 * `waitForEnter` (synchronous: nothing asynchronous runs once the process is exiting).
 */
export function holdWindowOnFailure(
  proc: { on(event: 'exit', listener: (code: number) => void): unknown },
  out: { write(text: string): unknown },
  waitForEnter: () => void,
): void {
  proc.on('exit', (code) => {
    if (!holdsWindow(code)) return;
    out.write(`\n${PRESS_ENTER}\n`);
    try {
      waitForEnter();
    } catch {
      // stdin closed: nothing to wait for
    }
  });
}
