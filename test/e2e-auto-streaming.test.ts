/**
 * Auto streaming wired into the real bot (issue 13): the whole local stack with
 * `streaming.auto` and the broadcaster already live on the local Helix API. The bot's first poll
 * sets Fourthwall streaming started once with the stream's thumbnail and says so in chat; `!stream`
 * says what auto mode does next. Without TWITCH_CLIENT_ID the Twitch API features stay off.
 * The poll cadence, grace and outage cases run on a manual clock in twitch-stream-watch.test.ts.
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { twitchApiFor } from '../src/app/twitch-api.js';
import { loadConfig } from '../src/config/index.js';
import { createLogger } from '../src/logging/index.js';
import { systemClock } from '../src/shared/clock.js';
import { startTwitchAuth } from '../src/twitch/startup.js';
import { LogCapture } from './support/log-capture.js';
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
    expect(await s.nextBotLine(/Fourthwall streaming status/, mark)).toMatch(/ONLINE.*Auto mode: the stream is live; it sets offline 120 s after the stream ends\./);
    expect(s.requests('startStreaming')).toHaveLength(1);
  });

  it('without TWITCH_CLIENT_ID the Twitch API features are off, with one log line saying why', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const config = loadConfig({ env: { GIFTDROP_MODE: 'sandbox', TWITCH_CHANNEL: 'somechannel', TWITCH_USERNAME: 'somebot', TWITCH_TOKEN: 'oauth:abc' }, dotenv: false, cwd: dir });
    const log = new LogCapture();
    const logger = createLogger({ level: 'info', destination: log });
    const withRules = { ...config, settings: { ...config.settings, streaming: { ...config.settings.streaming, auto: true } } };
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
