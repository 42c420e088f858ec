/**
 * Tokens obtained while the bot runs are censored in log lines like the configured ones: a
 * Fourthwall OAuth access token (and its refresh token) fetched by the real client from the
 * Fourthwall sandbox's token endpoint, and a Twitch token refreshed by the bot's Twitch start-up
 * (startTwitchAuth) against the chat sandbox's /oauth2. Real HTTP over loopback, real logger.
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { FourthwallClient } from '../src/fourthwall/index.js';
import { exchangeAuthorizationCode, type OAuthTokens } from '../src/fourthwall/auth.js';
import { loadConfig } from '../src/config/index.js';
import { createLogger } from '../src/logging/index.js';
import { startChatServer } from '../src/sandbox/chat/index.js';
import { startFourthwallSandbox } from '../src/sandbox/fourthwall/index.js';
import { ManualClock, systemClock } from '../src/shared/clock.js';
import { startTwitchAuth } from '../src/twitch/startup.js';
import { LogCapture } from './support/log-capture.js';
import { tempDir } from './support/e2e-link-stack.js';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

describe('runtime tokens reach the log scrubber', () => {
  it('a Fourthwall OAuth token fetched at runtime is censored in every log line, child loggers and fields included', async () => {
    const sb = await startFourthwallSandbox({ clientSecret: 'fw-client-secret-1' });
    closers.push(() => sb.close());
    const redirectUri = 'https://bot.example.com/callback';
    // The shop owner's consent, done once by setup: the bot starts with a refresh token only.
    const granted = await exchangeAuthorizationCode({
      tokenUrl: sb.tokenUrl,
      clientId: sb.clientId,
      clientSecret: 'fw-client-secret-1',
      redirectUri,
      code: sb.control.issueAuthCode(redirectUri),
      clock: systemClock,
    });
    const capture = new LogCapture();
    const logger = createLogger({ destination: capture, level: 'debug' });
    const fresh: OAuthTokens[] = [];
    const client = new FourthwallClient({
      apiUrl: sb.apiUrl,
      auth: {
        oauth: {
          clientId: sb.clientId,
          clientSecret: 'fw-client-secret-1',
          refreshToken: granted.refreshToken!,
          onTokens: (t) => void fresh.push(t),
        },
      },
      logger,
    });
    closers.push(() => client.close());
    await client.listProducts();
    expect(fresh).toHaveLength(1);
    const runtime = fresh[0]!.accessToken;
    expect(runtime).not.toBe(granted.accessToken);
    expect(client.secrets()).toContain(runtime); // the client knows it; the point is the logger

    logger.warn(`a careless line carrying ${runtime}`);
    logger.child({ module: 'x' }).info({ detail: { header: `Bearer ${runtime}` } }, 'nested field');
    expect(capture.text()).not.toContain(runtime);
    expect(capture.lines.filter((l) => l.includes('[REDACTED]'))).toHaveLength(2);
  });

  it('a Twitch token refreshed by the bot at start-up is censored in log lines', async () => {
    const clock = new ManualClock();
    const chat = await startChatServer({ clock, tokenLifetimeSeconds: 3600 });
    closers.push(() => chat.close());
    const dir = await tempDir();
    closers.push(() => rm(dir, { recursive: true, force: true }));
    const config = loadConfig({
      env: {
        GIFTDROP_MODE: 'sandbox',
        TWITCH_CHANNEL: chat.channel,
        TWITCH_USERNAME: chat.botLogin,
        TWITCH_TOKEN: chat.token,
        TWITCH_IRC_URL: chat.url,
        TWITCH_REFRESH_TOKEN: chat.refreshToken,
        TWITCH_CLIENT_ID: chat.clientId,
        TWITCH_CLIENT_SECRET: chat.clientSecret,
      },
      dotenv: false,
      cwd: dir,
    });
    const capture = new LogCapture();
    const logger = createLogger({ destination: capture, level: 'debug' });
    const twitch = startTwitchAuth(config, logger, clock);
    closers.push(() => twitch.close());
    const old = chat.token;
    clock.advance(3600 * 1000); // expired before the bot starts: refreshed at start
    await twitch.tokens.check();
    expect(twitch.tokens.refreshCount()).toBe(1);
    const runtime = chat.token;
    expect(runtime).not.toBe(old);
    expect(twitch.tokens.current()).toBe(runtime);
    logger.error(`token now ${runtime}`);
    expect(capture.text()).toContain('token now [REDACTED]');
    expect(capture.text()).not.toContain(runtime);
  });
});
