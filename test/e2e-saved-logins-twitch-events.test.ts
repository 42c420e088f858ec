/**
 * A streamer who set up by the setup page alone (no .env, no TWITCH_CLIENT_ID in the environment):
 * the bot's and the broadcaster's Twitch logins are device-code logins of the Public application
 * (the sandbox's device code flow, answered as the streamer would on Twitch's page), saved in
 * DATA_DIR with the page's setup.json, and the configuration is what `loadConfig` makes of them.
 * With channel points turned on in the settings, the bot builds its EventSub client from the saved
 * logins' client id, creates its reward with the broadcaster's saved login, and a redemption during
 * a gift draw is an entry and FULFILLED, and the setup page attached to that bot says channel
 * points are on (bits and the Chat Bot badge off, with what they need). Real parts over real
 * sockets: the Fourthwall sandbox, the chat sandbox with its device code flow, the Helix sandbox's
 * channel points, the sandbox EventSub server, the bot in live mode.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startBot, type Bot } from '../src/app/bot.js';
import { loadConfig, type Config } from '../src/config/index.js';
import { fileSchema } from '../src/config/schema.js';
import { registerBotWebhook, startLocalChat } from '../src/local/local-stack.js';
import { createLogger } from '../src/logging/index.js';
import type { ChatServer } from '../src/sandbox/chat/index.js';
import type { LocalTwitchEvents } from '../src/sandbox/eventsub/local.js';
import { startFourthwallSandbox, type FourthwallSandbox } from '../src/sandbox/fourthwall/index.js';
import { BOT_SCOPES, BROADCASTER_SCOPES } from '../src/setup/scopes.js';
import { SetupService } from '../src/setup/setup-service.js';
import { systemClock } from '../src/shared/clock.js';
import { LoginStore, type TwitchRole } from '../src/twitch/login-store.js';
import { saveDeviceLogin } from './support/device-login.js';
import { LogCapture } from './support/log-capture.js';
import { makeTempDir, setShopLive, waitUntil } from './support/e2e-stack.js';

/** The Public application the page's logins use (the build's built-in client id, or the page's). */
const PUBLIC = 'setuppagepublicapp';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

interface PageWorld {
  fourthwall: FourthwallSandbox;
  chat: ChatServer;
  twitch: LocalTwitchEvents;
  dir: string;
  store: LoginStore;
}

/** The sandboxes, and a device-code login of `login` for `role` saved where the bot reads it (as the setup page saves it). */
async function pageWorld(): Promise<PageWorld> {
  const temp = await makeTempDir('giftdrop-saved-logins-');
  cleanups.push(temp.cleanup);
  const logger = createLogger({ level: 'silent' });
  const fourthwall = await startFourthwallSandbox({ logger });
  cleanups.push(() => fourthwall.close());
  const { chatServer: chat, twitch } = await startLocalChat({
    logger,
    chat: { botIsMod: true, publicClientId: PUBLIC, deviceIntervalSeconds: 1 },
  });
  cleanups.push(() => chat.close());
  cleanups.push(() => twitch.close());
  setShopLive({ fourthwall, chat });
  const store = await LoginStore.open(temp.dir);
  cleanups.push(() => store.close());
  return { fourthwall, chat, twitch, dir: temp.dir, store };
}

/** `role`'s login by device code with the page's scopes (or `asked`), saved as the page saves it. */
async function deviceLogin(w: PageWorld, role: TwitchRole, login: string, asked?: readonly string[]): Promise<void> {
  await saveDeviceLogin(w.chat, w.store, {
    role,
    login,
    clientId: PUBLIC,
    scopes: asked ?? (role === 'bot' ? BOT_SCOPES : BROADCASTER_SCOPES),
  });
}

/**
 * The configuration a page-only streamer runs with: setup.json as the page writes it after "Go
 * live", read by loadConfig. The environment holds only where the sandboxes listen (a real
 * streamer's defaults are Twitch's and Fourthwall's own addresses) and the ports; `envBot` puts the
 * bot's token in the environment instead (a .env with TWITCH_TOKEN and no TWITCH_CLIENT_ID), beside
 * the broadcaster's login from the page.
 */
async function pageConfig(
  w: PageWorld,
  settings: Record<string, unknown>,
  o: { envBot?: boolean } = {},
): Promise<Config> {
  const twitch = o.envBot ? { TWITCH_TOKEN: w.chat.token } : { TWITCH_CLIENT_ID: PUBLIC };
  const setup = {
    version: 1,
    env: {
      TWITCH_CHANNEL: w.chat.channel,
      TWITCH_USERNAME: w.chat.botLogin,
      ...(o.envBot ? {} : twitch),
      FOURTHWALL_USERNAME: w.fourthwall.username,
      FOURTHWALL_PASSWORD: w.fourthwall.password,
      FOURTHWALL_WEBHOOK_SECRET: w.fourthwall.webhookSecret,
    },
    live: true,
    botLogin: !o.envBot,
    savedAt: new Date().toISOString(),
  };
  await writeFile(join(w.dir, 'setup.json'), JSON.stringify(setup), { mode: 0o600 });
  const env = {
    DATA_DIR: w.dir,
    HTTP_PORT: '0',
    GIFTDROP_LOCAL_PORT: '0',
    TWITCH_IRC_URL: w.chat.url,
    TWITCH_AUTH_URL: w.chat.authUrl,
    TWITCH_API_URL: w.chat.authUrl.replace(/\/oauth2$/, '/helix'),
    TWITCH_EVENTSUB_URL: w.twitch.eventSub.url,
    FOURTHWALL_API_URL: w.fourthwall.apiUrl,
    FOURTHWALL_EVENT_POLL_SECONDS: '0',
    ...(o.envBot ? twitch : {}),
  };
  const loaded = loadConfig({ env, dotenv: false, cwd: w.dir });
  expect(loaded.mode).toBe('live');
  expect(loaded.twitch.broadcasterToken).toBeUndefined();
  if (o.envBot) expect(loaded.twitch.clientId).toBeUndefined();
  else expect(loaded.twitch.token).toBeUndefined();
  return { ...loaded, settings: fileSchema.parse({ fairness: { beacon: 'off' }, ...settings }) };
}

async function startPageBot(w: PageWorld, config: Config): Promise<Bot> {
  const bot = await startBot({
    config,
    logger: createLogger({ level: 'debug', destination: new LogCapture() }),
    loginStore: w.store,
    operator: { notify: () => undefined },
    twitchEvents: {
      eventSub: { backoff: { drop: { baseMs: 50, maxMs: 50, jitter: 'none' } } },
      retry: { baseMs: 50, maxMs: 200 },
    },
  });
  cleanups.push(() => bot.stop('test end'));
  await registerBotWebhook(bot);
  return bot;
}

/** The reward made with the broadcaster's saved login; a redemption during a gift draw is an entry and FULFILLED. */
async function redeemDuringDraw(w: PageWorld, bot: Bot): Promise<void> {
  await waitUntil(
    () =>
      bot.twitchEvents.channelPoints?.state === 'ready' && bot.twitchEvents.eventSub?.health().state === 'connected',
    15_000,
    'reward and EventSub ready',
  );
  expect(bot.health().problems ?? []).toEqual([]);
  const rewardId = bot.twitchEvents.channelPoints!.rewardId!;
  // The reward belongs to the Public application the broadcaster logged in with.
  expect(w.twitch.channelPoints.rewards.get(rewardId)).toMatchObject({
    title: 'Enter the giveaway',
    cost: 300,
    clientId: PUBLIC,
    isPaused: true,
  });

  w.fourthwall.control.simulateGiftPurchase({ quantity: 1, username: 'kind_fan', durationSeconds: 300 });
  await waitUntil(() => bot.engine.openDrawCount() === 1, 10_000, 'a draw open');
  await waitUntil(
    () => w.twitch.channelPoints.rewards.get(rewardId)!.isPaused === false,
    10_000,
    'the reward unpaused',
  );
  const viewer = w.chat.viewer('points_fan');
  const r = w.twitch.channelPoints.redeem(rewardId, { id: viewer.userId, login: viewer.login });
  if (typeof r === 'string') throw new Error(`could not redeem: ${r}`);
  await waitUntil(
    () => w.twitch.channelPoints.redemptions.get(r.id)!.status === 'FULFILLED',
    10_000,
    'the redemption FULFILLED',
  );
  expect(bot.engine.drawViews()[0]!.entrants.get(viewer.userId)).toMatchObject({ login: 'points_fan', weight: 1 });
  // The bot counts the redemption once Twitch's answer to its PATCH is back (after the sandbox set it).
  await waitUntil(() => bot.twitchEvents.channelPoints!.health().entered === 1, 10_000, 'the bot counted the entry');
  expect(bot.health()).toMatchObject({ eventsub: 'connected', channelPoints: { state: 'ready', entered: 1 } });
}

const CHANNEL_POINTS = { channelPoints: { enabled: true, title: 'Enter the giveaway', cost: 300 } };

describe("channel points with the setup page's logins", { timeout: 90_000 }, () => {
  it('the bot and the broadcaster logged in on the page, no env var: the reward is made, a redemption during a draw is FULFILLED', async () => {
    const w = await pageWorld();
    await deviceLogin(w, 'bot', w.chat.botLogin);
    await deviceLogin(w, 'broadcaster', w.chat.channel);
    const config = await pageConfig(w, CHANNEL_POINTS);
    const bot = await startPageBot(w, config);
    await redeemDuringDraw(w, bot);

    // The setup page, attached to the running bot as main.ts attaches it, says what is on now and what the rest needs.
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
    );
    const row = (id: string) => setup.state().rows.find((r) => r.id === id);
    expect(row('channel-points')).toMatchObject({
      status: 'ok',
      detail:
        'on: viewers redeem "Enter the giveaway" (300 points) while a draw is open; redemptions when none is open are refunded.',
    });
    expect(row('bits')?.status).toBe('off');
    expect(row('bits')?.detail).toMatch(
      /To turn it on: set "bits": \{ "enabled": true \} in the settings file \(config\/giftdrop\.json\), then apply\.$/,
    ); // the login has bits:read already
    expect(row('bot-badge')?.status).toBe('off');
    expect(row('bot-badge')?.detail).toContain(
      'set TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET of your own application in .env',
    );
  });

  it("the bot from .env without TWITCH_CLIENT_ID, the broadcaster from the page: the EventSub client comes from the broadcaster's login", async () => {
    const w = await pageWorld();
    await deviceLogin(w, 'broadcaster', w.chat.channel);
    const bot = await startPageBot(w, await pageConfig(w, CHANNEL_POINTS, { envBot: true }));
    expect(bot.twitchApi).toBeUndefined(); // the bot's own token has no Twitch API here
    await redeemDuringDraw(w, bot);
  });

  it("chat over EventSub with the page's bot login alone: connected over EventSub, !enter read and the bot's lines sent", async () => {
    const w = await pageWorld();
    await deviceLogin(w, 'bot', w.chat.botLogin);
    const bot = await startPageBot(w, await pageConfig(w, { chat: { transport: 'eventsub', botBadge: false } }));
    await waitUntil(
      () => bot.health().chat === 'connected' && bot.health().eventsub === 'connected',
      15_000,
      'chat over EventSub',
    );
    expect(bot.health()).toMatchObject({ chatTransport: 'eventsub' });
    w.fourthwall.control.simulateGiftPurchase({ quantity: 1, username: 'kind_fan', durationSeconds: 300 });
    await waitUntil(() => bot.engine.openDrawCount() === 1, 10_000, 'a draw open');
    const viewer = w.chat.viewer('chat_fan');
    w.chat.inject(viewer, '!enter');
    await waitUntil(
      () => bot.engine.drawViews()[0]?.entrants.get(viewer.userId) !== undefined,
      10_000,
      'entered over EventSub chat',
    );
    await waitUntil(
      () => w.chat.transcript.some((l) => l.kind === 'bot' && l.via === 'api'),
      10_000,
      'a line of the bot sent with Send Chat Message',
    );
  });

  it('subscribersOnly with a broadcaster login made before it asked channel:read:subscriptions: said once; a quiet subscriber is refunded with the rule, and enters after a !enter in chat', async () => {
    const w = await pageWorld();
    await deviceLogin(w, 'bot', w.chat.botLogin);
    const older = BROADCASTER_SCOPES.filter((s) => s !== 'channel:read:subscriptions' && s !== 'moderation:read');
    await deviceLogin(w, 'broadcaster', w.chat.channel, older);
    const bot = await startPageBot(
      w,
      await pageConfig(w, { ...CHANNEL_POINTS, eligibility: { subscribersOnly: true } }),
    );
    await waitUntil(
      () =>
        bot.twitchEvents.channelPoints?.state === 'ready' && bot.twitchEvents.eventSub?.health().state === 'connected',
      15_000,
      'reward and EventSub ready',
    );
    expect(bot.health().problems).toEqual([
      "eligibility.subscribersOnly is on, but the broadcaster's login lacks channel:read:subscriptions: a channel-point redemption by a viewer not in the draw from chat is refunded for it (a !enter in chat shows the role); log the broadcaster in again on the setup page to let the bot check.",
    ]);
    const rewardId = bot.twitchEvents.channelPoints!.rewardId!;
    w.fourthwall.control.simulateGiftPurchase({ quantity: 1, username: 'kind_fan', durationSeconds: 300 });
    await waitUntil(
      () => w.twitch.channelPoints.rewards.get(rewardId)?.isPaused === false,
      10_000,
      'the reward unpaused',
    );
    const sub = w.chat.viewer('quiet_sub', { subscriber: true, subMonths: 4 });
    w.twitch.roles.setSubscriber(sub); // Twitch knows; the bot may not ask
    const redeem = () => {
      const r = w.twitch.channelPoints.redeem(rewardId, { id: sub.userId, login: sub.login });
      if (typeof r === 'string') throw new Error(`could not redeem: ${r}`);
      return r;
    };
    const first = redeem();
    await waitUntil(
      () => w.twitch.channelPoints.redemptions.get(first.id)!.status === 'CANCELED',
      10_000,
      'refunded: the role is unknown',
    );
    expect(w.twitch.roles.calls.subscriptions).toBe(0);
    await waitUntil(
      () => bot.twitchEvents.channelPoints!.health().refundReasons?.['roles-unknown:subscribersOnly'] === 1,
      10_000,
      'the reason counted',
    );
    w.chat.inject(sub, '!enter');
    await waitUntil(
      () => bot.engine.drawViews()[0]?.entrants.get(sub.userId) !== undefined,
      10_000,
      'entered from chat',
    );
    const second = redeem();
    await waitUntil(
      () => w.twitch.channelPoints.redemptions.get(second.id)!.status === 'FULFILLED',
      10_000,
      'the chat roles decide now',
    );
    expect(bot.engine.drawViews()[0]!.entrants.get(sub.userId)!.weight).toBe(2); // 1 from !enter + 1 ticket
  });
});
