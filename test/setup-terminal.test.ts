/**
 * `setup` on a terminal with nothing set up (a headless machine), on a real pseudo-terminal
 * (util-linux `script`; skipped without it): it asks the setup page's questions, checks each answer
 * against the sandboxes (a wrong password is refused and asked again; passwords are not echoed),
 * logs the bot in by device code (the code and the page printed; the user authorizes elsewhere),
 * checks the public address through this machine's port, saves, and then runs the usual checks on
 * the saved setup: the chat login with the saved login, the webhook registered, exit 0.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PROJECT_ROOT,
  freePort,
  makeTempDir,
  startLocalServers,
  waitUntil,
  type LocalServers,
} from './support/e2e-stack.js';

const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux') === true;
const PUBLIC_CLIENT = 'terminalpublicapp1';

let servers: LocalServers;
let temp: { dir: string; cleanup: () => Promise<void> };

beforeAll(async () => {
  servers = await startLocalServers({
    chat: { botIsMod: true, publicClientId: PUBLIC_CLIENT, deviceIntervalSeconds: 1 },
  });
  temp = await makeTempDir('giftdrop-setup-tty-');
});
afterAll(async () => {
  await servers?.close();
  await temp?.cleanup();
});

describe.skipIf(!hasScript)('setup on a terminal', () => {
  it('asks the setup page questions, checks each answer, logs the bot in by device code, and the saved setup passes the checks', async () => {
    const { fourthwall: fw, chat } = servers;
    const port = await freePort();
    const node = process.execPath;
    const child = spawn(
      'script',
      ['-qfec', `${node} ${join(PROJECT_ROOT, 'scripts', 'run.mjs')} cli/setup`, '/dev/null'],
      {
        cwd: temp.dir,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: temp.dir,
          TERM: 'xterm',
          HTTP_PORT: String(port),
          FOURTHWALL_API_URL: fw.apiUrl,
          TWITCH_IRC_URL: chat.url,
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const plain = () => out.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');
    let seen = 0;
    /** Waits for the next occurrence of `text` after the last one answered, then types `answer`. */
    const answer = async (text: string, reply: string) => {
      await waitUntil(
        () => plain().indexOf(text, seen) >= 0,
        60_000,
        `"${text}"; output so far:\n${plain().slice(-2000)}`,
        50,
      );
      seen = plain().indexOf(text, seen) + text.length;
      child.stdin.write(`${reply}\r`);
    };
    try {
      await answer('Fourthwall API username: ', fw.username);
      await answer('Fourthwall API password (not shown): ', 'wrong-password');
      await answer('Fourthwall API username: ', fw.username); // refused, asked again
      await answer('Fourthwall API password (not shown): ', fw.password);
      await answer('Webhook secret', fw.webhookSecret);
      await answer('Client ID: ', PUBLIC_CLIENT);
      await waitUntil(
        () => /enter the code ([A-Z]{8})/.test(plain()),
        60_000,
        `the device code; output:\n${plain().slice(-2000)}`,
        50,
      );
      const code = /enter the code ([A-Z]{8})/.exec(plain())![1]!;
      expect(chat.deviceLogin.answer(code, chat.botLogin, 'authorize')).toBe(true);
      await answer("Also log in the broadcaster's account", 'n');
      await answer('Your channel (your Twitch login): ', chat.channel);
      await answer('Public address', `http://127.0.0.1:${port}`);
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    const text = plain();
    expect(text).toMatch(/FIX\s+Fourthwall API user: The username and password were rejected/);
    expect(text).toMatch(/ok\s+Twitch: the bot account: logged in as giftdrop_bot/);
    expect(text).toMatch(/ok\s+Twitch chat login: logged in as giftdrop_bot and joined #giftdrop_demo/);
    expect(text).toMatch(/ok\s+Webhook: registered http:\/\/127\.0\.0\.1:\d+\/webhooks\/fourthwall/);
    expect(text).toContain('All required checks passed');
    expect(text).not.toContain(fw.password);
    expect(text).not.toContain(fw.webhookSecret);
  }, 180_000);
});
