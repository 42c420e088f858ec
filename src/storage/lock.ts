/**
 * One bot per data directory (contract "One bot per data directory"): `<dir>/giftdrop.lock`,
 * created exclusively (O_EXCL) and holding the owner's PID, start time, lock token and proof-of-life
 * endpoint. Taken by the entry points (`npm start` in any mode, `npm run setup`) before anything in
 * the directory is read; the read-only scripts never take it.
 *
 * Contract: `acquireDataDirLock` creates the directory (0700) if needed and the lock file (0600).
 * When a live process holds it, it throws DataDirLockedError naming the lock and the PID, having
 * changed nothing. Alive means the holder's endpoint answers with the PROOF of the lock's secret
 * (platform/lock-endpoint.ts: a named pipe or Unix socket the OS closes when the holder dies,
 * answering a random challenge with an HMAC under `proof`, a per-run secret written only into the
 * owner-only lock file): so a lock whose holder is gone is taken over with a warning even when its
 * PID now belongs to another process (PID reuse, on any OS), and even when another user now
 * listens under the dead holder's endpoint name (abstract socket and pipe names are visible to
 * every user): they cannot prove the secret. An endpoint too busy to answer in time counts as
 * alive only while the holder's PID runs. A lock written before the endpoint existed (no
 * `endpoint` field) is judged by its PID; one written before proofs (no `proof`) by the endpoint
 * answering at all. `release()`
 * deletes the lock if it is still ours and closes the endpoint; it also runs on process exit, so a
 * clean exit (or process.exit) frees it and only a killed process leaves a stale lock. Does not:
 * lock across machines (network file systems), or wait for the holder.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { holdEndpoint, lockEndpoint, probeEndpoint, removeEndpoint } from '../platform/lock-endpoint.js';
import { processGone } from '../platform/process.js';
import { GiftdropError } from '../shared/errors.js';

export const LOCK_FILE = 'giftdrop.lock';

/** What a lock file holds. */
interface LockOwner {
  pid: number;
  /** ISO time the owner started. */
  startedAt: string;
  /** Random token of this acquisition (so release never deletes another process's lock). */
  token: string;
  /** Where the owner answers while it runs (platform/lock-endpoint.ts); absent in older locks. */
  endpoint?: string;
  /** The secret the owner proves on its endpoint (64 hex); absent in older locks. */
  proof?: string;
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

/**
 * True while the lock's owner still runs: its endpoint answers. The endpoint is trusted only when
 * it is the one its token names on this OS (so a lock file never makes us connect to, or later
 * remove, anything else); otherwise, as in a lock written before endpoints, the PID is asked.
 */
async function alive(owner: LockOwner, platform: NodeJS.Platform): Promise<boolean> {
  const endpoint = ownEndpoint(owner, platform);
  if (!endpoint) return owner.pid !== process.pid && !processGone(owner.pid);
  const proof = typeof owner.proof === 'string' && /^[0-9a-f]{64}$/.test(owner.proof) ? owner.proof : undefined;
  const answer = await probeEndpoint(endpoint, proof);
  if (answer === 'busy') return owner.pid === process.pid || !processGone(owner.pid);
  return answer === 'alive';
}

function ownEndpoint(owner: LockOwner, platform: NodeJS.Platform): string | undefined {
  if (typeof owner.token !== 'string' || !/^[0-9a-f]{16}$/.test(owner.token)) return undefined;
  const expected = lockEndpoint(platform, owner.token);
  return owner.endpoint === expected ? expected : undefined;
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

export interface AcquireOptions {
  /** Told about a stale lock taken over. */
  warn(message: string): void;
  /** Registers release on process exit (default true). */
  releaseOnExit?: boolean;
  /** The OS this runs on (process.platform): names the lock's endpoint. */
  platform: NodeJS.Platform;
}

/** Takes `<dir>/giftdrop.lock` (see the module comment). */
export async function acquireDataDirLock(dir: string, options: AcquireOptions): Promise<DataDirLock> {
  const file = join(dir, LOCK_FILE);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const token = randomBytes(8).toString('hex');
  const endpoint = lockEndpoint(options.platform, token);
  const proof = randomBytes(32).toString('hex');
  const me: LockOwner = {
    pid: process.pid,
    startedAt: new Date(Date.now() - process.uptime() * 1000).toISOString(),
    token,
    endpoint,
    proof,
  };
  // Answering before the lock file names the endpoint: a holder is never seen without one.
  const held = await holdEndpoint(endpoint, proof);
  try {
    await takeLockFile(file, me, options);
  } catch (err) {
    void held.close();
    throw err;
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
    void held.close();
  };
  if (options.releaseOnExit !== false) process.on('exit', release);
  return { file, release };
}

/** Creates the lock file holding `me`, taking over a stale one; throws DataDirLockedError while a live one is held. */
async function takeLockFile(file: string, me: LockOwner, options: AcquireOptions): Promise<void> {
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
      return;
    }
    const owner = readOwner(file);
    if (owner === 'absent') continue; // released meanwhile: try again
    if (owner === undefined) {
      // Empty or torn: a holder between creating and writing it, or one killed right then.
      if (attempt < 20) {
        await sleep(50);
        continue;
      }
      options.warn(`taking over ${file}: it held no owner (a giftdrop killed while starting)`);
    } else if (await alive(owner, options.platform)) {
      throw new DataDirLockedError(file, owner.pid);
    } else {
      options.warn(
        `taking over ${file}: its owner (PID ${owner.pid}, started ${owner.startedAt}) is no longer running`,
      );
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
    if (same && owner) {
      const stale = ownEndpoint(owner, options.platform);
      if (stale) removeEndpoint(stale);
    }
  }
}
