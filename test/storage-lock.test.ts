/**
 * The data-directory lock (src/storage/lock.ts) against real processes, sockets and files: a lock
 * held by a running giftdrop is refused naming its PID and left as it was; a lock whose holder was
 * killed is taken over with a warning, even when its PID now belongs to a running process (PID
 * reuse: the holder's endpoint, platform/lock-endpoint.ts, is what says it is alive); a lock that
 * holds no owner is taken over; a lock written before endpoints is judged by its PID; release
 * deletes only our own lock; the lock file is 0600 in a 0700 directory (where modes mean something). The socket-file endpoint
 * (macOS and other POSIX) runs here too, and its file is removed with the stale lock. A dead
 * holder's endpoint name taken by another listener (another user: it closes, answers junk or
 * stalls) does not keep the lock: only the holder can prove the lock's secret (issue 46).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockEndpoint } from '../src/platform/lock-endpoint.js';
import { modesProtect } from '../src/platform/protection.js';
import { acquireDataDirLock, DataDirLockedError, LOCK_FILE } from '../src/storage/lock.js';
import { tempDataDir } from './support/storage-helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];
const platform = process.platform;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDataDir());
});
afterEach(async () => {
  for (const child of children.splice(0)) await killed(child);
  await cleanup();
});

/** SIGKILLs `child` (a holder dies without any clean-up) and resolves once it is gone. */
async function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}

/** Starts a process that prints `marker` once it is ready; resolves with it. */
function startChild(args: string[], marker: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes(marker) && resolve(child));
    child.once('exit', (code) => reject(new Error(`child exited (${code}) before "${marker}"`)));
  });
}

/** A giftdrop-like process holding the lock of `data` (as `os` names its endpoint). */
const startHolder = (data: string, os: NodeJS.Platform = platform) =>
  startChild(['--import', 'tsx', 'test/support/lock-holder-child.ts', data, os], 'held');
/** A process that stays alive until killed (it holds no lock). */
const startSleeper = () => startChild(['-e', 'setInterval(() => {}, 1000); console.log("up")'], 'up');

/** The PID of a process that has exited. */
function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  return new Promise((resolve) => child.once('exit', () => resolve(child.pid!)));
}

async function refusal(data: string, os: NodeJS.Platform = platform): Promise<DataDirLockedError> {
  const warnings: string[] = [];
  const error = await acquireDataDirLock(data, {
    warn: (m) => warnings.push(m),
    releaseOnExit: false,
    platform: os,
  }).then(
    (lock) => {
      lock.release();
      throw new Error('the lock was taken');
    },
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(DataDirLockedError);
  expect(warnings).toEqual([]);
  return error as DataDirLockedError;
}

describe('the DATA_DIR lock', () => {
  it('is refused while a running giftdrop holds it, naming the lock and its PID, and the lock is left as it was', async () => {
    const holder = await startHolder(dir);
    const file = join(dir, LOCK_FILE);
    const content = await readFile(file, 'utf8');
    const error = await refusal(dir);
    expect(error.holderPid).toBe(holder.pid);
    expect(error.message).toBe(
      `${file} is held by another giftdrop (PID ${holder.pid}): one bot per DATA_DIR; stop that process or set another DATA_DIR`,
    );
    expect(await readFile(file, 'utf8')).toBe(content);
  });

  it('takes over the lock of a killed holder, with a warning; is 0600 in a 0700 directory; release deletes only our lock', async () => {
    const data = join(dir, 'new', 'data');
    const holder = await startHolder(data);
    const before = JSON.parse(await readFile(join(data, LOCK_FILE), 'utf8')) as { startedAt: string };
    await killed(holder);

    const warnings: string[] = [];
    const lock = await acquireDataDirLock(data, { warn: (m) => warnings.push(m), releaseOnExit: false, platform });
    expect(warnings).toEqual([
      `taking over ${lock.file}: its owner (PID ${holder.pid}, started ${before.startedAt}) is no longer running`,
    ]);
    const owner = JSON.parse(await readFile(lock.file, 'utf8')) as { pid: number; startedAt: string; endpoint: string };
    expect(owner.pid).toBe(process.pid);
    expect(Date.parse(owner.startedAt)).toBeLessThanOrEqual(Date.now());
    if (modesProtect(platform)) {
      expect(((await stat(lock.file)).mode & 0o777).toString(8)).toBe('600');
      expect(((await stat(data)).mode & 0o777).toString(8)).toBe('700');
    }
    // while held, a second acquisition (even from this process) is refused: the endpoint answers
    expect((await refusal(data)).holderPid).toBe(process.pid);

    // Someone else's lock in its place: release leaves it alone.
    const foreign = JSON.stringify({ pid: 1, startedAt: 'x', token: 'someone-else' });
    await writeFile(lock.file, foreign);
    lock.release();
    expect(await readFile(lock.file, 'utf8')).toBe(foreign);
  });

  it('takes over a lock whose PID now belongs to a running process that is not its holder (PID reuse)', async () => {
    const sleeper = await startSleeper();
    const token = randomBytes(8).toString('hex');
    const file = join(dir, LOCK_FILE);
    // The PID runs, but nothing answers on the holder's endpoint: the holder is gone.
    await writeFile(
      file,
      JSON.stringify({
        pid: sleeper.pid,
        startedAt: '2020-01-01T00:00:00.000Z',
        token,
        endpoint: lockEndpoint(platform, token),
      }),
    );
    const warnings: string[] = [];
    const lock = await acquireDataDirLock(dir, { warn: (m) => warnings.push(m), releaseOnExit: false, platform });
    expect(warnings).toEqual([
      `taking over ${file}: its owner (PID ${sleeper.pid}, started 2020-01-01T00:00:00.000Z) is no longer running`,
    ]);
    lock.release();
    expect(existsSync(file)).toBe(false);
  });

  it('judges a lock written before endpoints by its PID: refused while it runs, taken over once it is gone', async () => {
    const sleeper = await startSleeper();
    const file = join(dir, LOCK_FILE);
    const legacy = JSON.stringify({ pid: sleeper.pid, startedAt: '2026-01-01T00:00:00.000Z', token: 'old' });
    await writeFile(file, legacy);
    expect((await refusal(dir)).holderPid).toBe(sleeper.pid);
    expect(await readFile(file, 'utf8')).toBe(legacy);

    const pid = await deadPid();
    await writeFile(file, JSON.stringify({ pid, startedAt: '2026-01-01T00:00:00.000Z', token: 'old' }));
    const warnings: string[] = [];
    const lock = await acquireDataDirLock(dir, { warn: (m) => warnings.push(m), releaseOnExit: false, platform });
    expect(warnings).toEqual([
      `taking over ${file}: its owner (PID ${pid}, started 2026-01-01T00:00:00.000Z) is no longer running`,
    ]);
    lock.release();
  });

  it('takes over a lock that holds no owner (a giftdrop killed while starting)', async () => {
    const file = join(dir, LOCK_FILE);
    await writeFile(file, '');
    const warnings: string[] = [];
    const lock = await acquireDataDirLock(dir, { warn: (m) => warnings.push(m), releaseOnExit: false, platform });
    expect(warnings).toEqual([`taking over ${file}: it held no owner (a giftdrop killed while starting)`]);
    lock.release();
    expect(existsSync(file)).toBe(false);
  });

  it("a dead holder's endpoint name taken by another listener (another user) does not keep the lock: it cannot prove the lock's secret", async () => {
    // The review's reproduction: abstract socket names (and pipe names) are visible to every user;
    // after a crash another user listens under the dead holder's name, answering every connection
    // (or stalling). Before the fix the restart said "held by another giftdrop (PID <dead>)".
    for (const behaviour of ['closes', 'answers junk', 'stalls'] as const) {
      const holder = await startHolder(dir);
      const owner = JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')) as {
        endpoint: string;
        token: string;
        startedAt: string;
        proof: string;
      };
      await killed(holder);
      const squatter = createServer((sock) => {
        sock.on('error', () => undefined);
        if (behaviour === 'closes') sock.destroy();
        else if (behaviour === 'answers junk') sock.on('data', () => sock.end(`${'0'.repeat(64)}\n`));
        // 'stalls': accepts and never answers
      });
      await new Promise<void>((resolve) => squatter.listen(owner.endpoint, resolve));
      try {
        const warnings: string[] = [];
        const lock = await acquireDataDirLock(dir, { warn: (m) => warnings.push(m), releaseOnExit: false, platform });
        expect(warnings, behaviour).toEqual([
          `taking over ${lock.file}: its owner (PID ${holder.pid}, started ${owner.startedAt}) is no longer running`,
        ]);
        lock.release();
        expect(owner.proof).toMatch(/^[0-9a-f]{64}$/); // (the secret the holder had to prove)
      } finally {
        squatter.close();
        if (!owner.endpoint.startsWith('\0') && !owner.endpoint.startsWith('\\\\.\\pipe\\'))
          await rm(owner.endpoint, { force: true });
      }
    }
  }, 60_000);

  it.runIf(platform !== 'win32')(
    'with a socket file as the endpoint (macOS): refused while held, taken over after a kill, the dead socket file removed',
    async () => {
      const holder = await startHolder(dir, 'darwin');
      const owner = JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')) as { endpoint: string; token: string };
      expect(owner.endpoint).toBe(lockEndpoint('darwin', owner.token));
      expect(existsSync(owner.endpoint)).toBe(true);
      expect((await refusal(dir, 'darwin')).holderPid).toBe(holder.pid);
      await killed(holder);
      expect(existsSync(owner.endpoint)).toBe(true); // a kill leaves it; it no longer answers

      const warnings: string[] = [];
      const lock = await acquireDataDirLock(dir, {
        warn: (m) => warnings.push(m),
        releaseOnExit: false,
        platform: 'darwin',
      });
      expect(warnings).toHaveLength(1);
      expect(existsSync(owner.endpoint)).toBe(false);
      const mine = JSON.parse(await readFile(lock.file, 'utf8')) as { endpoint: string };
      expect(existsSync(mine.endpoint)).toBe(true);
      lock.release();
      expect(existsSync(mine.endpoint)).toBe(false);
    },
  );
});
