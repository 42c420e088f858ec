/**
 * Ctrl+C (SIGINT) in the middle of sandbox mode's gift draw: the process draws the open draw now
 * (the sandbox shop ends with the process), ends streaming at Fourthwall, flushes the history and
 * exits 0; the draw is in `npm run history -- --json`, finished, with every entrant it had.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess, startProcess } from './support/sandbox-mode-spawn.js';

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'giftdrop-sandbox-signal-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('npm start in sandbox mode, stopped with SIGINT during a draw', () => {
  it('closes the open draw, ends streaming, flushes the history and exits 0', async () => {
    const configFile = join(dir, 'giftdrop.json');
    // A long window: the signal always arrives while the draw is open.
    // The bot acknowledges entries every second, so the test knows when it has all 20.
    writeFileSync(
      configFile,
      JSON.stringify({ demo: { drawSeconds: 120, linkSeconds: 5, paceMs: 10 }, reminders: { ackEverySeconds: 1 } }),
    );
    const env = { DATA_DIR: join(dir, 'data'), HTTP_PORT: '0', GIFTDROP_CONFIG: configFile };
    const p = startProcess('node', ['--import', 'tsx', 'src/main.ts'], env);
    try {
      await p.until(/^\[chat\] bot> giftdrop_bot: .*\(20 entered\)/m, 'the bot acknowledging all 20 entrants');
      p.child.kill('SIGINT');
      expect(await p.exited, p.stderr()).toBe(0);
    } finally {
      if (p.child.exitCode === null) p.child.kill('SIGKILL');
    }
    const out = p.stdout();
    expect(out).toMatch(/^▶ Closing 1 open draw now \(Ctrl\+C or SIGINT\)/m);
    expect(out).toMatch(/^▶ The stream ends/m);
    expect(out).toMatch(/^\[chat\] bot> giftdrop_bot: .*congratulations/m);
    expect(out).toMatch(/^ {2}Stopped\./m);

    const hist = await runProcess('npm', ['run', '--silent', 'history', '--', '--json'], { DATA_DIR: env.DATA_DIR });
    expect(hist.code, hist.stderr).toBe(0);
    const draws = JSON.parse(hist.stdout) as { kind: string; status: string; entrants: number; winners: unknown[] }[];
    expect(draws).toHaveLength(1);
    expect(draws[0]).toMatchObject({ kind: 'gift-draw', status: 'finished', entrants: 20 });
    expect(draws[0]!.winners).toHaveLength(3);
  }, 60_000);

  // The README's exit-code line: the bot stops cleanly and says why in words (not "SIGTERM", the
  // means the npm watchdog uses); npm itself ends by the SIGINT it was sent (a shell shows 130),
  // as npm does for any script whose shell held the signal until the bot was done.
  it('SIGINT to the npm PID: the bot says what stopped it, stops cleanly, and npm ends by SIGINT (130)', async () => {
    const configFile = join(dir, 'giftdrop-npm.json');
    writeFileSync(
      configFile,
      JSON.stringify({ demo: { drawSeconds: 120, linkSeconds: 5, paceMs: 10 }, reminders: { ackEverySeconds: 1 } }),
    );
    const env = {
      DATA_DIR: join(dir, 'data-npm'),
      HTTP_PORT: '0',
      GIFTDROP_CONFIG: configFile,
      NO_UPDATE_NOTIFIER: '1',
    };
    const p = startProcess('npm', ['start'], env);
    try {
      await p.until(/^\[chat\] bot> giftdrop_bot: .*\(20 entered\)/m, 'the bot acknowledging all 20 entrants');
      p.child.kill('SIGINT');
      const ended = await p.ended;
      await p.exited; // the bot's output, to its end
      expect(ended, p.stderr()).toEqual({ code: null, signal: 'SIGINT' });
    } finally {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    }
    const out = p.stdout();
    // Linux: npm's shell (dash) holds the signal; the watchdog sees it and asks for the stop. A
    // shell that execs the bot hands it the SIGINT itself.
    expect(out).toMatch(/^▶ Closing 1 open draw now \((npm start stopped by Ctrl\+C or a signal|Ctrl\+C or SIGINT)\)/m);
    if (process.platform === 'linux')
      expect(out).toMatch(/^▶ Closing 1 open draw now \(npm start stopped by Ctrl\+C or a signal\)/m);
    expect(out).not.toMatch(/SIGTERM/);
    expect(out).toMatch(/^ {2}Stopped\./m);
  }, 90_000);
});
