/**
 * Auto streaming wired into the real bot (issue 13): the whole local stack with
 * `streaming.auto` and the broadcaster already live on the local Helix API. The bot's first poll
 * sets Fourthwall streaming started once with the stream's thumbnail and says so in chat; `!stream`
 * says what auto mode does next. Without TWITCH_CLIENT_ID the Twitch API features stay off.
 * The poll cadence, grace and outage cases run on a manual clock in twitch-stream-watch.test.ts.
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { twitchApiFor } from '../src/twitch/api.js';
import { loadConfig } from '../src/config/index.js';
import { createLogger } from '../src/logging/index.js';
import { systemClock } from '../src/shared/clock.js';
import { startTwitchAuth } from '../src/twitch/startup.js';
import { LogCapture } from './support/log-capture.js';
import { FourthwallShop } from '../src/shop/shop-port.js';
import { FourthwallClient } from '../src/fourthwall/index.js';
import { silentLogger } from '../src/logging/index.js';
import { startChatServer } from '../src/sandbox/chat/index.js';
import { startFourthwallSandbox } from '../src/sandbox/fourthwall/index.js';
import { SandboxHelix } from '../src/sandbox/helix/index.js';
import { ManualClock } from '../src/shared/clock.js';
import { startLinkStack, tempDir, type LinkStack } from './support/e2e-link-stack.js';

const stacks: LinkStack[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of stacks.splice(0)) await s.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe('auto streaming in the running bot', () => {
  it('a bot started mid-stream sets Fourthwall live at once with the real thumbnail; !stream tells what auto mode does', async () => {
    const dataDir = await tempDir();
    dirs.push(dataDir);
    const s = await startLinkStack({
      dataDir,
      settings: { streaming: { auto: true } },
      helix: { prepare: (helix, chat) => helix.goLive(chat.channelId, chat.channel) },
    });
    stacks.push(s);
    await s.nextBotLine(/The stream is live: Fourthwall now shows it as LIVE/);
    const starts = s.requests('startStreaming');
    expect(starts).toHaveLength(1);
    expect(s.fw.state.live).toBe(true);
    expect(s.fw.state.streaming).toMatchObject({
      broadcasterId: s.chat.channelId,
      broadcasterLogin: s.chat.channel,
      thumbnailUrl: `https://static-cdn.jtvnw.net/previews-ttv/live_user_${s.chat.channel}-1280x720.jpg`,
    });
    expect(s.stack.helix.calls.filter((c) => c.path === '/streams')).toHaveLength(1);

    const mark = s.mark();
    s.say(s.mod, '!stream');
    expect(await s.nextBotLine(/Fourthwall streaming status/, mark)).toMatch(
      /ONLINE.*Auto mode: the stream is live; it sets offline 120 s after the stream ends\./,
    );
    expect(s.requests('startStreaming')).toHaveLength(1);
  });

  it('stop() while startWatch() still looks the channel up: no watch starts, no poll timer is left; autoStreaming is known at once', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const clock = new ManualClock(Date.now());
    const chatServer = await startChatServer({ clock });
    const helix = new SandboxHelix({ auth: chatServer.tokens, clock });
    chatServer.mount((req, res) => helix.handle(req, res));
    helix.goLive(chatServer.channelId, chatServer.channel); // the lookup finds the channel, which is live
    const fw = await startFourthwallSandbox({ logger: silentLogger() });
    const client = new FourthwallClient({
      apiUrl: fw.apiUrl,
      auth: { basic: { username: fw.username, password: fw.password } },
      logger: silentLogger(),
    });
    const env = {
      GIFTDROP_MODE: 'sandbox',
      TWITCH_CHANNEL: chatServer.channel,
      TWITCH_USERNAME: chatServer.botLogin,
      TWITCH_TOKEN: chatServer.token,
      TWITCH_IRC_URL: chatServer.url,
      TWITCH_API_URL: chatServer.authUrl.replace(/\/oauth2$/, '/helix'),
      TWITCH_CLIENT_ID: chatServer.clientId,
    };
    const base = loadConfig({ env, dotenv: false, cwd: dir });
    const config = { ...base, settings: { ...base.settings, streaming: { ...base.settings.streaming, auto: true } } };
    const auth = startTwitchAuth(config, silentLogger(), clock);
    // Chat not joined yet: the channel id must come from GET /users.
    const said: string[] = [];
    const chat = {
      channelLogin: chatServer.channel,
      channelId: () => undefined,
      say: (t: string) => void said.push(t),
    } as never;
    try {
      const api = twitchApiFor({
        config,
        auth,
        chat,
        shop: new FourthwallShop(client, { logger: silentLogger() }),
        clock,
        logger: silentLogger(),
      })!;
      expect(api.autoStreaming).toBe(true); // bot.ts skips streaming.autoStart on this, before any await
      const starting = api.startWatch(); // now waiting for GET /users
      await api.stop();
      await starting;
      expect(helix.calls.map((c) => c.path)).toEqual(['/users']);
      expect(api.watch).toBeUndefined();
      expect(clock.pending()).toBe(0); // no poll timer left behind
      clock.advance(10 * 60_000);
      expect(helix.calls.map((c) => c.path)).toEqual(['/users']);
      expect(fw.control.requests.filter((q) => /Streaming/.test(q.operation ?? ''))).toEqual([]);
      expect(said).toEqual([]);
    } finally {
      await auth.close();
      await client.close();
      await fw.close();
      await chatServer.close();
    }
  });

  it('without TWITCH_CLIENT_ID the Twitch API features are off, with one log line saying why', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const config = loadConfig({
      env: {
        GIFTDROP_MODE: 'sandbox',
        TWITCH_CHANNEL: 'somechannel',
        TWITCH_USERNAME: 'somebot',
        TWITCH_TOKEN: 'oauth:abc',
      },
      dotenv: false,
      cwd: dir,
    });
    const log = new LogCapture();
    const logger = createLogger({ level: 'info', destination: log });
    const withRules = {
      ...config,
      settings: { ...config.settings, streaming: { ...config.settings.streaming, auto: true } },
    };
    const auth = startTwitchAuth(withRules, logger, systemClock);
    const chat = { channelLogin: 'somechannel', channelId: () => undefined, say: () => undefined } as never;
    const shop = {} as never;
    expect(twitchApiFor({ config: withRules, auth, chat, shop, clock: systemClock, logger })).toBeUndefined();
    expect(twitchApiFor({ config, auth, chat, shop, clock: systemClock, logger })).toBeUndefined();
    await auth.close();
    expect(log.text()).toMatch(/streaming.auto and the follower \/ account-age rules need TWITCH_CLIENT_ID/);
    expect(log.text().match(/need TWITCH_CLIENT_ID/g)).toHaveLength(1);
  });
});
