/**
 * The watchdog of a bot started by npm (scripts/run.mjs): the bot must stop, cleanly, when the
 * `npm start` that runs it goes away, and not stay in chat as an orphan. npm runs a script through
 * a shell (sh on POSIX, which may or may not exec the command; cmd.exe on Windows, which never
 * does), does not forward SIGHUP, and cannot forward anything when it is killed.
 *
 * Contract: `watchedAncestors` are the processes whose end means npm went away: the parent and,
 * on POSIX, the parent's parent (npm itself when the shell did not exec; one level above npm,
 * the user's shell, when it did). On Windows the parent only (cmd.exe; the console's Ctrl+C,
 * Ctrl+Break and close reach the bot itself, see platform/signals.ts). A signal npm forwards (SIGINT,
 * SIGTERM) reaches that shell, not the bot: SIGTERM ends it (so the bot's parent is gone), but a shell
 * that did not exec (dash, Debian's sh) holds SIGINT until its child ends. On Linux such a shell
 * (`<shell> -c <the script>`, /proc) sleeps in wait() for the bot and runs again only when it is
 * signalled, so a change of its voluntary context-switch count is taken as the forwarded signal.
 * `watchParent` polls all this and, on the first sign (a watched process gone; on POSIX this
 * process handed to another parent; the wrapper shell woken), asks this process to stop once: SIGTERM on POSIX, so the entry's own clean shutdown runs; on Windows,
 * where `process.kill` of any signal ends a process at once, the SIGTERM listeners are called
 * instead (exit 1 when there are none). The platform is an argument so each OS's branch is tested
 * on any OS.
 */
import { noteStopCause } from './stop-cause.js';
import { readFileSync } from 'node:fs';
import { parentOf, processGone } from './process.js';

/** How often the watchdog looks at the watched processes (ms). */
const POLL_MS = 250;

/** The processes whose end means npm is gone (see the module comment); never PID 1 (init never ends). */
export function watchedAncestors(platform: NodeJS.Platform, ppid: number): number[] {
  const grand = parentOf(ppid, platform);
  return [ppid, ...(grand === undefined ? [] : [grand])].filter((p) => p > 1);
}

/**
 * Linux: how often `pid` has woken up (voluntary context switches) when it is the shell npm ran
 * `script` with and it did not exec (its argv is `<shell> -c <script>`); undefined otherwise.
 */
export function wrapperShellWakeups(
  pid: number,
  script: string | undefined,
  platform: NodeJS.Platform,
): number | undefined {
  if (platform !== 'linux' || !script) return undefined;
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (argv[1] !== '-c' || argv[2] !== script) return undefined;
    const m = /^voluntary_ctxt_switches:\s*(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Asks this process to stop through its own shutdown (see the module comment); `cause` is what the
 * stop is reported as (platform/stop-cause.ts), since the SIGTERM sent here is only the means.
 */
export function stopThisProcess(
  platform: NodeJS.Platform,
  proc: NodeJS.Process = process,
  cause = 'npm start went away',
): void {
  if (proc === process) noteStopCause(cause);
  if (platform !== 'win32') {
    proc.kill(proc.pid, 'SIGTERM');
  } else if (proc.listenerCount('SIGTERM') > 0) {
    proc.emit('SIGTERM', 'SIGTERM');
  } else {
    proc.exit(1);
  }
}

/**
 * Starts the watchdog (see the module comment); `script`: the npm script's command
 * (npm_lifecycle_script). Never keeps the process alive. Returns its stop.
 * @public loaded by scripts/run.mjs from dist/ (after the build), which knip does not follow
 */
export function watchParent(
  platform: NodeJS.Platform,
  script: string | undefined,
  onGone: () => void = () => stopThisProcess(platform),
): () => void {
  const ppid = process.ppid;
  const watched = watchedAncestors(platform, ppid);
  const wakeups = wrapperShellWakeups(ppid, script, platform);
  const timer = setInterval(() => {
    const reparented = platform !== 'win32' && process.ppid !== ppid;
    const signalled = wakeups !== undefined && wrapperShellWakeups(ppid, script, platform) !== wakeups;
    if (!reparented && !signalled && !watched.some(processGone)) return;
    clearInterval(timer);
    // (npm forwards Ctrl+C and signals sent to it to its script's shell; which one is not known here)
    if (signalled) noteStopCause('npm start stopped by Ctrl+C or a signal');
    onGone();
  }, POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
