/**
 * Why the process is stopping, in words for the console and the log: the stop signal's meaning
 * on a person's machine (`Ctrl+C or SIGINT`), or what the npm parent watchdog saw
 * (platform/parent-watch.ts), which asks for the clean stop with a SIGTERM of its own and would
 * otherwise be reported as one.
 *
 * Contract: `noteStopCause` keeps the watchdog's cause (the first one counts); `stopCause(signal)`
 * returns it when set, else the signal's words. One value per process; nothing else is kept.
 */

const SIGNAL_WORDS: Partial<Record<NodeJS.Signals, string>> = {
  SIGINT: 'Ctrl+C or SIGINT',
  SIGTERM: 'SIGTERM',
  SIGHUP: 'SIGHUP: the terminal closed',
  SIGBREAK: 'Ctrl+Break',
};

let noted: string | undefined;

/** The watchdog's reason for the SIGTERM it is about to send this process. */
export function noteStopCause(cause: string): void {
  noted ??= cause;
}

/** Why the stop asked by `signal` happens, in words. */
export function stopCause(signal: NodeJS.Signals): string {
  return noted ?? SIGNAL_WORDS[signal] ?? signal;
}
