/**
 * `npm start` on a real pseudo-terminal (util-linux `script`; skipped where it is not installed):
 * with a terminal on stdin, sandbox mode plays the script in colour, then stays interactive;
 * `/as` speaks as a viewer and Ctrl+C (a raw 0x03 keypress) shuts down cleanly with exit 0.
 * Through `npm start` itself, `/quit` ends it with exit 0 and nothing after the bot's last line
 * (npm's progress spinner is off in the project's .npmrc: it drew a frame after "Stopped.").
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followText } from './support/output-wait.js';
import { REPO_ROOT } from './support/sandbox-mode-spawn.js';

const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux') === true;

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'giftdrop-sandbox-pty-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!hasScript)('npm start on a terminal', () => {
  it('plays the script, accepts /as, and Ctrl+C ends streaming and exits 0', async () => {
    const configFile = join(dir, 'giftdrop.json');
    writeFileSync(configFile, JSON.stringify({ demo: { drawSeconds: 3, linkSeconds: 3, paceMs: 20 } }));
    const child = spawn('script', ['-qfec', 'node --import tsx src/main.ts', '/dev/null'], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        TERM: 'xterm',
        DATA_DIR: join(dir, 'data'),
        HTTP_PORT: '0',
        GIFTDROP_CONFIG: configFile,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stdout = followText(child.stdout);
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const plain = () => stdout.text().replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');
    const until = (re: RegExp, what: string) =>
      stdout.until(
        () => re.test(plain()),
        45_000,
        () => new Error(`timed out waiting for ${what}; output so far:\n${plain()}`),
      );
    try {
      await until(/broadcaster> /, 'the prompt after the script');
      expect(plain()).toMatch(/✔ Done: 3 draws are in the history/);
      expect(stdout.text()).toContain('\u001b[36m'); // colour on a terminal
      child.stdin.write('/as +mod bob hello there\r');
      await until(/\[chat\] bob \(mod\): hello there/, 'the viewer line');
      child.stdin.write('\u0003');
      expect(await exited).toBe(0);
      expect(plain()).toContain('The stream ends');
      expect(plain()).toContain('Stopped.');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 90_000);

  it('npm start, then /quit: exit 0, and no spinner frame after the last line', async () => {
    const configFile = join(dir, 'giftdrop-npm.json');
    writeFileSync(configFile, JSON.stringify({ demo: { drawSeconds: 3, linkSeconds: 3, paceMs: 20 } }));
    const child = spawn('script', ['-qfec', 'npm start', '/dev/null'], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        TERM: 'xterm',
        NO_UPDATE_NOTIFIER: '1',
        DATA_DIR: join(dir, 'data-npm'),
        HTTP_PORT: '0',
        GIFTDROP_CONFIG: configFile,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 60_000;
      while (!/broadcaster> /.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(out, 'the prompt after the script').toMatch(/broadcaster> /);
      child.stdin.write('/quit\r');
      expect(await exited).toBe(0);
      const tail = out.slice(out.lastIndexOf('Stopped.'));
      expect(tail).toMatch(/^Stopped\./);
      // npm's spinner is braille (U+2800-U+28FF): none anywhere, in particular after "Stopped."
      expect(out).not.toMatch(/[\u2800-\u28ff]/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 90_000);
});
