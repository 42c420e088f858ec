/**
 * A streamer who set up by the setup page alone (its Public application's client id, the bot's
 * device-code login, the public address; no .env) runs live: the claim page is off, and the bot
 * says why in the words of delivery/winner-reach.ts everywhere: one start-up line naming the
 * streamer's own Confidential application and where its id and secret go (never the old "needs
 * TWITCH_CLIENT_SECRET"), the dashboard API's `state.reach`, the setup page attached to that bot
 * (the same detail, word for word), and the dashboard in a real Chromium (#reach, with a link to the
 * setup page; screenshots at 1920x1080 and 390x844). The whispers follow the bot's login: on with
 * the page's scopes, off with "log the bot in again" when its login lacks user:manage:whispers.
 * Real parts over real sockets: the Fourthwall sandbox, the chat sandbox with its device code
 * flow, the bot in live mode.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startBot, type Bot } from '../src/app/bot.js';
import { loadConfig, type Config } from '../src/config/index.js';
import { fileSchema } from '../src/config/schema.js';
import type { Reach } from '../src/delivery/winner-reach.js';
import { registerBotWebhook, startLocalChat } from '../src/local/local-stack.js';
import { createLogger } from '../src/logging/index.js';
import type { ChatServer } from '../src/sandbox/chat/index.js';
import { startFourthwallSandbox, type FourthwallSandbox } from '../src/sandbox/fourthwall/index.js';
import { BOT_SCOPES } from '../src/setup/scopes.js';
import { SetupService } from '../src/setup/setup-service.js';
import { systemClock } from '../src/shared/clock.js';
import { LoginStore } from '../src/twitch/login-store.js';
import { HAS_CHROMIUM, launchBrowser, screenshotDir, type TestBrowser } from './support/browser.js';
import { saveDeviceLogin } from './support/device-login.js';
import { makeTempDir } from './support/e2e-stack.js';
import { LogCapture } from './support/log-capture.js';

const PUBLIC = 'reachpublicapp';
const TUNNEL = 'https://giftdrop-test.ngrok-free.app';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

let fourthwall: FourthwallSandbox;
let chat: ChatServer;
let closeTwitch: () => Promise<void>;
let browser: TestBrowser | undefined;
beforeAll(async () => {
  const quiet = createLogger({ level: 'silent' });
  fourthwall = await startFourthwallSandbox({ logger: quiet });
  const local = await startLocalChat({ logger: quiet, chat: { botIsMod: true, publicClientId: PUBLIC, deviceIntervalSeconds: 1 } });
  chat = local.chatServer;
  closeTwitch = () => local.twitch.close();
  if (HAS_CHROMIUM) browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await closeTwitch?.();
  await chat?.close();
  await fourthwall?.close();
});

/** The bot started as main.ts starts it after "Go live" on a page-only setup; `scopes`: what the bot's login was granted. */
async function pageOnlyBot(scopes: readonly string[]): Promise<{ bot: Bot; config: Config; logs: LogCapture; dir: string }> {
  const temp = await makeTempDir('giftdrop-reach-');
  cleanups.push(temp.cleanup);
  const store = await LoginStore.open(temp.dir);
  cleanups.push(() => store.close());
  await saveDeviceLogin(chat, store, { role: 'bot', login: chat.botLogin, clientId: PUBLIC, scopes });
  const setup = {
    version: 1,
    env: {
      TWITCH_CHANNEL: chat.channel,
      TWITCH_USERNAME: chat.botLogin,
      TWITCH_CLIENT_ID: PUBLIC,
      FOURTHWALL_USERNAME: fourthwall.username,
      FOURTHWALL_PASSWORD: fourthwall.password,
      FOURTHWALL_WEBHOOK_SECRET: fourthwall.webhookSecret,
      GIFTDROP_PUBLIC_URL: TUNNEL,
    },
    live: true,
    botLogin: true,
    savedAt: new Date().toISOString(),
  };
  await writeFile(join(temp.dir, 'setup.json'), JSON.stringify(setup), { mode: 0o600 });
  // Only where the sandboxes listen (a streamer's defaults are Twitch's and Fourthwall's) and the ports.
  const env = {
    DATA_DIR: temp.dir,
    HTTP_PORT: '0',
    GIFTDROP_LOCAL_PORT: '0',
    TWITCH_IRC_URL: chat.url,
    TWITCH_AUTH_URL: chat.authUrl,
    TWITCH_API_URL: chat.authUrl.replace(/\/oauth2$/, '/helix'),
    FOURTHWALL_API_URL: fourthwall.apiUrl,
    FOURTHWALL_EVENT_POLL_SECONDS: '0',
  };
  const loaded = loadConfig({ env, dotenv: false, cwd: temp.dir });
  expect(loaded.mode).toBe('live');
  const config = { ...loaded, settings: fileSchema.parse({ fairness: { beacon: 'off' } }) };
  const logs = new LogCapture();
  const bot = await startBot({ config, logger: createLogger({ level: 'info', destination: logs }), loginStore: store, operator: { notify: () => undefined } });
  cleanups.push(() => bot.stop('test end'));
  await registerBotWebhook(bot);
  return { bot, config, logs, dir: temp.dir };
}

async function dashboardReach(bot: Bot): Promise<Reach[]> {
  const res = await fetch(`${bot.http.localUrl}/dashboard/api/state`, { headers: { authorization: `Bearer ${bot.pages.token.token}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { reach: Reach[] }).reach;
}

describe('the claim page and whispers, said the same everywhere', { timeout: 120_000 }, () => {
  it("a page-only setup: the claim page is off and every place names the streamer's own Confidential application", async () => {
    const { bot, config, logs } = await pageOnlyBot(BOT_SCOPES);

    // One start-up line, naming what turns the claim page on and where it goes.
    const line = (JSON.parse(logs.lines.find((l) => l.includes(`${TUNNEL}/claim`))!) as { msg: string }).msg;
    expect(line).toContain('Client Type "Confidential"');
    expect(line).toContain('in the .env file (copy .env.example to .env) as two lines, TWITCH_CLIENT_ID=<Client ID> and TWITCH_CLIENT_SECRET=<Client Secret>');
    expect(line).toContain(`${TUNNEL}/claim/callback`);
    expect(line).not.toContain('needs TWITCH_CLIENT_SECRET');

    // The dashboard API: the claim page off with the same words; whispers on (the page's login asks for them).
    await expect.poll(async () => (await dashboardReach(bot)).find((r) => r.id === 'whispers')?.status, { timeout: 15_000 }).toBe('on');
    const reach = await dashboardReach(bot);
    const claim = reach.find((r) => r.id === 'claim-page')!;
    expect(claim.status).toBe('off');
    expect(line).toContain(claim.detail);
    expect(reach.find((r) => r.id === 'whispers')!.detail).toMatch(/^on: each winner is whispered their link\./);

    // The setup page attached to the running bot (as main.ts attaches it) shows the same detail.
    const setup = new SetupService({ config, logger: createLogger({ level: 'silent' }), clock: systemClock, lockHeld: true });
    cleanups.push(() => setup.close());
    await setup.loginStore();
    setup.attach(config, () => bot.health().problems ?? [], () => bot.twitchEvents, () => bot.reach());
    const row = (id: string) => setup.state().rows.find((r) => r.id === id)!;
    expect(row('claim-page')).toMatchObject({ status: 'off', detail: claim.detail });
    expect(row('whispers')).toMatchObject({ status: 'ok', detail: reach.find((r) => r.id === 'whispers')!.detail });

    // The dashboard in a browser: what is off, what turns it on, and the way to the setup page.
    if (!browser) return;
    const page = await browser.context.newPage();
    cleanups.push(() => page.close());
    await page.goto(`${bot.http.localUrl}/dashboard#token=${encodeURIComponent(bot.pages.token.token)}`);
    const box = page.locator('#reach');
    await box.waitFor({ state: 'visible', timeout: 15_000 });
    expect(await box.innerText()).toContain(`${claim.title} is off: what turns it on`);
    expect(await box.innerText()).not.toContain('Whispers to winners');
    await box.locator('[data-reach="claim-page"] summary').click();
    expect(await box.locator('[data-reach="claim-page"] p').innerText()).toBe(claim.detail);
    expect(await box.locator('a').getAttribute('href')).toBe('/setup');
    await page.screenshot({ path: join(screenshotDir(), 'dashboard-reach-1920.png') });
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(screenshotDir(), 'dashboard-reach-390.png') });
  });

  it("whispers off when the bot's login lacks user:manage:whispers: log the bot in again on the setup page", async () => {
    const { bot } = await pageOnlyBot(BOT_SCOPES.filter((s) => s !== 'user:manage:whispers'));
    await expect.poll(async () => (await dashboardReach(bot)).find((r) => r.id === 'whispers')?.status, { timeout: 15_000 }).toBe('off');
    const whispers = (await dashboardReach(bot)).find((r) => r.id === 'whispers')!;
    expect(whispers.detail).toBe("off: the bot's Twitch login lacks the scope user:manage:whispers: log the bot in again on the setup page (its login asks for whispers).");
    if (!browser) return;
    const page = await browser.context.newPage();
    cleanups.push(() => page.close());
    await page.goto(`${bot.http.localUrl}/dashboard#token=${encodeURIComponent(bot.pages.token.token)}`);
    await expect.poll(() => page.locator('#reach').innerText(), { timeout: 15_000 }).toContain('Whispers to winners is off: what turns it on');
    expect(await page.locator('[data-reach="whispers"] p').textContent()).toBe(whispers.detail);
  });
});
