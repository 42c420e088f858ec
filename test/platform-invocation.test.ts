/**
 * How giftdrop names its own commands (src/platform/invocation.ts) for each runtime and OS, and
 * the double-clicked Windows window that waits for Enter after a failure
 * (src/platform/console-window.ts). The platform and the runtime are arguments, so every branch
 * runs on any OS (CI also runs this file under Wine with Node's Windows build). The executable
 * itself saying these lines is test/executable.test.ts.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { portInUseMessage } from '../src/app/port-check.js';
import { ConfigError, configHint } from '../src/config/index.js';
import { holdWindowOnFailure, ownsConsoleWindow, PRESS_ENTER } from '../src/platform/console-window.js';
import {
  commandLine,
  executableAsTyped,
  settingsGuide,
  thisInvocation,
  type Invocation,
} from '../src/platform/invocation.js';

const WIN_EXE = 'C:\\Users\\Sam\\Downloads\\giftdrop-win-x64.exe';
const LINUX_EXE = '/home/sam/giftdrop/giftdrop-linux-x64';
const winExe: Invocation = { platform: 'win32', executable: { typed: '.\\giftdrop-win-x64.exe' } };
const linuxExe: Invocation = {
  platform: 'linux',
  executable: { typed: './giftdrop-linux-x64', home: 'https://example.org/giftdrop' },
};

describe('naming a command', () => {
  it('the npm scripts of a clone: npm start, npm run <script> with the `--` quoted on Windows', () => {
    expect(commandLine({ platform: 'linux' }, 'start')).toBe('npm start');
    expect(commandLine({ platform: 'win32' }, 'start', '--reset')).toBe('npm start "--" --reset');
    expect(commandLine({ platform: 'darwin' }, 'verify', 'd1')).toBe('npm run verify -- d1');
    expect(commandLine({ platform: 'linux' }, 'verify', 'd1 --html', { silent: true })).toBe(
      'npm run -s verify -- d1 --html',
    );
    expect(commandLine({ platform: 'win32' }, 'setup')).toBe('npm run setup');
  });

  it('the executable: its own file with the subcommand, never npm', () => {
    expect(commandLine(winExe, 'history', '--draw d1')).toBe('.\\giftdrop-win-x64.exe history --draw d1');
    expect(commandLine(winExe, 'start')).toBe('.\\giftdrop-win-x64.exe');
    expect(commandLine(winExe, 'verify', 'd1 --html', { silent: true })).toBe(
      '.\\giftdrop-win-x64.exe verify d1 --html',
    );
    expect(commandLine(linuxExe, 'setup')).toBe('./giftdrop-linux-x64 setup');
    expect(commandLine(linuxExe, 'start', '--reset')).toBe('./giftdrop-linux-x64 --reset');
  });

  it('the executable as typed in the shell it was started from: .\\ in its own folder (PowerShell needs it), else its full path, quoted where needed', () => {
    expect(executableAsTyped('win32', WIN_EXE, 'C:\\Users\\Sam\\Downloads')).toBe('.\\giftdrop-win-x64.exe');
    expect(executableAsTyped('win32', WIN_EXE, 'c:\\users\\sam\\downloads\\')).toBe('.\\giftdrop-win-x64.exe'); // Windows paths ignore case
    expect(executableAsTyped('win32', WIN_EXE, 'C:\\Users\\Sam')).toBe(WIN_EXE);
    expect(executableAsTyped('win32', 'C:\\My Bot\\giftdrop-win-x64.exe', 'C:\\')).toBe(
      "& 'C:\\My Bot\\giftdrop-win-x64.exe'",
    );
    expect(executableAsTyped('win32', 'C:\\My Bot\\giftdrop (1).exe', 'C:\\My Bot')).toBe("& '.\\giftdrop (1).exe'");
    expect(executableAsTyped('linux', LINUX_EXE, '/home/sam/giftdrop')).toBe('./giftdrop-linux-x64');
    expect(executableAsTyped('linux', LINUX_EXE, '/tmp')).toBe(LINUX_EXE);
    expect(executableAsTyped('darwin', "/Users/sam/bot's/giftdrop-linux-x64", '/')).toBe(
      `'/Users/sam/bot'\\''s/giftdrop-linux-x64'`,
    );
  });

  it('messages name the command as the runtime runs it: a busy port, a bad setting', () => {
    expect(portInUseMessage('127.0.0.1', 8787, winExe)).toContain(
      'e.g. $env:HTTP_PORT=8789; .\\giftdrop-win-x64.exe in PowerShell, or the line HTTP_PORT=8789 in .env',
    );
    expect(portInUseMessage('127.0.0.1', 8787, linuxExe)).toContain(
      'e.g. HTTP_PORT=8789 ./giftdrop-linux-x64 (and point',
    );
    const bad = new ConfigError(['TWITCH_CHANNEL: required in live mode']);
    expect(configHint(bad, { platform: 'linux' })).toBe('See .env.example and docs/settings.md for every setting.');
    for (const inv of [winExe, linuxExe]) {
      expect(configHint(bad, inv)).not.toMatch(/\.env\.example|npm/);
      expect(configHint(bad, inv)).toContain('a file named .env beside the executable');
    }
    expect(settingsGuide(linuxExe)).toContain(
      "docs/settings.md in giftdrop's repository (https://example.org/giftdrop)",
    );
  });

  it('this process, run by vitest, is the npm scripts', () => {
    expect(thisInvocation()).toEqual({ platform: process.platform });
  });
});

describe('a double-clicked Windows window', () => {
  const facts = { title: WIN_EXE, file: WIN_EXE, stdinIsTerminal: true, stdoutIsTerminal: true };

  it('is a Windows console titled with the file itself (or a shortcut), with a terminal on both stdin and stdout', () => {
    expect(ownsConsoleWindow('win32', facts)).toBe(true);
    expect(ownsConsoleWindow('win32', { ...facts, title: WIN_EXE.toUpperCase() })).toBe(true);
    expect(ownsConsoleWindow('win32', { ...facts, title: 'C:\\Users\\Sam\\Desktop\\giftdrop.lnk' })).toBe(true);
    // A shell's window: cmd.exe names the running command after its own title; PowerShell keeps its own.
    expect(ownsConsoleWindow('win32', { ...facts, title: 'Command Prompt - giftdrop-win-x64.exe' })).toBe(false);
    expect(ownsConsoleWindow('win32', { ...facts, title: 'Windows PowerShell' })).toBe(false);
    // Redirected (a script, a service, CI under Wine): nobody to press a key.
    expect(ownsConsoleWindow('win32', { ...facts, stdinIsTerminal: false })).toBe(false);
    expect(ownsConsoleWindow('win32', { ...facts, stdoutIsTerminal: false })).toBe(false);
    expect(ownsConsoleWindow('linux', { ...facts, title: LINUX_EXE, file: LINUX_EXE })).toBe(false);
  });

  it('after a failure, says to press Enter and waits; after a clean stop or a second Ctrl+C, closes at once', () => {
    for (const [code, waits] of [
      [1, true],
      [2, true],
      [0, false],
      [130, false],
    ] as const) {
      const proc = new EventEmitter();
      const out: string[] = [];
      let waited = 0;
      holdWindowOnFailure(proc, { write: (t: string) => out.push(t) }, () => void waited++);
      proc.emit('exit', code);
      expect({ code, waited, out: out.join('') }).toEqual({
        code,
        waited: waits ? 1 : 0,
        out: waits ? `\n${PRESS_ENTER}\n` : '',
      });
    }
  });

  it('a closed stdin ends the wait instead of throwing out of the exit', () => {
    const proc = new EventEmitter();
    holdWindowOnFailure(proc, { write: () => true }, () => {
      throw Object.assign(new Error('EOF'), { code: 'EOF' });
    });
    expect(() => proc.emit('exit', 1)).not.toThrow();
  });
});
