/**
 * Entries from channel points end to end: the real bot (startBot, live code paths) against the
 * Fourthwall sandbox, the chat sandbox, the Helix sandbox's channel points and the sandbox
 * EventSub server, over real sockets. The bot creates its own reward (paused while no draw is
 * open); a redemption during a draw is an entry and FULFILLED; one with no draw open, one past the
 * per-viewer cap, and one by an excluded viewer are CANCELED (refunded); a redemption made while
 * the socket was down is settled after the reconnect; across a restart of the bot, the redemptions
 * made while it was down are settled and one it had entered but not yet marked is FULFILLED
 * without a second entry; role rules (subscribers only, no moderators) for a viewer who never
 * chatted are decided by what Twitch's API tells (the sandbox's Get Broadcaster Subscriptions and
 * Get Moderators); a reward another app made is never touched; a channel that is not
 * Affiliate or Partner is told plainly. Bits used add tickets, the
 * frozen list carries them and `npm run verify` (the CLI, in a child process) replays the picks.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config/index.js';
import { fileSchema } from '../src/config/schema.js';
import { createLogger } from '../src/logging/index.js';
import { startBot, type Bot } from '../src/app/bot.js';
import { configForLocal, registerBotWebhook, startLocalChat } from '../src/local/local-stack.js';
import type { ChatServer } from '../src/sandbox/chat/index.js';
import type { LocalTwitchEvents } from '../src/sandbox/eventsub/local.js';
import { startFourthwallSandbox, type FourthwallSandbox } from '../src/sandbox/fourthwall/index.js';
import type { SimRedemption } from '../src/sandbox/helix/channel-points.js';
import { LogCapture } from './support/log-capture.js';
import { makeTempDir, PROJECT_ROOT, setShopLive, waitUntil } from './support/e2e-stack.js';
import { spawn } from 'node:child_process';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

interface World {
  fourthwall: FourthwallSandbox;
  chat: ChatServer;
  twitch: LocalTwitchEvents;
  dataDir: string;
  startBot(settings?: Record<string, unknown>): Promise<Bot>;
}

const CHANNEL_POINTS = { enabled: true, title: 'Enter the giveaway', cost: 500, maxPerViewer: 1 };

async function world(): Promise<World> {
  const temp = await makeTempDir('giftdrop-channel-points-');
  cleanups.push(temp.cleanup);
  const logger = createLogger({ level: 'silent' });
  const fourthwall = await startFourthwallSandbox({ logger });
  cleanups.push(() => fourthwall.close());
  const { chatServer: chat, twitch } = await startLocalChat({ logger, chat: { botIsMod: true } });
  cleanups.push(() => chat.close());
  cleanups.push(() => twitch.close());
  setShopLive({ fourthwall, chat });
  return {
    fourthwall,
    chat,
    twitch,
    dataDir: temp.dir,
    async startBot(settings = {}) {
      const base = loadConfig({
        env: { DATA_DIR: temp.dir, HTTP_PORT: '0', GIFTDROP_LOCAL_PORT: '0' },
        dotenv: false,
        cwd: temp.dir,
      });
      const endpoint = {
        url: chat.url,
        authUrl: chat.authUrl,
        channel: chat.channel,
        channelId: chat.channelId,
        botLogin: chat.botLogin,
        token: chat.token,
        refreshToken: chat.refreshToken,
        clientId: chat.clientId,
        clientSecret: chat.clientSecret,
        eventSubUrl: twitch.eventSub.url,
        broadcasterToken: twitch.broadcaster.token,
      };
      const config: Config = {
        ...configForLocal(base, fourthwall, endpoint),
        dataDir: temp.dir,
        settings: fileSchema.parse({ fairness: { beacon: 'off' }, channelPoints: CHANNEL_POINTS, ...settings }),
      };
      const bot = await startBot({
        config,
        logger: createLogger({ level: 'debug', destination: new LogCapture() }),
        operator: { notify: () => undefined },
        twitchEvents: {
          eventSub: { backoff: { drop: { baseMs: 50, maxMs: 50, jitter: 'none' } } },
          retry: { baseMs: 50, maxMs: 200 },
        },
      });
      cleanups.push(() => bot.stop('test end'));
      await registerBotWebhook(bot);
      return bot;
    },
  };
}

async function rewardReady(w: World, bot: Bot): Promise<string> {
  await waitUntil(
    () =>
      bot.twitchEvents.channelPoints?.state === 'ready' && bot.twitchEvents.eventSub?.health().state === 'connected',
    10_000,
    'reward and EventSub ready',
  );
  return bot.twitchEvents.channelPoints!.rewardId!;
}

async function openDraw(w: World, bot: Bot, rewardId: string): Promise<void> {
  w.fourthwall.control.simulateGiftPurchase({ quantity: 1, username: 'kind_fan', durationSeconds: 300 });
  await waitUntil(() => bot.engine.openDrawCount() === 1, 10_000, 'a draw open');
  await waitUntil(
    () => w.twitch.channelPoints.rewards.get(rewardId)!.isPaused === false,
    10_000,
    'the reward unpaused',
  );
}

function redeem(w: World, rewardId: string, login: string): SimRedemption {
  const v = w.chat.viewer(login);
  const r = w.twitch.channelPoints.redeem(rewardId, { id: v.userId, login: v.login });
  if (typeof r === 'string') throw new Error(`could not redeem: ${r}`);
  return r;
}

const statusOf = (w: World, r: SimRedemption) => w.twitch.channelPoints.redemptions.get(r.id)!.status;

describe('channel-point entries', { timeout: 60_000 }, () => {
  it('a redemption during a draw is an entry and FULFILLED; no draw, past the cap, or excluded: CANCELED and refunded', async () => {
    const w = await world();
    const foreign = w.twitch.channelPoints.addForeignReward(w.chat.channelId, 'Hydrate!');
    const bot = await w.startBot({ eligibility: { excludeLogins: ['banned_fan'] } });
    const rewardId = await rewardReady(w, bot);
    const reward = w.twitch.channelPoints.rewards.get(rewardId)!;
    expect(reward).toMatchObject({ title: 'Enter the giveaway', cost: 500, isPaused: true, clientId: w.chat.clientId });

    // No draw: the reward is paused (Twitch refuses to redeem it); unpaused by hand, a redemption is refunded.
    expect(w.twitch.channelPoints.redeem(rewardId, { id: '777', login: 'early' })).toBe('paused');
    reward.isPaused = false;
    const early = redeem(w, rewardId, 'early_bird');
    await waitUntil(() => statusOf(w, early) === 'CANCELED', 10_000, 'refund with no draw open');

    await openDraw(w, bot, rewardId);
    const first = redeem(w, rewardId, 'alice');
    await waitUntil(() => statusOf(w, first) === 'FULFILLED', 10_000, 'alice fulfilled');
    const alice = w.chat.viewer('alice');
    expect(bot.engine.drawViews()[0]!.entrants.get(alice.userId)).toMatchObject({ login: 'alice', weight: 1 });
    const again = redeem(w, rewardId, 'alice');
    const banned = redeem(w, rewardId, 'banned_fan');
    await waitUntil(
      () => statusOf(w, again) === 'CANCELED' && statusOf(w, banned) === 'CANCELED',
      10_000,
      'cap and excluded refunded',
    );
    expect(bot.engine.drawViews()[0]!.entrants.size).toBe(1);
    expect(w.twitch.channelPoints.refunds).toBe(3);
    expect(w.twitch.channelPoints.fulfilled).toBe(1);
    await waitUntil(
      () => bot.twitchEvents.channelPoints!.health().refunded === 3,
      10_000,
      'the bot counted the refunds',
    );
    expect(bot.health()).toMatchObject({
      eventsub: 'connected',
      channelPoints: { state: 'ready', entered: 1, refunded: 3, paused: false },
    });
    // The other app's reward was never changed.
    expect(w.twitch.channelPoints.rewards.get(foreign.id)).toMatchObject({ title: 'Hydrate!', isPaused: false });
  });

  it('a redemption made while the socket was down is settled after the reconnect (caught up, not replayed)', async () => {
    const w = await world();
    const bot = await w.startBot();
    const rewardId = await rewardReady(w, bot);
    await openDraw(w, bot, rewardId);
    w.twitch.eventSub.drop({ code: 4006 });
    const r = redeem(w, rewardId, 'late_fan'); // no session holds the subscription: the event is lost
    expect(w.twitch.eventSub.sent.filter((s) => s.type.startsWith('channel.channel_points'))).toHaveLength(0);
    await waitUntil(() => statusOf(w, r) === 'FULFILLED', 10_000, 'settled after the reconnect');
    expect(bot.engine.drawViews()[0]!.entrants.get(w.chat.viewer('late_fan').userId)).toBeDefined();
  });

  it('across a restart: redemptions made while the bot was down are settled, and an entry not yet marked is FULFILLED once', async () => {
    const w = await world();
    const first = await w.startBot({ channelPoints: { ...CHANNEL_POINTS, ticketsPerRedemption: 3, maxPerViewer: 2 } });
    const rewardId = await rewardReady(w, first);
    await openDraw(w, first, rewardId);
    // Twitch cannot be told: bob's redemption is entered (journaled) but stays UNFULFILLED.
    w.twitch.channelPoints.settleDown = true;
    const bob = redeem(w, rewardId, 'bob');
    const bobId = w.chat.viewer('bob').userId;
    await waitUntil(() => first.engine.drawViews()[0]?.entrants.get(bobId)?.weight === 3, 10_000, 'bob entered');
    await first.stop('restart');
    expect(statusOf(w, bob)).toBe('UNFULFILLED');
    // While the bot is down: carol redeems (the reward stays open: nobody paused it).
    const carol = redeem(w, rewardId, 'carol');
    w.twitch.channelPoints.settleDown = false;

    const second = await w.startBot({ channelPoints: { ...CHANNEL_POINTS, ticketsPerRedemption: 3, maxPerViewer: 2 } });
    await waitUntil(
      () => statusOf(w, bob) === 'FULFILLED' && statusOf(w, carol) === 'FULFILLED',
      15_000,
      'both settled after the restart',
    );
    expect(second.twitchEvents.channelPoints!.rewardId).toBe(rewardId); // its own reward, found again by id
    expect(w.twitch.channelPoints.rewards.size).toBe(1);
    const view = second.engine.drawViews()[0]!;
    expect(view.entrants.get(bobId)!.weight).toBe(3); // not entered twice
    expect(view.entrants.get(w.chat.viewer('carol').userId)!.weight).toBe(3);
    expect(w.twitch.channelPoints.refunds).toBe(0);
  });

  it('a redemption left pending while no draw is open when the bot comes back is refunded', async () => {
    const w = await world();
    const first = await w.startBot();
    const rewardId = await rewardReady(w, first);
    await first.stop('restart');
    w.twitch.channelPoints.rewards.get(rewardId)!.isPaused = false; // unpaused by hand meanwhile
    const r = redeem(w, rewardId, 'dave');
    await w.startBot();
    await waitUntil(() => statusOf(w, r) === 'CANCELED', 15_000, 'refunded after the restart');
    expect(w.twitch.channelPoints.rewards.get(rewardId)!.isPaused).toBe(true);
  });

  it("role rules for a viewer who never chatted: Twitch's API is asked; a confirmed subscriber enters, a non-subscriber and a moderator are refunded with the reason", async () => {
    const w = await world();
    const bot = await w.startBot({ eligibility: { subscribersOnly: true, excludeModerators: true } });
    const rewardId = await rewardReady(w, bot);
    await openDraw(w, bot, rewardId);
    const sub = w.chat.viewer('quiet_sub');
    const modSub = w.chat.viewer('quiet_mod');
    w.twitch.roles.setSubscriber(sub);
    w.twitch.roles.setSubscriber(modSub);
    w.twitch.roles.setModerator(modSub);
    const entered = redeem(w, rewardId, 'quiet_sub');
    const notSub = redeem(w, rewardId, 'quiet_viewer');
    const mod = redeem(w, rewardId, 'quiet_mod');
    await waitUntil(
      () =>
        statusOf(w, entered) === 'FULFILLED' && statusOf(w, notSub) === 'CANCELED' && statusOf(w, mod) === 'CANCELED',
      10_000,
      'decided by the roles Twitch told',
    );
    expect(bot.engine.drawViews()[0]!.entrants.get(sub.userId)).toMatchObject({
      login: 'quiet_sub',
      roles: { subscriber: true, moderator: false },
    });
    expect(bot.engine.drawViews()[0]!.entrants.size).toBe(1);
    await waitUntil(() => bot.twitchEvents.channelPoints!.health().refunded === 2, 10_000, 'the refunds counted');
    expect(bot.twitchEvents.channelPoints!.health().refundReasons).toEqual({
      'not-eligible:not-subscriber': 1,
      'not-eligible:moderator': 1,
    });
    expect(w.twitch.roles.calls).toEqual({ subscriptions: 3, moderators: 3 });
    // At close the subscriber is still eligible: the roles the entry was decided on are the entrant's.
    const drawId = bot.engine.drawViews()[0]!.record.id;
    w.chat.inject(w.chat.broadcaster, '!giveaway end');
    await waitUntil(async () => (await bot.repo.getDraw(drawId))?.status === 'finished', 20_000, 'the draw finished');
    expect((await bot.repo.getDraw(drawId))!.winners.map((x) => x.login)).toEqual(['quiet_sub']);
  });

  it('a channel that is not Affiliate or Partner: said plainly in /healthz, no socket opened, the bot runs on', async () => {
    const w = await world();
    w.twitch.channelPoints.setAffiliate(w.chat.channelId, false);
    const bot = await w.startBot();
    await waitUntil(() => bot.twitchEvents.channelPoints?.state === 'refused', 10_000, 'refused');
    expect(bot.health().problems).toEqual([
      expect.stringMatching(/^channel points are off: .*channel points need an Affiliate or Partner channel/),
    ]);
    expect(w.twitch.eventSub.connections).toBe(0);
    expect(bot.health()).not.toHaveProperty('eventsub');
  });

  it('bits used during a draw add tickets (1 per 100 bits, capped), through the same EventSub client', async () => {
    const w = await world();
    const bot = await w.startBot({
      channelPoints: { enabled: false },
      bits: { enabled: true, bitsPerTicket: 100, maxTickets: 2 },
    });
    await waitUntil(() => bot.twitchEvents.eventSub?.health().state === 'connected', 10_000, 'EventSub connected');
    w.fourthwall.control.simulateGiftPurchase({ quantity: 1, username: 'kind_fan', durationSeconds: 300 });
    await waitUntil(() => bot.engine.openDrawCount() === 1, 10_000, 'a draw open');
    const erin = w.chat.viewer('erin');
    w.chat.inject(erin, '!enter');
    await waitUntil(() => bot.engine.drawViews()[0]?.entrants.get(erin.userId) !== undefined, 10_000, 'erin entered');
    expect(w.twitch.useBits({ id: erin.userId, login: erin.login }, 250)).toBe(1);
    await waitUntil(() => bot.engine.drawViews()[0]!.entrants.get(erin.userId)!.weight === 3, 10_000, '1 + 2 tickets');
    w.twitch.useBits({ id: erin.userId, login: erin.login }, 500);
    await waitUntil(
      () => bot.health().bits !== undefined && (bot.health().bits as { events: number }).events === 2,
      10_000,
      'second bits event',
    );
    expect(bot.engine.drawViews()[0]!.entrants.get(erin.userId)!.weight).toBe(3); // capped at 2 from bits
    // The draw closes; its frozen list carries the tickets, and `npm run verify` replays the picks with them.
    const drawId = bot.engine.drawViews()[0]!.record.id;
    w.chat.viewer('frank');
    w.chat.inject(w.chat.viewer('frank'), '!enter');
    await waitUntil(() => bot.engine.drawViews()[0]!.entrants.size === 2, 10_000, 'frank entered');
    w.chat.inject(w.chat.broadcaster, '!giveaway end');
    await waitUntil(async () => (await bot.repo.getDraw(drawId))?.status === 'finished', 20_000, 'the draw finished');
    const rec = (await bot.repo.getDraw(drawId))!;
    expect(Object.fromEntries(rec.frozenEntrants!.map((e) => [e.login, e.weight]))).toEqual({ erin: 3, frank: 1 });
    expect(rec.rules).toMatchObject({
      tickets: { bits: { bitsPerTicket: 100, maxTickets: 2 } },
      ticketsGranted: { bits: 2 },
    });
    const verify = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/verify.ts', '--live', drawId], {
        cwd: PROJECT_ROOT,
        env: { ...process.env, DATA_DIR: w.dataDir, GIFTDROP_MODE: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
      child.stderr.on('data', (d: Buffer) => (out += d.toString('utf8')));
      child.on('close', (code) => resolve({ code, out }));
    });
    expect(verify.out).toContain(rec.winners[0]!.login);
    expect(verify.code).toBe(0);
  });
});
