/**
 * The data-directory lock (src/storage/lock.ts) against real processes and files: a lock held by
 * a running process is refused naming its PID and left as it was; a lock whose PID is dead, a
 * zombie (exited, not reaped), or now
 * belongs to a process started later (PID reuse), or that holds no owner is taken over with a
 * warning; release deletes only our own lock; the lock file is 0600 in a 0700 directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireDataDirLock, DataDirLockedError, LOCK_FILE } from '../src/storage/lock.js';
import { tempDataDir } from './support/storage-helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
let sleeper: ChildProcess | undefined;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDataDir());
});
afterEach(async () => {
  if (sleeper && sleeper.exitCode === null) {
    const gone = new Promise((r) => sleeper!.once('exit', r));
    sleeper.kill('SIGKILL');
    await gone;
  }
  sleeper = undefined;
  await cleanup();
});

/** A process that stays alive until killed; resolves with its PID once it runs. */
function startSleeper(): Promise<number> {
  sleeper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000); console.log("up")'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve) => sleeper!.stdout!.once('data', () => resolve(sleeper!.pid!)));
}

/** The PID of a process that has exited. */
function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  return new Promise((resolve) => child.once('exit', () => resolve(child.pid!)));
}

describe('the DATA_DIR lock', () => {
  it('is refused while another process holds it, naming the lock and its PID, and the lock is left as it was', async () => {
    const pid = await startSleeper();
    const file = join(dir, LOCK_FILE);
    const content = JSON.stringify({ pid, startedAt: '2026-01-01T00:00:00.000Z', token: 'theirs' }) + '\n';
    await writeFile(file, content);
    const warnings: string[] = [];
    let error: unknown;
    try {
      acquireDataDirLock(dir, { warn: (m) => warnings.push(m), releaseOnExit: false });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DataDirLockedError);
    expect((error as DataDirLockedError).holderPid).toBe(pid);
    expect((error as Error).message).toContain(`${file} is held by another giftdrop (PID ${pid})`);
    expect(warnings).toEqual([]);
    expect(await readFile(file, 'utf8')).toBe(content);
  });

  it('takes over a lock whose process is gone, with a warning; is 0600 in a 0700 directory; release deletes only our lock', async () => {
    const data = join(dir, 'new', 'data');
    const pid = await deadPid();
    const first = acquireDataDirLock(data, { warn: () => undefined, releaseOnExit: false });
    first.release();
    expect(existsSync(join(data, LOCK_FILE))).toBe(false);
    await writeFile(join(data, LOCK_FILE), JSON.stringify({ pid, startedAt: '2026-01-01T00:00:00.000Z', token: 'old' }));

    const warnings: string[] = [];
    const lock = acquireDataDirLock(data, { warn: (m) => warnings.push(m), releaseOnExit: false });
    expect(warnings).toEqual([`taking over ${lock.file}: its owner (PID ${pid}, started 2026-01-01T00:00:00.000Z) is no longer running`]);
    const owner = JSON.parse(await readFile(lock.file, 'utf8')) as { pid: number; startedAt: string };
    expect(owner.pid).toBe(process.pid);
    expect(Date.parse(owner.startedAt)).toBeLessThanOrEqual(Date.now());
    expect(((await stat(lock.file)).mode & 0o777).toString(8)).toBe('600');
    expect(((await stat(data)).mode & 0o777).toString(8)).toBe('700');

    // Someone else's lock in its place: release leaves it alone.
    const foreign = JSON.stringify({ pid: 1, startedAt: 'x', token: 'someone-else' });
    await writeFile(lock.file, foreign);
    lock.release();
    expect(await readFile(lock.file, 'utf8')).toBe(foreign);
  });

  it.runIf(existsSync('/proc/self/stat'))('takes over a lock whose holder has exited but is not reaped yet (a zombie)', async () => {
    // A shell starts a child, then becomes `sleep`, which never reaps it; the child exits when the
    // test writes to its pipe (fd 3), after the exec: a real zombie whose PID still exists
    // (kill(pid, 0) succeeds on it).
    sleeper = spawn('/bin/sh', ['-c', 'head -c1 <&3 >/dev/null & echo $!; exec sleep 1000'], { stdio: ['ignore', 'pipe', 'inherit', 'pipe'] });
    const pid = await new Promise<number>((resolve) => sleeper!.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
    const state = () => readFile(`/proc/${pid}/stat`, 'utf8').then((t) => t.slice(t.lastIndexOf(')') + 2).split(' ')[0]);
    const shell = () => readFile(`/proc/${sleeper!.pid}/comm`, 'utf8').then((t) => t.trim());
    // (neither the exec nor the child's exit is an event this process can subscribe to: look in /proc)
    const tick = () => new Promise((r) => setTimeout(r, 10));
    for (let i = 0; i < 500 && (await shell()) !== 'sleep'; i++) await tick();
    expect(await shell()).toBe('sleep');
    (sleeper.stdio[3] as Writable).write('x');
    for (let i = 0; i < 500 && (await state()) !== 'Z'; i++) await tick();
    expect(await state()).toBe('Z');
    expect(() => process.kill(pid, 0)).not.toThrow();
    const procStart = Number((await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')[19]);
    const file = join(dir, LOCK_FILE);
    await writeFile(file, JSON.stringify({ pid, startedAt: '2026-01-01T00:00:00.000Z', procStart, token: 'zombie' }));
    const warnings: string[] = [];
    const lock = acquireDataDirLock(dir, { warn: (m) => warnings.push(m), releaseOnExit: false });
    expect(warnings).toEqual([`taking over ${file}: its owner (PID ${pid}, started 2026-01-01T00:00:00.000Z) is no longer running`]);
    expect(JSON.parse(await readFile(file, 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it('takes over a lock whose PID now belongs to a later process (PID reuse) or that holds no owner', async () => {
    const file = join(dir, LOCK_FILE);
    const warnings: string[] = [];
    // Start times come from /proc (Linux, as in CI); elsewhere a live PID is always trusted.
    if (existsSync('/proc/self/stat')) {
      const pid = await startSleeper();
      // The recorded start time does not match the running process with that PID.
      await writeFile(file, JSON.stringify({ pid, startedAt: '2020-01-01T00:00:00.000Z', procStart: 1, token: 'old' }));
      const reused = acquireDataDirLock(dir, { warn: (m) => warnings.push(m), releaseOnExit: false });
      expect(warnings.splice(0)).toEqual([`taking over ${file}: its owner (PID ${pid}, started 2020-01-01T00:00:00.000Z) is no longer running`]);
      reused.release();
    }

    await writeFile(file, '');
    const empty = acquireDataDirLock(dir, { warn: (m) => warnings.push(m), releaseOnExit: false });
    expect(warnings[0]).toBe(`taking over ${file}: it held no owner (a giftdrop killed while starting)`);
    empty.release();
    expect(existsSync(file)).toBe(false);
  });
});
