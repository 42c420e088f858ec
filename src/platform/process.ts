/**
 * Facts about another process of this machine, read through the OS: whether a PID is gone
 * (`processGone`: the data directory's lock takes over a lock whose owner is gone, the npm
 * watchdog stops the bot when npm is gone) and a PID's parent (`parentOf`). The platform is an
 * argument where the OSes differ, so each branch is tested on any OS. Changes nothing.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** `pid`'s parent PID (Linux: /proc; other POSIX: ps), or undefined where it cannot be read (and on Windows). */
export function parentOf(pid: number, platform: NodeJS.Platform): number | undefined {
  if (platform === 'win32') return undefined;
  try {
    if (platform === 'linux') {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return positive(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    }
    return positive(
      Number(
        execFileSync('ps', ['-o', 'ppid=', '-p', String(pid)], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        }).trim(),
      ),
    );
  } catch {
    return undefined;
  }
}

function positive(n: number): number | undefined {
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** True when no process has PID `pid` (EPERM: it exists, owned by someone else). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
