/**
 * TWITCH_TOKEN validation and refresh against the sandbox chat server's /oauth2 stand-in (real
 * HTTP through undici), with the real chat login (tmi.js) following the rotated token.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startChatServer, type ChatServer } from '../src/sandbox/chat/index.js';
import { TwitchAuthClient, TwitchTokenError } from '../src/twitch/auth.js';
import { ChatToken } from '../src/twitch/token.js';
import { TwitchChat } from '../src/twitch/client.js';
import { connectChat } from '../src/twitch/connector.js';
import { createLogger, registerSecret, silentLogger } from '../src/logging/index.js';
import { defaultTwitchAuthUrl } from '../src/config/index.js';
import { ManualClock, sandboxChatToken, stateReached } from './support/twitch-e2e.js';
import { LogCapture } from './support/log-capture.js';
import { capturingLogger } from './support/twitch-fakes.js';
import { freePort } from './support/e2e-stack.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function setup(
  o: { server?: Parameters<typeof startChatServer>[0]; username?: string; refresh?: boolean; clock?: ManualClock } = {},
): Promise<{ s: ChatServer; tokens: ChatToken; chat: TwitchChat; auth: TwitchAuthClient; secrets: string[] }> {
  const s = await startChatServer({ ...(o.clock ? { clock: o.clock } : {}), ...o.server });
  cleanup.push(() => s.close());
  const auth = new TwitchAuthClient({ authUrl: defaultTwitchAuthUrl(s.url) });
  cleanup.push(() => auth.close());
  const secrets: string[] = [];
  const tokens = new ChatToken({
    auth,
    username: o.username ?? s.botLogin,
    token: `oauth:${s.token}`,
    ...(o.refresh
      ? { refresh: { refreshToken: s.refreshToken, clientId: s.clientId, clientSecret: s.clientSecret } }
      : {}),
    logger: silentLogger(),
    ...(o.clock ? { clock: o.clock } : {}),
    registerSecret: (v) => secrets.push(v),
  });
  cleanup.push(() => tokens.stop());
  const chat = new TwitchChat({
    url: s.url,
    channel: s.channel,
    username: o.username ?? s.botLogin,
    token: 'unused',
    tokens,
    logger: silentLogger(),
    reconnect: { intervalMs: 10, maxIntervalMs: 50 },
    ...(o.clock ? { clock: o.clock } : {}),
  });
  cleanup.push(() => chat.disconnect());
  return { s, tokens, chat, auth, secrets };
}

const logins = (s: ChatServer) => s.transcript.filter((e) => e.kind === 'system' && / connected$/.test(e.text)).length;

describe('validation at start', () => {
  it('the auth URL defaults to the local chat server itself, and Twitch elsewhere', () => {
    expect(defaultTwitchAuthUrl('ws://127.0.0.1:4567')).toBe('http://127.0.0.1:4567/oauth2');
    expect(defaultTwitchAuthUrl('ws://localhost:80')).toBe('http://localhost/oauth2');
    expect(defaultTwitchAuthUrl('wss://irc-ws.chat.twitch.tv:443')).toBe('https://id.twitch.tv/oauth2');
    expect(defaultTwitchAuthUrl('ws://chat.example.com:8080')).toBe('https://id.twitch.tv/oauth2');
  });

  it('a good token: login, scopes and expiry from /validate, then the chat login', async () => {
    const { s, tokens, chat } = await setup();
    const info = await tokens.check();
    expect(info).toMatchObject({ login: s.botLogin, scopes: ['chat:read', 'chat:edit'] });
    expect((info as { expiresIn: number }).expiresIn).toBeGreaterThan(14_000);
    await connectChat({ chat, tokens, logger: silentLogger() });
    expect(chat.state).toBe('connected');
  });

  const cases = [
    {
      name: 'a token of another account than TWITCH_USERNAME',
      o: { username: 'someone_else' },
      code: 'TWITCH_TOKEN_LOGIN',
      text: /TWITCH_TOKEN belongs to the Twitch account "giftdrop_bot", not to TWITCH_USERNAME "someone_else"/,
    },
    {
      name: 'a token without chat:edit',
      o: { server: { scopes: ['chat:read', 'user:read:email'] } },
      code: 'TWITCH_TOKEN_SCOPES',
      text: /TWITCH_TOKEN lacks the scope chat:edit \(it has: chat:read user:read:email\)/,
    },
    {
      name: 'an expired token (no refresh configured)',
      o: { server: { tokenLifetimeSeconds: 0 } },
      code: 'TWITCH_TOKEN_INVALID',
      text: /TWITCH_TOKEN is expired or invalid \(Twitch says: invalid access token\)/,
    },
  ];
  for (const c of cases) {
    it(`${c.name} is named plainly and no chat login is tried`, async () => {
      const { s, tokens, chat } = await setup(c.o);
      const err = await connectChat({ chat, tokens, logger: silentLogger() }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TwitchTokenError);
      expect((err as TwitchTokenError).code).toBe(c.code);
      expect((err as Error).message).toMatch(c.text);
      expect((err as Error).message).not.toContain(s.token);
      expect(logins(s)).toBe(0);
      expect(chat.state).toBe('disconnected');
    });
  }

  it('an expired token with refresh configured is refreshed at start, and the chat accepts the new one only', async () => {
    const clock = new ManualClock();
    const { s, tokens, chat, auth, secrets } = await setup({
      clock,
      refresh: true,
      server: { tokenLifetimeSeconds: 3600 },
    });
    const old = s.token;
    clock.advance(3600 * 1000); // expired before the bot starts
    await connectChat({ chat, tokens, logger: silentLogger(), clock });
    expect(chat.state).toBe('connected');
    expect(tokens.refreshCount()).toBe(1);
    expect(tokens.current()).toBe(s.token);
    expect(s.token).not.toBe(old);
    expect(await auth.validate(old)).toMatchObject({ valid: false });
    expect(secrets).toContain(s.token);
    expect(secrets).toContain(s.refreshToken);
    expect(s.transcript.some((e) => /login rejected/.test(e.text))).toBe(false);
  });
});

describe('refresh', () => {
  it('before expiry, on the injected clock; the next reconnect logs in with the new token', async () => {
    const clock = new ManualClock();
    const { s, tokens, chat, auth, secrets } = await setup({
      clock,
      refresh: true,
      server: { tokenLifetimeSeconds: 3600 },
    });
    await connectChat({ chat, tokens, logger: silentLogger(), clock });
    const first = s.token;
    const refreshed = new Promise((resolve) => tokens.once('refreshed', resolve));
    // 3600 s lifetime: refreshed 5 minutes before expiry.
    clock.advance(3300 * 1000 - 1);
    expect(tokens.refreshCount()).toBe(0);
    clock.advance(1);
    await refreshed;
    expect(tokens.current()).toBe(s.token);
    expect(s.token).not.toBe(first);
    expect(secrets).toContain(s.token);
    expect(await auth.validate(first)).toMatchObject({ valid: false });
    // The old connection stays; the next login uses the new token.
    s.dropConnections();
    await stateReached(chat, 'disconnected');
    await stateReached(chat, 'connected');
    expect(s.transcript.some((e) => /login rejected/.test(e.text))).toBe(false);
    expect(logins(s)).toBe(2);
  });

  it('a scheduled refresh that cannot reach Twitch is tried again after retryMs', async () => {
    const clock = new ManualClock();
    const s = await startChatServer({ clock, tokenLifetimeSeconds: 3600 });
    const creds = { token: s.token, refreshToken: s.refreshToken, clientId: s.clientId, clientSecret: s.clientSecret };
    const port = s.port;
    const auth = new TwitchAuthClient({ authUrl: s.authUrl });
    cleanup.push(() => auth.close());
    const tokens = sandboxChatToken(s, auth, { clock, retryMs: 10_000 });
    cleanup.push(() => tokens.stop());
    await tokens.check();
    await s.close();
    const failed = new Promise<void>((resolve) => {
      const orig = auth.refresh.bind(auth);
      auth.refresh = (c) =>
        orig(c).catch((e: unknown) => {
          resolve();
          throw e;
        });
    });
    clock.advance(3300 * 1000);
    await failed;
    expect(tokens.refreshCount()).toBe(0);
    const back = await startChatServer({ clock, port, ...creds, tokenLifetimeSeconds: 3600 });
    cleanup.push(() => back.close());
    const refreshed = new Promise((resolve) => tokens.once('refreshed', resolve));
    clock.advance(10_000);
    await refreshed;
    expect(tokens.current()).toBe(back.token);
    expect(back.token).not.toBe(creds.token);
  });

  it('after a refusal on a reconnect: refreshed once, logged in again, no fatal', async () => {
    const { s, tokens, chat } = await setup({ refresh: true });
    await connectChat({ chat, tokens, logger: silentLogger() });
    let fatal: unknown;
    chat.on('fatal', (e) => (fatal = e));
    s.expireToken();
    s.dropConnections();
    await stateReached(chat, 'disconnected');
    await s.waitFor(() => chat.state === 'connected' && logins(s) === 2, 5000, 'logged in again');
    expect(fatal).toBeUndefined();
    expect(tokens.refreshCount()).toBe(1);
    expect(s.transcript.filter((e) => /login rejected/.test(e.text))).toHaveLength(1);
    expect(s.transcript.filter((e) => e.text === 'oauth2 token: 200')).toHaveLength(1);
  });

  it('an unreachable token endpoint after a refusal is tried again on the injected clock, and disconnect() cancels the retry', async () => {
    const clock = new ManualClock();
    const s = await startChatServer({ clock });
    cleanup.push(() => s.close());
    // The OAuth root is a port nobody listens on: every refresh fails as TWITCH_AUTH_UNAVAILABLE.
    const dead = await freePort();
    const auth = new TwitchAuthClient({ authUrl: `http://127.0.0.1:${dead}/oauth2` });
    cleanup.push(() => auth.close());
    const tokens = sandboxChatToken(s, auth, { clock });
    cleanup.push(() => tokens.stop());
    let refreshes = 0;
    const counted = {
      current: () => tokens.current(),
      canRefresh: () => tokens.canRefresh(),
      refresh: (why: string) => (refreshes++, tokens.refresh(why)),
    };
    const { logger, capture } = capturingLogger('warn');
    const chat = new TwitchChat({
      url: s.url,
      channel: s.channel,
      username: s.botLogin,
      token: 'unused',
      tokens: counted,
      logger,
      clock,
      reconnect: { intervalMs: 10, maxIntervalMs: 50 },
    });
    cleanup.push(() => chat.disconnect());
    await chat.connect();
    const retries = () =>
      capture.text().match(/could not reach Twitch to refresh the token .*; trying again in/g)?.length ?? 0;
    s.expireToken();
    s.dropConnections();
    await vi.waitFor(() => expect(retries()).toBe(1), { timeout: 5000 });
    expect(refreshes).toBe(1);
    // The retry waits on the injected clock (10 ms, the reconnect interval), not on a global timer.
    clock.advance(9);
    expect(refreshes).toBe(1);
    clock.advance(1);
    expect(refreshes).toBe(2);
    await vi.waitFor(() => expect(retries()).toBe(2), { timeout: 5000 });
    // The next one (20 ms) is cancelled by disconnect(): no refresh after the bot left.
    await chat.disconnect();
    clock.advance(60_000);
    expect(refreshes).toBe(2);
    expect(chat.state).toBe('disconnected');
  });

  it('a refusal on a reconnect without refresh is fatal, naming TWITCH_TOKEN, after one attempt', async () => {
    const { s, tokens, chat } = await setup();
    await connectChat({ chat, tokens, logger: silentLogger() });
    const fatal = new Promise<Error>((resolve) => chat.once('fatal', resolve));
    s.expireToken();
    s.dropConnections();
    const err = await fatal;
    expect(err.message).toContain('TWITCH_TOKEN');
    expect(s.transcript.filter((e) => /login rejected/.test(e.text))).toHaveLength(1);
    expect(chat.state).toBe('disconnected');
  });

  it('a refused refresh token names TWITCH_REFRESH_TOKEN and leaks no secret', async () => {
    const s = await startChatServer();
    cleanup.push(() => s.close());
    const auth = new TwitchAuthClient({ authUrl: s.authUrl });
    cleanup.push(() => auth.close());
    const err = await auth
      .refresh({ refreshToken: 'not-the-refresh-token', clientId: s.clientId, clientSecret: s.clientSecret })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TwitchTokenError);
    expect((err as Error).message).toMatch(/Invalid refresh token.*TWITCH_REFRESH_TOKEN/);
    const bad = await auth
      .refresh({ refreshToken: s.refreshToken, clientId: s.clientId, clientSecret: 'wrong' })
      .catch((e: unknown) => e);
    expect((bad as Error).message).toMatch(/invalid client secret/);
    expect((bad as Error).message).not.toContain(s.refreshToken);
  });

  it('an auth URL that is not an OAuth root is named (TWITCH_AUTH_URL), not retried forever', async () => {
    const s = await startChatServer();
    cleanup.push(() => s.close());
    const auth = new TwitchAuthClient({ authUrl: `http://127.0.0.1:${s.port}/not-oauth` });
    cleanup.push(() => auth.close());
    const err = await auth.validate(s.token).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TwitchTokenError);
    expect((err as TwitchTokenError).code).toBe('TWITCH_AUTH_URL');
    expect((err as Error).message).toMatch(/answered HTTP 426: it is not Twitch's OAuth root\. Set TWITCH_AUTH_URL/);
  });

  it('a token registered after start is redacted from log lines (child loggers too)', () => {
    const capture = new LogCapture();
    const logger = createLogger({ destination: capture, level: 'info' });
    const child = logger.child({ module: 'x' });
    registerSecret(logger, 'freshtoken-abc123');
    child.info(`token is freshtoken-abc123`);
    expect(capture.text()).toContain('token is [REDACTED]');
    expect(capture.text()).not.toContain('freshtoken-abc123');
  });
});
