/**
 * A streamer who set up by the setup page alone (its Public application's client id, the bot's
 * device-code login, the public address; no .env) runs live: the claim page is off, and the bot
 * says why in the words of delivery/winner-reach.ts everywhere: one start-up line naming the
 * streamer's own Confidential application and where its id and secret go (never the old "needs
 * TWITCH_CLIENT_SECRET"), the dashboard API's `state.reach`, the setup page attached to that bot
 * (the same detail, word for word), and the dashboard in a real Chromium (#reach, with a link to the
 * setup page; screenshots at 1920x1080 and 390x844). The whispers follow the bot's login: on with
 * the page's scopes, off with "log the bot in again" when its login lacks user:manage:whispers.
 * Two more things the page-only streamer is told where they act: a saved Fourthwall password that
 * Fourthwall refuses is to be entered again on the setup page, and a public address that does not
 * reach the bot (a quick tunnel renewed) is one problem line naming the setup page (none when it
 * does: the setup page's nonce check through the bot's public listener, as main.ts wires it).
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
import { freePort, makeTempDir } from './support/e2e-stack.js';
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
  const local = await startLocalChat({
    logger: quiet,
    chat: { botIsMod: true, publicClientId: PUBLIC, deviceIntervalSeconds: 1 },
  });
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
async function pageOnlyBot(
  scopes: readonly string[],
  o: {
    password?: string;
    publicUrl?: string;
    httpPort?: number;
    checkAddress?: (line: string | undefined) => void;
  } = {},
): Promise<{ bot: Bot; config: Config; logs: LogCapture; dir: string }> {
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
      FOURTHWALL_PASSWORD: o.password ?? fourthwall.password,
      FOURTHWALL_WEBHOOK_SECRET: fourthwall.webhookSecret,
      GIFTDROP_PUBLIC_URL: o.publicUrl ?? TUNNEL,
    },
    live: true,
    botLogin: true,
    savedAt: new Date().toISOString(),
  };
  await writeFile(join(temp.dir, 'setup.json'), JSON.stringify(setup), { mode: 0o600 });
  // Only where the sandboxes listen (a streamer's defaults are Twitch's and Fourthwall's) and the ports.
  const env = {
    DATA_DIR: temp.dir,
    HTTP_PORT: String(o.httpPort ?? 0),
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
  // As main.ts starts it: the setup page's address check on the public listener.
  const page = new SetupService({
    config,
    logger: createLogger({ level: 'silent' }),
    clock: systemClock,
    lockHeld: true,
  });
  cleanups.push(() => page.close());
  const checked = o.checkAddress;
  const check = checked
    ? {
        publicRoutes: [page.publicRoute],
        checkPublicUrl: async (url: string, signal: AbortSignal) => {
          const line = await page.checkPublicUrl(url, signal, []);
          checked(line);
          return line;
        },
      }
    : {};
  const bot = await startBot({
    config,
    logger: createLogger({ level: 'info', destination: logs }),
    loginStore: store,
    operator: { notify: () => undefined },
    ...check,
  });
  cleanups.push(() => bot.stop('test end'));
  if (!o.password && !o.checkAddress) await registerBotWebhook(bot);
  return { bot, config, logs, dir: temp.dir };
}

async function dashboardReach(bot: Bot): Promise<Reach[]> {
  const res = await fetch(`${bot.http.localUrl}/dashboard/api/state`, {
    headers: { authorization: `Bearer ${bot.pages.token.token}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { reach: Reach[] }).reach;
}

describe('the claim page and whispers, said the same everywhere', { timeout: 120_000 }, () => {
  it("a page-only setup: the claim page is off and every place names the streamer's own Confidential application", async () => {
    const { bot, config, logs } = await pageOnlyBot(BOT_SCOPES);

    // One start-up line, naming what turns the claim page on and where it goes.
    const line = (JSON.parse(logs.lines.find((l) => l.includes(`${TUNNEL}/claim`))!) as { msg: string }).msg;
    expect(line).toContain('Client Type "Confidential"');
    expect(line).toContain(
      'in the .env file (copy .env.example to .env) as two lines, TWITCH_CLIENT_ID=<Client ID> and TWITCH_CLIENT_SECRET=<Client Secret>',
    );
    expect(line).toContain(`${TUNNEL}/claim/callback`);
    expect(line).not.toContain('needs TWITCH_CLIENT_SECRET');

    // The dashboard API: the claim page off with the same words; whispers on (the page's login asks for them).
    await expect
      .poll(async () => (await dashboardReach(bot)).find((r) => r.id === 'whispers')?.status, { timeout: 15_000 })
      .toBe('on');
    const reach = await dashboardReach(bot);
    const claim = reach.find((r) => r.id === 'claim-page')!;
    expect(claim.status).toBe('off');
    expect(line).toContain(claim.detail);
    expect(reach.find((r) => r.id === 'whispers')!.detail).toMatch(/^on: each winner is whispered their link\./);

    // The setup page attached to the running bot (as main.ts attaches it) shows the same detail.
    const setup = new SetupService({
      config,
      logger: createLogger({ level: 'silent' }),
      clock: systemClock,
      lockHeld: true,
    });
    cleanups.push(() => setup.close());
    await setup.loginStore();
    setup.attach(
      config,
      () => bot.health().problems ?? [],
      () => bot.twitchEvents,
      () => bot.reach(),
    );
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
    await expect
      .poll(async () => (await dashboardReach(bot)).find((r) => r.id === 'whispers')?.status, { timeout: 15_000 })
      .toBe('off');
    const whispers = (await dashboardReach(bot)).find((r) => r.id === 'whispers')!;
    expect(whispers.detail).toBe(
      "off: the bot's Twitch login lacks the scope user:manage:whispers: log the bot in again on the setup page (its login asks for whispers).",
    );
    if (!browser) return;
    const page = await browser.context.newPage();
    cleanups.push(() => page.close());
    await page.goto(`${bot.http.localUrl}/dashboard#token=${encodeURIComponent(bot.pages.token.token)}`);
    await expect
      .poll(() => page.locator('#reach').innerText(), { timeout: 15_000 })
      .toContain('Whispers to winners is off: what turns it on');
    expect(await page.locator('[data-reach="whispers"] p').textContent()).toBe(whispers.detail);
  });

  it("Fourthwall refusing the password the page saved: the dashboard's problem line says to enter it again on the setup page", async () => {
    const { bot } = await pageOnlyBot(BOT_SCOPES, { password: 'a-password-fourthwall-refuses' });
    await expect
      .poll(() => (bot.health().problems ?? []).some((l) => l.startsWith('Fourthwall refused')), { timeout: 15_000 })
      .toBe(true);
    const line = bot.health().problems!.find((l) => l.startsWith('Fourthwall refused'))!;
    expect(line).toMatch(/^Fourthwall refused FOURTHWALL_USERNAME\/FOURTHWALL_PASSWORD \(it answered 401 /);
    expect(line).toContain(
      "Enter them again in the setup page's Fourthwall row (Apply restarts the bot), or fix them in .env if they are set there.",
    );
    expect(line).not.toContain('a-password-fourthwall-refuses');
    // The webhook registration refused for the same reason does not send the streamer after permissions.
    await expect.poll(() => (bot.health().problems ?? []).length, { timeout: 15_000 }).toBe(2);
    expect(bot.health().problems!.join('\n')).not.toContain('webhook read/write permissions');
  });

  it('a public address that does not reach the bot (a quick tunnel renewed, or not running): one problem line naming the setup page; one that does: none', async () => {
    const dead = await freePort();
    const { bot } = await pageOnlyBot(BOT_SCOPES, {
      publicUrl: `http://127.0.0.1:${dead}`,
      checkAddress: () => undefined,
    });
    await expect
      .poll(() => (bot.health().problems ?? []).find((l) => l.startsWith('The public address')), { timeout: 15_000 })
      .toBeDefined();
    const line = bot.health().problems!.find((l) => l.startsWith('The public address'))!;
    expect(line).toContain(`http://127.0.0.1:${dead} could not be reached from here (ECONNREFUSED)`);
    expect(line).toContain('A quick tunnel gets a new address at each start: give the new one on the setup page.');

    const port = await freePort();
    const answers: (string | undefined)[] = [];
    const { bot: reached } = await pageOnlyBot(BOT_SCOPES, {
      publicUrl: `http://127.0.0.1:${port}`,
      httpPort: port,
      checkAddress: (line) => answers.push(line),
    });
    // The check ran (its nonce came back through the public listener), and nothing was reported.
    await expect.poll(() => answers.length, { timeout: 15_000 }).toBe(1);
    expect(answers).toEqual([undefined]);
    expect((reached.health().problems ?? []).filter((l) => l.startsWith('The public address'))).toEqual([]);
  });
});
