/**
 * The signals that mean "stop now, cleanly" on each OS. POSIX: SIGINT (Ctrl+C), SIGTERM (service
 * managers, `kill`), SIGHUP (the terminal closed). Windows: SIGINT (Ctrl+C), SIGBREAK
 * (Ctrl+Break), SIGHUP (the console window closed: Windows ends the process about 10 s later), and
 * SIGTERM, which Windows never delivers but the parent watchdog emits (platform/parent-watch.ts).
 * Owns no state; the platform is an argument so each OS's list is tested on any OS.
 */

export function shutdownSignals(platform: NodeJS.Platform): readonly NodeJS.Signals[] {
  return platform === 'win32' ? ['SIGINT', 'SIGBREAK', 'SIGHUP', 'SIGTERM'] : ['SIGINT', 'SIGTERM', 'SIGHUP'];
}
