/**
 * The setup page in a real headless Chromium shows what going live needs first, then "Go live", then
 * the optional rows; and it keeps what the streamer is typing while it re-renders
 * its rows: after a wrong Fourthwall password the username typed stays (only the row just saved is
 * cleared), and while a Twitch login waits (the page polls and rebuilds every row) an address typed
 * into another row stays, with the focus in its field. Against the Fourthwall sandbox and the chat
 * sandbox's device code flow, through the real setup route and service.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { silentLogger } from '../src/logging/index.js';
import { systemClock } from '../src/shared/clock.js';
import { SetupService } from '../src/setup/setup-service.js';
import { setupRoute } from '../src/setup/setup-routes.js';
import { HAS_CHROMIUM, launchBrowser, type TestBrowser } from './support/browser.js';
import { makeTempDir, startLocalServers, type LocalServers } from './support/e2e-stack.js';

const PUBLIC = 'typingpublicapp';

let servers: LocalServers;
let temp: { dir: string; cleanup: () => Promise<void> };
let service: SetupService;
let server: Server;
let base: string;
let browser: TestBrowser;

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  servers = await startLocalServers({ chat: { publicClientId: PUBLIC, deviceIntervalSeconds: 1 } });
  temp = await makeTempDir('giftdrop-setup-typing-');
  const config = loadConfig({
    env: {
      DATA_DIR: temp.dir,
      FOURTHWALL_API_URL: servers.fourthwall.apiUrl,
      TWITCH_IRC_URL: servers.chat.url,
      TWITCH_CLIENT_ID: PUBLIC,
    },
    dotenv: false,
    cwd: temp.dir,
  });
  service = new SetupService({ config, logger: silentLogger(), clock: systemClock, lockHeld: false });
  const route = setupRoute(service, { dataDir: join(temp.dir, 'sandbox'), liveDataDir: temp.dir });
  server = createServer((req, res) => {
    if (!route(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await mkdir(join(temp.dir, 'sandbox'), { mode: 0o700 });
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await new Promise((r) => server?.close(r));
  await service?.close();
  service?.release();
  await servers?.close();
  await temp?.cleanup();
});

describe.skipIf(!HAS_CHROMIUM)('the setup page keeps what is typed', { timeout: 90_000 }, () => {
  it('a wrong password keeps the username; a waiting Twitch login does not wipe the address being typed', async () => {
    expect((await fetch(`${base}/setup`)).status).toBe(200); // makes the pages' token
    const token = (await readFile(join(temp.dir, 'sandbox', 'dashboard.token'), 'utf8')).trim();
    const page = await browser.context.newPage();
    await page.goto(`${base}/setup#token=${token}`);
    const row = (id: string, status: string) =>
      page.waitForSelector(`#row-${id}[data-status="${status}"]`, { timeout: 30_000 });
    await row('fourthwall', 'todo');
    // What going live needs comes first, then Go live; the optional rows below it.
    const order = await page.evaluate(
      '[...document.querySelectorAll("#setup section, #apply, #more")].map((e) => e.id)',
    );
    expect(order).toEqual([
      'row-fourthwall',
      'row-secret',
      'row-client-id',
      'row-bot',
      'row-channel',
      'row-public-url',
      'apply',
      'more',
      'row-whispers',
      'row-claim-page',
      'row-broadcaster',
      'row-channel-points',
      'row-bits',
      'row-bot-badge',
    ]);

    await page.fill('#fourthwall-username', servers.fourthwall.username);
    await page.fill('#fourthwall-password', 'not-the-password');
    await page.click('#fourthwall-submit');
    await row('fourthwall', 'error');
    expect(await page.textContent('#detail-fourthwall')).toMatch(
      /^The username and password were rejected: Fourthwall answered 401/,
    );
    expect(await page.inputValue('#fourthwall-username')).toBe(servers.fourthwall.username);
    await page.fill('#fourthwall-password', servers.fourthwall.password);
    await page.click('#fourthwall-submit');
    await row('fourthwall', 'ok');
    expect(await page.inputValue('#fourthwall-username')).toBe(''); // saved: its fields are cleared

    // The bot's login waits for Twitch: the page polls and rebuilds its rows while the address is typed.
    await page.click('#bot-login');
    await row('bot', 'pending');
    await page.click('#public-url-url');
    await page.keyboard.type('https://my-bot.ngrok-free.app');
    const before = await page.evaluate('(window.__row = document.getElementById("row-public-url"), 1)');
    expect(before).toBe(1);
    // A re-render replaced the row (the poll's): the typed address and the focus are still there.
    await expect
      .poll(() => page.evaluate('document.getElementById("row-public-url") !== window.__row'), {
        timeout: 15_000,
        interval: 100,
      })
      .toBe(true);
    expect(await page.inputValue('#public-url-url')).toBe('https://my-bot.ngrok-free.app');
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('public-url-url');
    await page.close();
  });
});
