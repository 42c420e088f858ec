/**
 * The wording of fixes that name a command, per OS: every fix a message suggests must work where
 * the message is shown. Windows gets PowerShell (the shell a streamer opens there) or the `.env`
 * line, and never chmod, chown, kill or ln; POSIX gets its shell's commands. Owns no state; the
 * platform is an argument so each OS's wording is tested on any OS. How a giftdrop command itself
 * is named (npm script or executable) is platform/invocation.ts's.
 */

/**
 * How to run `command` once with environment variables set: `HTTP_PORT=8788 npm start` (POSIX
 * shells), `$env:HTTP_PORT=8788; npm start` (PowerShell) and the `.env` lines that do it for good
 * on Windows.
 */
export function runWithEnv(platform: NodeJS.Platform, vars: Record<string, string | number>, command: string): string {
  const entries = Object.entries(vars);
  if (platform === 'win32') {
    const ps = entries.map(([k, v]) => `$env:${k}=${psQuote(String(v))}; `).join('');
    return `${ps}${command} in PowerShell, or the line${entries.length > 1 ? 's' : ''} ${entries.map(([k, v]) => `${k}=${v}`).join(' and ')} in .env`;
  }
  return `${entries.map(([k, v]) => `${k}=${/^[\w.:/@%+-]+$/.test(String(v)) ? v : shQuote(String(v))} `).join('')}${command}`;
}

/** A value as PowerShell reads it: bare when it is a plain word or number, else in single quotes. */
export function psQuote(v: string): string {
  return /^[\w.:/\\-]+$/.test(v) ? v : `'${v.replaceAll("'", "''")}'`;
}

/** `v` in single quotes, as a POSIX shell reads it back unchanged. */
export function shQuote(v: string): string {
  return `'${v.replaceAll("'", `'\\''`)}'`;
}

/**
 * The fix for a data folder or secret file that other users can change: POSIX names the chmod
 * that makes it owner-only. Windows has no such fix to print (its modes mean nothing, see
 * platform/protection.ts), so it is never asked for one.
 */
export function ownerOnlyFix(path: string, isDirectory: boolean): string {
  return `run chmod ${isDirectory ? '700' : '600'} ${shQuote(path)} (and check nothing in it was planted)`;
}

/** The fix for a data folder or secret file owned by another user (POSIX: uid `uid` is this process's). */
export function otherOwnerFix(path: string, uid: number): string {
  return `run giftdrop as its owner, or use a DATA_DIR of your own (or: chown ${uid} ${shQuote(path)})`;
}
