/**
 * Live mode on a real pseudo-terminal (util-linux `script`; skipped where it is not installed): the
 * real bot process against the two local servers. Its stdout is the live console: the bot's chat
 * lines, `!enter` summarised (never one line per viewer), the moderator's command, the winners'
 * links as operator lines ([giftdrop], on a terminal only), and a status line (chat, shop, the open draw with its entrants
 * and time left); no JSON log line reaches stdout (logs go to stderr, here a file). Ctrl+C stops it
 * cleanly.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PROJECT_ROOT,
  botProcessEnv,
  writeSettingsFile,
  freePort,
  makeTempDir,
  registerWebhook,
  setShopLive,
  startLocalServers,
  type LocalServers,
} from './support/e2e-stack.js';
import { followText } from './support/output-wait.js';

const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux') === true;

let servers: LocalServers;
let temp: { dir: string; cleanup: () => Promise<void> };

beforeAll(async () => {
  temp = await makeTempDir('giftdrop-live-pty-');
  servers = await startLocalServers();
});

afterAll(async () => {
  await servers?.close();
  await temp?.cleanup();
});

describe.skipIf(!hasScript)('live console on a terminal', () => {
  it('prints the transcript of a draw and a status line, no JSON logs, and stops on Ctrl+C', async () => {
    const port = await freePort();
    // beacon off (no route to drand here): the console is under test, not fairness
    const configFile = await writeSettingsFile(temp.dir);
    const env = {
      ...botProcessEnv(servers, { dataDir: join(temp.dir, 'data'), httpPort: port, logLevel: '', configFile }),
      TERM: 'xterm',
      HOME: temp.dir,
    };
    const stderrFile = join(temp.dir, 'stderr.log');
    const child = spawn('script', ['-qfec', `exec node --import tsx src/main.ts 2>${stderrFile}`, '/dev/null'], {
      cwd: PROJECT_ROOT,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stdout = followText(child.stdout);
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const plain = () =>
      stdout
        .text()
        .replace(/\u001b\[[0-9;]*[A-Za-z]/g, '')
        .replace(/\r/g, '\n');
    const until = (re: RegExp, what: string) =>
      stdout.until(
        () => re.test(plain()),
        30_000,
        () =>
          new Error(
            `timed out waiting for ${what}; output so far:\n${plain()}\nstderr:\n${readFileSync(stderrFile, 'utf8')}`,
          ),
      );
    try {
      await until(/giftdrop live: #\w+ as \w+; overlay http:\/\/127\.0\.0\.1:\d+\/overlay/, 'the console header');
      // on a terminal (only), the link that signs the dashboard in: its token in the fragment
      await until(
        /dashboard, signed in: http:\/\/127\.0\.0\.1:\d+\/dashboard#token=[\w%-]+/,
        'the signed-in dashboard link',
      );
      const signedIn = /(http:\/\/127\.0\.0\.1:\d+)\/dashboard#token=([\w%-]+)/.exec(plain())!;
      const state = await fetch(`${signedIn[1]}/dashboard/api/state`, {
        headers: { authorization: `Bearer ${decodeURIComponent(signedIn[2]!)}` },
      });
      expect(state.status).toBe(200);
      await registerWebhook(servers.fourthwall, `http://127.0.0.1:${port}/webhooks/fourthwall`);
      setShopLive(servers);
      const { chat } = servers;
      servers.fourthwall.control.simulateGiftPurchase({ quantity: 2, username: 'generous_fan', durationSeconds: 170 });
      await until(/\[chat\] bot> \w+: 🎁 generous_fan gifted/, 'the draw announced');
      for (const n of ['ann', 'bob', 'cat']) chat.inject(chat.viewer(n), '!enter');
      await until(/\[chat\] 3 viewers typed !enter \(Giftdrop T-Shirt: 3 entrants\)/, 'the entries summary');
      await until(/chat connected \| shop LIVE \| Giftdrop T-Shirt: 3 entrants, \d+s left/, 'the status line');
      chat.inject(chat.broadcaster, '!giveaway end');
      await until(new RegExp(`\\[chat\\] ${chat.channel}: !giveaway end`), 'the command line');
      await until(/\[chat\] bot> \w+: .*congratulations/, 'the winners line');
      await until(
        /\[giftdrop\] \[Giftdrop T-Shirt\] link for @\w+.*http:\/\/127\.0\.0\.1:\d+\/shop\/gifts\/gft_/,
        'a private link line',
      );
      expect(plain()).not.toMatch(/\{"level"|"msg":/);
      expect(plain().match(/typed !enter/g)).toHaveLength(1); // one summary, not one line per viewer
      expect(plain()).not.toMatch(/\[chat\] (ann|bob|cat): !enter/);
      expect(stdout.text()).toContain('\u001b[7m'); // the status line (reverse video) on a terminal
      child.stdin.write('\u0003');
      expect(await exited).toBe(0);
      expect(readFileSync(stderrFile, 'utf8')).not.toMatch(/\{"level"/); // logs on stderr: one short line each
      expect(readFileSync(stderrFile, 'utf8')).not.toContain(decodeURIComponent(signedIn[2]!)); // never in a log line
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 90_000);
});
