/**
 * src/platform/ on this machine, every OS's branch: the platform is an argument, so the Windows and
 * macOS branches run here too (against real files, processes and sockets where the branch's
 * behaviour does not need that OS). Windows: no owner-only refusal or chmod advice for its
 * 666/777 modes; PowerShell or `.env` fixes, never a POSIX command; SIGBREAK among the stop
 * signals; the lock's named pipe; the watchdog that never signals itself (Windows' process.kill
 * ends a process at once). The lock itself runs against real holders in storage-lock.test.ts.
 */
import { spawn, spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { portInUseMessage } from '../src/app/port-check.js';
import { onShutdownSignals } from '../src/app/signals.js';
import { ownerOnlyFix, runWithEnv } from '../src/platform/advice.js';
import { commandLine } from '../src/platform/invocation.js';
import { classifyProbeError, holdEndpoint, lockEndpoint, probeEndpoint } from '../src/platform/lock-endpoint.js';
import { stopThisProcess, watchedAncestors, wrapperShellWakeups } from '../src/platform/parent-watch.js';
import { parentOf, processGone } from '../src/platform/process.js';
import { modesProtect, privacyProblem } from '../src/platform/protection.js';
import { shutdownSignals } from '../src/platform/signals.js';

const dir = mkdtempSync(join(tmpdir(), 'giftdrop-platform-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const POSIX_ONLY = /chmod|chown|\bkill\b|ln -s|export /;

describe('fix wording', () => {
  it('a busy port: PowerShell or the .env line on Windows, the shell prefix on POSIX', () => {
    expect(runWithEnv('win32', { HTTP_PORT: 8788 }, 'npm start')).toBe(
      '$env:HTTP_PORT=8788; npm start in PowerShell, or the line HTTP_PORT=8788 in .env',
    );
    expect(runWithEnv('linux', { HTTP_PORT: 8788 }, 'npm start')).toBe('HTTP_PORT=8788 npm start');
    expect(runWithEnv('darwin', { DATA_DIR: "my bot's data" }, 'npm start')).toBe(
      `DATA_DIR='my bot'\\''s data' npm start`,
    );
    expect(runWithEnv('win32', { DATA_DIR: "C:\\my bot's data" }, 'npm start')).toBe(
      `$env:DATA_DIR='C:\\my bot''s data'; npm start in PowerShell, or the line DATA_DIR=C:\\my bot's data in .env`,
    );
    const win = portInUseMessage('127.0.0.1', 8787, { platform: 'win32' });
    expect(win).toContain(
      'e.g. $env:HTTP_PORT=8789; npm start in PowerShell, or the line HTTP_PORT=8789 in .env (and point',
    );
    expect(win).not.toContain('HTTP_PORT=8789 npm start');
    expect(portInUseMessage('127.0.0.1', 65535, { platform: 'linux' })).toContain(
      'e.g. HTTP_PORT=65533 npm start (and point',
    );
    expect(portInUseMessage('127.0.0.1', 8788, { platform: 'linux' }, 'GIFTDROP_LOCAL_PORT')).toContain(
      'e.g. GIFTDROP_LOCAL_PORT=8789 npm start (the overlay and dashboard URLs follow it)',
    );
  });

  it('an npm script with options: the `--` quoted on Windows (PowerShell drops a bare one)', () => {
    expect(commandLine({ platform: 'win32' }, 'history', '--draw d1')).toBe('npm run history "--" --draw d1');
    expect(commandLine({ platform: 'linux' }, 'history', '--draw d1')).toBe('npm run history -- --draw d1');
    for (const line of [
      commandLine({ platform: 'win32' }, 'history', '--json'),
      runWithEnv('win32', { HTTP_PORT: 1 }, 'npm start'),
    ])
      expect(line).not.toMatch(POSIX_ONLY);
  });

  it('owner-only fixes quote the path for a POSIX shell', () => {
    expect(ownerOnlyFix("/home/me/bot's data", true)).toBe(
      `run chmod 700 '/home/me/bot'\\''s data' (and check nothing in it was planted)`,
    );
    expect(ownerOnlyFix('/srv/giftdrop/dashboard.token', false)).toBe(
      `run chmod 600 '/srv/giftdrop/dashboard.token' (and check nothing in it was planted)`,
    );
  });
});

describe('owner-only checks', () => {
  const folder = join(dir, 'data folder');
  const token = join(folder, 'dashboard.token');
  mkdirSync(folder);
  writeFileSync(token, 'x');

  // (file modes can be set only where they mean something: not on Windows)
  it.runIf(process.platform !== 'win32')(
    'POSIX: a folder or secret file others can change is refused with the chmod that fixes it',
    () => {
      chmodSync(folder, 0o777);
      chmodSync(token, 0o666);
      for (const os of ['linux', 'darwin'] as const) {
        expect(modesProtect(os)).toBe(true);
        expect(privacyProblem(folder, 'the data directory (DATA_DIR)', os)).toBe(
          `the data directory (DATA_DIR) ${folder} can be changed by other users (mode 777): run chmod 700 '${folder}' (and check nothing in it was planted)`,
        );
        expect(privacyProblem(token, 'the secret file', os)).toBe(
          `the secret file ${token} can be changed by other users (mode 666): run chmod 600 '${token}' (and check nothing in it was planted)`,
        );
      }
      chmodSync(folder, 0o700);
      chmodSync(token, 0o600);
      expect(privacyProblem(folder, 'the data directory (DATA_DIR)', 'linux')).toBeUndefined();
      expect(privacyProblem(token, 'the secret file', 'linux')).toBeUndefined();
      expect(privacyProblem(join(folder, 'missing'), 'the secret file', 'linux')).toBeUndefined();
      // owned by someone else (this process posing as another uid)
      expect(privacyProblem(folder, 'the data directory (DATA_DIR)', 'linux', 4242)).toMatch(
        /belongs to another user \(uid \d+, you are uid 4242\): .*chown 4242 '/,
      );
    },
  );

  it('Windows: the 666/777 modes Node reports there (ACLs protect the profile) are neither refused nor warned about', () => {
    chmodSync(folder, 0o777);
    chmodSync(token, 0o666);
    expect(modesProtect('win32')).toBe(false);
    expect(privacyProblem(folder, 'the data directory (DATA_DIR)', 'win32', 4242)).toBeUndefined();
    expect(privacyProblem(token, 'the secret file', 'win32', 4242)).toBeUndefined();
    chmodSync(folder, 0o700);
    chmodSync(token, 0o600);
  });
});

describe('stop signals', () => {
  it('Windows adds Ctrl+Break (SIGBREAK); the console closing is SIGHUP; POSIX has no SIGBREAK', () => {
    expect(shutdownSignals('win32')).toEqual(['SIGINT', 'SIGBREAK', 'SIGHUP', 'SIGTERM']);
    expect(shutdownSignals('linux')).toEqual(['SIGINT', 'SIGTERM', 'SIGHUP']);
    expect(shutdownSignals('darwin')).toEqual(['SIGINT', 'SIGTERM', 'SIGHUP']);
  });

  it('the shutdown handler on Windows runs the clean stop for SIGBREAK and exits 0', async () => {
    // SIGBREAK cannot be sent on Linux: the signals arrive on an emitter, as Node's do when Ctrl+Break arrives.
    const target = Object.assign(new EventEmitter(), {
      exits: [] as number[],
      exit(code: number) {
        this.exits.push(code);
      },
    });
    const reasons: string[] = [];
    onShutdownSignals(
      async (reason) => {
        reasons.push(reason);
      },
      { platform: 'win32', target },
    );
    target.emit('SIGBREAK');
    await new Promise((r) => setTimeout(r, 50));
    expect(reasons).toEqual(['Ctrl+Break']); // the stop's reason in words (platform/stop-cause.ts)
    expect(target.exits).toEqual([0]);
    // the same handler on Linux does not listen for SIGBREAK at all
    const linux = Object.assign(new EventEmitter(), { exit() {} });
    onShutdownSignals(async () => undefined, { platform: 'linux', target: linux });
    expect(linux.listenerCount('SIGBREAK')).toBe(0);
    expect(linux.listenerCount('SIGHUP')).toBe(1);
  });
});

describe('the lock endpoint', () => {
  it('is a named pipe on Windows, an abstract socket on Linux, a socket file in the temp folder elsewhere', () => {
    expect(lockEndpoint('win32', '0123456789abcdef')).toBe('\\\\.\\pipe\\giftdrop-0123456789abcdef');
    expect(lockEndpoint('linux', '0123456789abcdef')).toBe('\0giftdrop-0123456789abcdef');
    expect(lockEndpoint('darwin', '0123456789abcdef', '/var/folders/T')).toBe(
      '/var/folders/T/giftdrop-0123456789abcdef.sock',
    );
  });

  it('a probe says alive only for the proof of the secret; gone when nothing listens (no pipe, refused); busy when the OS says so', async () => {
    expect(classifyProbeError('ENOENT')).toBe('gone'); // Windows: no such pipe; POSIX: no socket file
    expect(classifyProbeError('ECONNREFUSED')).toBe('gone');
    expect(classifyProbeError('EBUSY')).toBe('alive'); // every pipe instance taken
    expect(classifyProbeError('EAGAIN')).toBe('alive'); // a full backlog
    const endpoint = lockEndpoint(process.platform, 'feedfacecafebeef', dir);
    const secret = 'ab'.repeat(32);
    expect(await probeEndpoint(endpoint, secret)).toBe('gone');
    const held = await holdEndpoint(endpoint, secret);
    expect(await probeEndpoint(endpoint, secret)).toBe('alive');
    // the proof is of this secret: a prober holding another one is not convinced
    expect(await probeEndpoint(endpoint, 'cd'.repeat(32))).toBe('gone');
    // a lock written before proofs: answering is enough
    expect(await probeEndpoint(endpoint, undefined)).toBe('alive');
    await held.close();
    expect(await probeEndpoint(endpoint, secret)).toBe('gone');
  });
});

describe('the npm parent watchdog', () => {
  it('watches the parent and, on POSIX, its parent (npm, behind a shell); on Windows the parent only', () => {
    expect(watchedAncestors('win32', process.ppid)).toEqual([process.ppid]);
    expect(processGone(process.pid)).toBe(false);
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    expect(processGone(dead)).toBe(true);
    if (process.platform !== 'linux') return; // the Linux (/proc) and ps branches need a POSIX machine
    const grand = parentOf(process.ppid, 'linux');
    expect(grand).toBeGreaterThan(0);
    expect(parentOf(process.ppid, 'darwin')).toBe(grand); // the ps branch, here too
    expect(watchedAncestors('linux', process.ppid)).toEqual([process.ppid, grand].filter((p) => p! > 1));
  });

  it('asks this process to stop: SIGTERM on POSIX; on Windows the SIGTERM listeners, since process.kill would end it at once', () => {
    const calls: string[] = [];
    const fake = () =>
      Object.assign(new EventEmitter(), {
        pid: 4242,
        kill: (pid: number, sig: string) => calls.push(`kill ${pid} ${sig}`),
        exit: (code: number) => calls.push(`exit ${code}`),
      }) as unknown as NodeJS.Process;
    stopThisProcess('linux', fake());
    const win = fake();
    win.on('SIGTERM', (sig) => calls.push(`listener ${sig}`));
    stopThisProcess('win32', win);
    stopThisProcess('win32', fake());
    expect(calls).toEqual(['kill 4242 SIGTERM', 'listener SIGTERM', 'exit 1']);
  });

  it.runIf(process.platform === 'linux')(
    'sees a signal reach the shell npm ran the script with, which holds it while its child runs (dash)',
    async () => {
      const shell = spawn('/bin/sh', ['-c', 'sleep 30; :'], { stdio: 'ignore' });
      await new Promise((r) => shell.once('spawn', r));
      // Read the count only once the shell sleeps in wait() for its child (the kernel's wait channel
      // says so; where the kernel hides it, once the child exists and the count holds still): under
      // load the shell may still be on its way there, waking on its own.
      const waiting = (): boolean => {
        const wchan = readFileSync(`/proc/${shell.pid}/wchan`, 'utf8').trim();
        if (wchan !== '0' && wchan !== '') return wchan === 'do_wait';
        return readFileSync(`/proc/${shell.pid}/task/${shell.pid}/children`, 'utf8').trim() !== '';
      };
      let before: number | undefined;
      for (let i = 0; i < 250 && before === undefined; i++) {
        await new Promise((r) => setTimeout(r, 20));
        if (!waiting()) continue;
        const first = wrapperShellWakeups(shell.pid!, 'sleep 30; :', 'linux');
        await new Promise((r) => setTimeout(r, 50));
        if (waiting() && first !== undefined && wrapperShellWakeups(shell.pid!, 'sleep 30; :', 'linux') === first)
          before = first;
      }
      expect(before).toBeTypeOf('number');
      expect(wrapperShellWakeups(shell.pid!, 'another script', 'linux')).toBeUndefined();
      expect(wrapperShellWakeups(shell.pid!, 'sleep 30; :', 'win32')).toBeUndefined();
      // still asleep in wait(): no wake-up without a signal
      await new Promise((r) => setTimeout(r, 300));
      expect(wrapperShellWakeups(shell.pid!, 'sleep 30; :', 'linux')).toBe(before);
      const exited = new Promise((r) => shell.once('exit', (code) => r(code)));
      shell.kill('SIGINT');
      let after = before;
      for (let i = 0; i < 100 && after === before; i++) {
        await new Promise((r) => setTimeout(r, 20));
        after = wrapperShellWakeups(shell.pid!, 'sleep 30; :', 'linux');
      }
      expect(after).not.toBe(before);
      // the shell still waits for its child: end that child (by its PID), then the shell ends by the SIGINT it held
      for (const pid of readFileSync(`/proc/${shell.pid}/task/${shell.pid}/children`, 'utf8').trim().split(/\s+/))
        process.kill(Number(pid), 'SIGKILL');
      expect(await exited).toBe(null);
      expect(shell.signalCode).toBe('SIGINT');
    },
  );
});
