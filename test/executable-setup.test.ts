/**
 * From download to the first live giveaway with no developer tools (issue 44's first "Done when"):
 * the Linux single executable (release/giftdrop-linux-x64, `npm run package`) is started in an
 * EMPTY folder with no `.env`, on a terminal (a pseudo-terminal: what a double click gives), and
 * plays the sandbox demo. A real headless Chromium then opens the setup page it prints and fills it
 * in against the sandboxes as a streamer would: the Fourthwall API user and password (checked live),
 * the webhook secret, the client id of a Public Twitch application (this build has none built in:
 * the page says how to register one), the bot's Twitch login by device code (the authorization done
 * in the browser on the Twitch sandbox's verification page), the channel, and the public address
 * (checked by a nonce fetched back through it). "Go live" switches the same process to live mode
 * (no restart by hand); a supporter's gift purchase then reaches it as a webhook (registered by the
 * bot itself), viewers enter in chat, and the draw finishes with the winners in chat. No file is
 * written by hand: the test only reads the dashboard token file the bot made.
 * Skipped, saying so, without the executable, Chromium or util-linux `script`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFile, readFile, readdir, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, launchBrowser, screenshotDir, type TestBrowser } from './support/browser.js';
import {
  PROJECT_ROOT,
  enterAll,
  freePort,
  makeTempDir,
  setShopLive,
  startLocalServers,
  waitUntil,
  type LocalServers,
} from './support/e2e-stack.js';

const EXE = process.env.GIFTDROP_SETUP_EXE ?? join(PROJECT_ROOT, 'release', 'giftdrop-linux-x64');
const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux') === true;
const built = existsSync(EXE) && process.platform === 'linux' && process.arch === 'x64';
const missing = [
  !built && 'release/giftdrop-linux-x64 (npm run package)',
  !HAS_CHROMIUM && 'Chromium',
  !hasScript && "util-linux's script",
].filter(Boolean);
const skipped = missing.length ? ` [SKIPPED: no ${missing.join(', ')}]` : '';
if (skipped) console.warn(`test/executable-setup.test.ts${skipped}`);

const PUBLIC_CLIENT = 'giftdroptestpublicapp';

let servers: LocalServers;
let temp: { dir: string; cleanup: () => Promise<void> };
let browser: TestBrowser | undefined;
let child: ChildProcess | undefined;
let out = '';

beforeAll(async () => {
  if (skipped) return;
  temp = await makeTempDir('giftdrop-exe-setup-');
  servers = await startLocalServers({
    fourthwall: { drawDurationSeconds: 20 },
    chat: { botIsMod: true, publicClientId: PUBLIC_CLIENT, deviceIntervalSeconds: 1 },
  });
  browser = await launchBrowser();
});
afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await browser?.close();
  await servers?.close();
  await temp?.cleanup();
});

const plain = (): string => out.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');
async function until(re: RegExp, what: string, timeoutMs = 120_000): Promise<RegExpMatchArray> {
  let m: RegExpMatchArray | null = null;
  await waitUntil(
    () => (m = re.exec(plain())) !== null,
    timeoutMs,
    `${what}; output so far:\n${plain().slice(-3000)}`,
    100,
  );
  return m!;
}

describe.skipIf(Boolean(skipped))(
  `download -> setup page -> live giveaway, with the Linux executable${skipped}`,
  () => {
    it('an empty folder, the setup page in Chromium against the sandboxes, Go live, and a gift draw with winners in chat', async () => {
      const home = join(temp.dir, 'Downloads');
      await import('node:fs/promises').then((fs) => fs.mkdir(home));
      const exe = join(home, 'giftdrop-linux-x64');
      await copyFile(EXE, exe);
      await import('node:fs/promises').then((fs) => fs.chmod(exe, 0o755));
      const port = await freePort();
      const { fourthwall: fw, chat } = servers;
      // Only where the sandboxes are (a streamer's machine talks to the real services): no credential.
      const env = {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: temp.dir,
        TERM: 'xterm',
        HTTP_PORT: String(port),
        GIFTDROP_LOCAL_PORT: String(await freePort()),
        FOURTHWALL_API_URL: fw.apiUrl,
        TWITCH_IRC_URL: chat.url,
      };
      child = spawn('script', ['-qfec', exe, '/dev/null'], { cwd: home, env, stdio: ['pipe', 'pipe', 'pipe'] });
      child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));

      // The demo runs and says where the setup page is, with a private link that signs in by itself (a terminal).
      const setupUrl = (
        await until(
          /Set up for your channel \(no file to edit\): (http:\/\/127\.0\.0\.1:\d+\/setup)/,
          'the setup page line',
        )
      )[1]!;
      const signedIn = (
        await until(
          /set up for your channel, signed in: (http:\/\/127\.0\.0\.1:\d+\/setup#token=\S+) \(a private link/,
          'the signed-in setup link',
        )
      )[1]!;
      const token = (await readFile(join(home, 'data', 'sandbox', 'dashboard.token'), 'utf8')).trim();
      expect(signedIn).toBe(`${setupUrl}#token=${encodeURIComponent(token)}`);
      const page = await browser!.context.newPage();
      await page.goto(signedIn);
      const row = (id: string, status: string) =>
        page.waitForSelector(`#row-${id}[data-status="${status}"]`, { timeout: 60_000 });
      await row('fourthwall', 'todo');
      expect(await page.textContent('#detail-client-id')).toContain('This build has no Twitch application built in');

      await page.fill('#fourthwall-username', fw.username);
      await page.fill('#fourthwall-password', fw.password);
      await page.click('#fourthwall-submit');
      await row('fourthwall', 'ok');
      await page.fill('#secret-secret', fw.webhookSecret);
      await page.click('#secret-submit');
      await row('secret', 'ok');
      await page.fill('#client-id-clientId', PUBLIC_CLIENT);
      await page.click('#client-id-submit');
      await row('client-id', 'ok');

      // Twitch by device code: the page shows a code and Twitch's page; the user authorizes there.
      await page.click('#bot-login');
      const open = await page.waitForSelector('#bot-open', { timeout: 30_000 });
      const code = (await page.textContent('#bot-code'))!.trim();
      expect(code).toMatch(/^[A-Z]{8}$/);
      const [twitch] = await Promise.all([browser!.context.waitForEvent('page'), open.click()]);
      await twitch.waitForLoadState();
      expect(await twitch.inputValue('#code')).toBe(code);
      expect(await twitch.textContent('#scopes')).toContain('whisper');
      await twitch.fill('#login', chat.botLogin);
      await twitch.click('#authorize');
      await twitch.waitForSelector('text=Return to your device');
      await twitch.close();
      await row('bot', 'ok');

      await page.fill('#channel-channel', chat.channel);
      await page.click('#channel-submit');
      await row('channel', 'ok');
      await page.fill('#public-url-url', `http://127.0.0.1:${port}`);
      await page.click('#public-url-submit');
      await row('public-url', 'ok');
      await page.screenshot({ path: join(screenshotDir(), 'setup-page-ready.png'), fullPage: true });

      // Go live: the same process stops the demo and starts the bot for the channel.
      await page.click('#apply');
      await page.waitForSelector('#live', { timeout: 120_000 });
      await page.screenshot({ path: join(screenshotDir(), 'setup-page-live.png'), fullPage: true });
      await waitUntil(() => chat.joined().includes(chat.botLogin), 60_000, 'the live bot in chat');
      // The page's own link to the live dashboard: it says the claim page is off (a Public application) and what turns it on.
      const dashboard = await browser!.context.newPage();
      await dashboard.goto(
        (await page.getAttribute('#dashboard-link', 'href'))!.replace(/^\//, `${new URL(setupUrl).origin}/`),
      );
      await dashboard.waitForSelector('#reach [data-reach="claim-page"]', { timeout: 30_000 });
      await dashboard.click('#reach [data-reach="claim-page"] summary');
      expect(await dashboard.textContent('#reach [data-reach="claim-page"] p')).toContain(
        'a file named .env beside giftdrop-linux-x64 as two lines, TWITCH_CLIENT_ID=<Client ID> and TWITCH_CLIENT_SECRET=<Client Secret>',
      );
      await dashboard.screenshot({ path: join(screenshotDir(), 'executable-dashboard-live.png') });
      await dashboard.close();

      // A supporter gifts; Fourthwall's webhook reaches the bot at the address it registered itself.
      setShopLive(servers);
      fw.control.simulateGiftPurchase({ quantity: 2, username: 'kind_fan', durationSeconds: 20 });
      await waitUntil(() => chat.botMessages().some((m) => /!enter/.test(m)), 60_000, 'the draw announced in chat');
      enterAll(chat, ['viewer_one', 'viewer_two', 'viewer_three']);
      await waitUntil(
        () => chat.botMessages().some((m) => /won|winner/i.test(m) && /viewer_(one|two|three)/.test(m)),
        120_000,
        'the winners in chat',
      );
      const winners = chat.botMessages().find((m) => /won|winner/i.test(m) && /viewer_/.test(m))!;
      expect(winners).toMatch(/viewer_(one|two|three)/);

      // Live, the page adds the broadcaster's login; "Apply" restarts the bot in the same process.
      let botLogins = 0;
      chat.on('connection', (c) => {
        if (c.login === chat.botLogin) botLogins++;
      });
      await page.click('#broadcaster-login');
      const openB = await page.waitForSelector('#broadcaster-open', { timeout: 30_000 });
      const [twitchB] = await Promise.all([browser!.context.waitForEvent('page'), openB.click()]);
      await twitchB.waitForLoadState();
      await twitchB.fill('#login', chat.channel);
      await twitchB.click('#authorize');
      await twitchB.waitForSelector('text=Return to your device');
      await twitchB.close();
      await row('broadcaster', 'ok');
      await page.click('#apply');
      await page.waitForSelector('#live', { timeout: 120_000 });
      await waitUntil(
        () => botLogins >= 1 && chat.joined().includes(chat.botLogin),
        60_000,
        'the restarted bot back in chat',
      );
      expect(plain()).toMatch(
        /setup page \(change the channel, the logins or the tunnel address\) at http:\/\/127\.0\.0\.1:\d+\/setup[\s\S]*setup page \(change/,
      );
      const journal = await readFile(join(home, 'data', 'twitch-logins.jsonl'), 'utf8');
      expect(journal).toContain('"role":"broadcaster"');

      // What the page saved: in the data folder, owner-only; nothing else in the folder.
      expect((await readdir(home)).sort()).toEqual(['data', 'giftdrop-linux-x64']);
      for (const f of ['setup.json', 'twitch-logins.jsonl'])
        expect((await stat(join(home, 'data', f))).mode & 0o777).toBe(0o600);
      expect(plain()).not.toContain(fw.password);

      child.stdin!.write('\u0003');
      await waitUntil(() => child!.exitCode !== null, 30_000, 'the bot to stop');
    }, 420_000);
  },
);
