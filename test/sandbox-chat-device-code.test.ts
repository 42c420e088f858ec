/**
 * The sandbox's Twitch device code flow (a Public application) over real HTTP: Twitch's shapes for
 * `/oauth2/device` and the device-code poll (`authorization_pending`, `slow_down` for a poll
 * sooner than `interval`, `access_denied`, `invalid device code` for an expired or redeemed code),
 * the verification page answered with a real form POST, the bot's grant becoming the chat login's
 * one token, single-use refresh tokens without a secret (a reused one refused as Twitch refuses
 * it), a second account (the broadcaster) validated and refreshed beside the bot, and revocation.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../src/sandbox/chat/index.js';
import { ManualClock } from '../src/shared/clock.js';
import { rawClient, rawLogin } from './support/sandbox-chat-raw.js';

const PUBLIC = 'pubclient42';
const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

let s: ChatServer;
let clock: ManualClock;

beforeEach(async () => {
  clock = new ManualClock();
  s = await startChatServer({ clock, publicClientId: PUBLIC, tokenLifetimeSeconds: 600 });
});
afterEach(async () => {
  await s.close();
});

const post = (path: string, form: Record<string, string>) =>
  fetch(`${s.authUrl.replace(/\/oauth2$/, '')}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
  });
const device = async (scopes = 'chat:read chat:edit') => {
  const res = await post('/oauth2/device', { client_id: PUBLIC, scopes });
  expect(res.status).toBe(200);
  return (await res.json()) as {
    device_code: string;
    user_code: string;
    verification_uri: string;
    interval: number;
    expires_in: number;
  };
};
const poll = async (deviceCode: string) => {
  const res = await post('/oauth2/token', {
    client_id: PUBLIC,
    scopes: 'chat:read chat:edit',
    device_code: deviceCode,
    grant_type: GRANT,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const validate = async (token: string) => {
  const res = await fetch(`${s.authUrl}/validate`, { headers: { authorization: `OAuth ${token}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe('sandbox device code flow', () => {
  it('answers /oauth2/device as Twitch does, and refuses another client id', async () => {
    const bad = await post('/oauth2/device', { client_id: 'someone-else', scopes: 'chat:read' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ status: 400, message: 'invalid client' });
    const d = await device();
    expect(d.expires_in).toBe(1800);
    expect(d.interval).toBe(5);
    expect(d.user_code).toMatch(/^[A-Z]{8}$/);
    expect(d.device_code.length).toBeGreaterThanOrEqual(30);
    expect(d.verification_uri).toBe(`http://127.0.0.1:${s.port}/activate?public=true&device-code=${d.user_code}`);
  });

  it('polls: pending, slow_down (interval grows by 5 s), then the tokens once; the page is a real form', async () => {
    const d = await device('chat:read chat:edit user:manage:whispers');
    expect(await poll(d.device_code)).toEqual({ status: 400, body: { status: 400, message: 'authorization_pending' } });
    clock.advance(2_000); // sooner than the interval
    expect(await poll(d.device_code)).toEqual({ status: 400, body: { status: 400, message: 'slow_down' } });
    clock.advance(6_000); // 6 s: enough for 5, not for the 10 it became
    expect((await poll(d.device_code)).body.message).toBe('slow_down');
    clock.advance(15_000);
    expect((await poll(d.device_code)).body.message).toBe('authorization_pending');

    const page = await fetch(d.verification_uri);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain(`value="${d.user_code}"`);
    expect(html).toContain('send whispers'); // the scopes in words
    const answered = await post('/activate', { 'device-code': d.user_code, login: s.botLogin, decision: 'authorize' });
    expect(answered.status).toBe(200);
    expect(await answered.text()).toContain('Return to your device');

    clock.advance(15_000);
    const ok = await poll(d.device_code);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      expires_in: 600,
      scope: ['chat:read', 'chat:edit', 'user:manage:whispers'],
      token_type: 'bearer',
    });
    const access = ok.body.access_token as string;
    clock.advance(15_000);
    expect(await poll(d.device_code)).toEqual({ status: 400, body: { status: 400, message: 'invalid device code' } });

    // The bot's grant is the chat login's one token now, issued to the public client.
    expect(s.token).toBe(access);
    expect(s.tokens.clientId).toBe(PUBLIC);
    expect((await validate(access)).body).toEqual({
      client_id: PUBLIC,
      login: s.botLogin,
      scopes: ['chat:read', 'chat:edit', 'user:manage:whispers'],
      user_id: s.botUserId,
      expires_in: 585, // issued 15 s ago
    });
    const irc = await rawClient(s.url);
    await rawLogin(irc, access, s.botLogin);
    irc.close();
  });

  it('refresh of a public client: no secret, single use; a reused refresh token is refused as Twitch refuses it', async () => {
    const d = await device();
    expect(s.deviceLogin.answer(d.user_code, s.botLogin, 'authorize')).toBe(true);
    const first = (await poll(d.device_code)).body;
    const refresh = async (token: string) => {
      const res = await post('/oauth2/token', { grant_type: 'refresh_token', refresh_token: token, client_id: PUBLIC });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const second = await refresh(first.refresh_token as string);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect((await validate(first.access_token as string)).status).toBe(401);
    expect((await validate(second.body.access_token as string)).status).toBe(200);
    expect(await refresh(first.refresh_token as string)).toEqual({
      status: 400,
      body: { status: 400, message: 'Invalid refresh token' },
    });
    // The new one still works (a refused reuse does not end the login).
    expect((await refresh(second.body.refresh_token as string)).status).toBe(200);
  });

  it('a second account (the broadcaster) logs in beside the bot: validate, single-use refresh, revocation', async () => {
    const d = await device('channel:read:redemptions');
    s.deviceLogin.answer(d.user_code, s.channel, 'authorize');
    const t = (await poll(d.device_code)).body;
    const v = await validate(t.access_token as string);
    expect(v.body).toEqual({
      client_id: PUBLIC,
      login: s.channel,
      scopes: ['channel:read:redemptions'],
      user_id: s.channelId,
      expires_in: 600,
    });
    // Helix knows the token's user, the scopes granted and the application it was issued to.
    expect(s.tokens.userOf(t.access_token as string)).toEqual({
      id: s.channelId,
      login: s.channel,
      scopes: ['channel:read:redemptions'],
      clientId: PUBLIC,
    });
    // The bot's own token is untouched by the broadcaster's login.
    expect(s.tokens.clientId).not.toBe(PUBLIC);
    const r = await post('/oauth2/token', {
      grant_type: 'refresh_token',
      refresh_token: t.refresh_token as string,
      client_id: PUBLIC,
    });
    const next = (await r.json()) as Record<string, string>;
    expect(r.status).toBe(200);
    const again = await post('/oauth2/token', {
      grant_type: 'refresh_token',
      refresh_token: t.refresh_token as string,
      client_id: PUBLIC,
    });
    expect(again.status).toBe(400);
    expect(await again.json()).toEqual({ status: 400, message: 'Invalid refresh token' });
    expect(s.revokeLogin(s.channel)).toBe(1);
    expect((await validate(next.access_token!)).status).toBe(401);
    const after = await post('/oauth2/token', {
      grant_type: 'refresh_token',
      refresh_token: next.refresh_token!,
      client_id: PUBLIC,
    });
    expect(await after.json()).toEqual({ status: 400, message: 'Invalid refresh token' });
  });

  it('cancel answers access_denied; an unanswered code expires after expires_in as "invalid device code"', async () => {
    const denied = await device();
    const page = await post('/activate', { 'device-code': denied.user_code, login: '', decision: 'deny' });
    expect(await page.text()).toContain('Cancelled');
    expect(await poll(denied.device_code)).toEqual({ status: 400, body: { status: 400, message: 'access_denied' } });

    const late = await device();
    clock.advance(1_800_000);
    expect((await poll(late.device_code)).body).toEqual({ status: 400, message: 'invalid device code' });
    const tooLate = await post('/activate', {
      'device-code': late.user_code,
      login: s.botLogin,
      decision: 'authorize',
    });
    expect(tooLate.status).toBe(400);
  });

  it('revoking the bot ends its chat login and its refresh', async () => {
    const d = await device();
    s.deviceLogin.answer(d.user_code, s.botLogin, 'authorize');
    const t = (await poll(d.device_code)).body;
    s.revokeLogin(s.botLogin);
    expect((await validate(t.access_token as string)).status).toBe(401);
    const r = await post('/oauth2/token', {
      grant_type: 'refresh_token',
      refresh_token: t.refresh_token as string,
      client_id: PUBLIC,
    });
    expect(await r.json()).toEqual({ status: 400, message: 'Invalid refresh token' });
  });
});
