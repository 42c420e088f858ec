/**
 * One bot per data directory (contract "One bot per data directory"): `<dir>/giftdrop.lock`,
 * created exclusively (O_EXCL) and holding the owner's PID and start time. Taken by the entry
 * points (`npm start` in any mode, `npm run setup`) before anything in the directory is read;
 * the read-only scripts never take it.
 *
 * Contract: `acquireDataDirLock` creates the directory (0700) if needed and the lock file (0600).
 * When a live process holds it, it throws DataDirLockedError naming the lock and the PID, having
 * changed nothing. A lock whose process is gone (dead PID, a process that has exited but is not
 * reaped yet (a zombie), or the PID now belongs to a process started later; per /proc where
 * available, else kill(pid, 0)) is taken over with a warning. `release()` deletes the
 * lock if it is still ours; it also runs on process exit, so a clean exit (or process.exit) frees it
 * and only a killed process leaves a stale lock. Does not: lock across machines (network file
 * systems), or wait for the holder.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { GiftdropError } from '../shared/errors.js';

export const LOCK_FILE = 'giftdrop.lock';

/** What a lock file holds. */
interface LockOwner {
  pid: number;
  /** ISO time the owner started. */
  startedAt: string;
  /** The owner's start time in clock ticks since boot (/proc/<pid>/stat), where available. */
  procStart?: number;
  /** Random token of this acquisition (so release never deletes another process's lock). */
  token: string;
}

export class DataDirLockedError extends GiftdropError {
  constructor(
    readonly lockFile: string,
    readonly holderPid: number | undefined,
  ) {
    super(
      'DATA_DIR_LOCKED',
      holderPid === undefined
        ? `${lockFile} is held by another giftdrop that is starting (its PID is not written yet): one bot per DATA_DIR; stop it or set another DATA_DIR`
        : `${lockFile} is held by another giftdrop (PID ${holderPid}): one bot per DATA_DIR; stop that process or set another DATA_DIR`,
    );
  }
}

export interface DataDirLock {
  readonly file: string;
  /** Deletes the lock if it is still ours. Idempotent. */
  release(): void;
}

/** `pid`'s state letter and start time in ticks since boot, from /proc/<pid>/stat (Linux); undefined without one. */
function procStat(pid: number): { state: string; start: number | undefined } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields 3 (state) and 22 (start time); the command name (field 2) may hold spaces and
    // parentheses: count after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = Number(fields[19]);
    return { state: fields[0] ?? '', start: Number.isFinite(start) ? start : undefined };
  } catch {
    return undefined;
  }
}

function procStartOf(pid: number): number | undefined {
  return procStat(pid)?.start;
}

/**
 * True while the lock's owner still runs. Where /proc has the PID (Linux): a process that has
 * exited but is not reaped yet (state Z, zombie, or X, dead) is gone, and so is a PID now used by
 * a process started later. Without a /proc entry: `kill(pid, 0)` (EPERM means it exists).
 */
function alive(owner: LockOwner): boolean {
  if (owner.pid === process.pid) return false;
  const stat = procStat(owner.pid);
  if (stat) {
    if (stat.state === 'Z' || stat.state === 'X') return false;
    if (owner.procStart !== undefined && stat.start !== undefined && stat.start !== owner.procStart) return false; // the PID was reused
    return true;
  }
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return true;
}

function readOwner(file: string): LockOwner | undefined | 'absent' {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw err;
  }
  try {
    const parsed = JSON.parse(text) as Partial<LockOwner>;
    if (Number.isSafeInteger(parsed.pid) && (parsed.pid as number) > 0) return parsed as LockOwner;
  } catch {
    // torn or foreign content
  }
  return undefined;
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export interface AcquireOptions {
  /** Told about a stale lock taken over. */
  warn(message: string): void;
  /** Registers release on process exit (default true). */
  releaseOnExit?: boolean;
}

/** Takes `<dir>/giftdrop.lock` (see the module comment). Synchronous: nothing else runs meanwhile. */
export function acquireDataDirLock(dir: string, options: AcquireOptions): DataDirLock {
  const file = join(dir, LOCK_FILE);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const me: LockOwner = {
    pid: process.pid,
    startedAt: new Date(Date.now() - process.uptime() * 1000).toISOString(),
    procStart: procStartOf(process.pid),
    token: randomBytes(8).toString('hex'),
  };
  for (let attempt = 0; ; attempt++) {
    // Bounded: a lock that keeps changing hands is reported rather than fought over.
    if (attempt > 60) throw new DataDirLockedError(file, undefined);
    let fd: number | undefined;
    try {
      fd = openSync(file, 'wx', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (fd !== undefined) {
      try {
        writeSync(fd, JSON.stringify(me) + '\n');
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      break;
    }
    const owner = readOwner(file);
    if (owner === 'absent') continue; // released meanwhile: try again
    if (owner === undefined) {
      // Empty or torn: a holder between creating and writing it, or one killed right then.
      if (attempt < 20) {
        sleepSync(50);
        continue;
      }
      options.warn(`taking over ${file}: it held no owner (a giftdrop killed while starting)`);
    } else if (alive(owner)) {
      throw new DataDirLockedError(file, owner.pid);
    } else {
      options.warn(`taking over ${file}: its owner (PID ${owner.pid}, started ${owner.startedAt}) is no longer running`);
    }
    // Move the stale file aside, then check it is the one judged stale: a racing process may have
    // replaced it with its own live lock meanwhile, which is then put back.
    const aside = `${file}.stale-${me.token}`;
    try {
      renameSync(file, aside);
    } catch {
      continue;
    }
    const moved = readOwner(aside);
    const same = moved !== 'absent' && moved?.token === owner?.token && moved?.pid === owner?.pid;
    if (!same) {
      try {
        linkSync(aside, file);
      } catch {
        // another lock exists already: the next round reports it
      }
    }
    rmSync(aside, { force: true });
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.removeListener('exit', release);
    const owner = readOwner(file);
    if (owner !== 'absent' && owner?.token === me.token) {
      try {
        unlinkSync(file);
      } catch {
        // already gone
      }
    }
  };
  if (options.releaseOnExit !== false) process.on('exit', release);
  return { file, release };
}
