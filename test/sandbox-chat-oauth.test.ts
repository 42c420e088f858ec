/**
 * The sandbox chat server's Twitch OAuth stand-in over real HTTP: Twitch's response and error
 * shapes for /oauth2/validate and /oauth2/token, token rotation, and the chat login following it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../src/sandbox/chat/index.js';
import { ManualClock } from '../src/shared/clock.js';

describe('sandbox chat /oauth2', () => {
  let s: ChatServer;
  const clock = new ManualClock();
  beforeAll(async () => {
    s = await startChatServer({
      clock,
      clientId: 'cid123',
      clientSecret: 'csecret456',
      refreshToken: 'rtok789',
      tokenLifetimeSeconds: 600,
    });
  });
  afterAll(async () => {
    await s.close();
  });

  const validate = (auth?: string) => fetch(`${s.authUrl}/validate`, auth ? { headers: { authorization: auth } } : {});
  const token = (form: Record<string, string>) =>
    fetch(`${s.authUrl}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });

  it('serves on the chat port, next to the WebSocket', () => {
    expect(s.authUrl).toBe(`http://127.0.0.1:${s.port}/oauth2`);
  });

  it('validate: Twitch shapes for a good, a missing and a wrong token', async () => {
    const ok = await validate(`OAuth ${s.token}`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({
      client_id: 'cid123',
      login: s.botLogin,
      scopes: ['chat:read', 'chat:edit'],
      user_id: s.botUserId,
      expires_in: 600,
    });
    expect((await validate(`Bearer ${s.token}`)).status).toBe(200);
    const missing = await validate();
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ status: 401, message: 'missing authorization token' });
    const wrong = await validate('OAuth nope');
    expect(await wrong.json()).toEqual({ status: 401, message: 'invalid access token' });
    clock.advance(60_000);
    expect(((await (await validate(`OAuth ${s.token}`)).json()) as { expires_in: number }).expires_in).toBe(540);
  });

  it('token: Twitch errors for a bad client, secret, refresh token or grant type', async () => {
    const base = {
      grant_type: 'refresh_token',
      refresh_token: 'rtok789',
      client_id: 'cid123',
      client_secret: 'csecret456',
    };
    const cases: [Record<string, string>, number, string][] = [
      [{ ...base, client_id: 'other' }, 400, 'invalid client'],
      [{ ...base, client_secret: 'other' }, 403, 'invalid client secret'],
      [{ ...base, refresh_token: 'other' }, 400, 'Invalid refresh token'],
      [{ ...base, grant_type: 'password' }, 400, 'unsupported grant type'],
    ];
    for (const [form, status, message] of cases) {
      const res = await token(form);
      expect(res.status).toBe(status);
      expect(await res.json()).toEqual({ status, message });
    }
  });

  it('token: rotates both tokens; only the new access token validates; the old refresh token is spent', async () => {
    const old = s.token;
    const res = await token({
      grant_type: 'refresh_token',
      refresh_token: 'rtok789',
      client_id: 'cid123',
      client_secret: 'csecret456',
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ expires_in: 600, scope: ['chat:read', 'chat:edit'], token_type: 'bearer' });
    expect(body.access_token).toBe(s.token);
    expect(body.refresh_token).toBe(s.refreshToken);
    expect(s.token).not.toBe(old);
    expect((await validate(`OAuth ${old}`)).status).toBe(401);
    expect((await validate(`OAuth ${s.token}`)).status).toBe(200);
    expect(
      (
        await token({
          grant_type: 'refresh_token',
          refresh_token: 'rtok789',
          client_id: 'cid123',
          client_secret: 'csecret456',
        })
      ).status,
    ).toBe(400);
    expect(s.transcript.filter((e) => e.text === 'oauth2 token: 200')).toHaveLength(1);
  });

  it('an expired token validates as invalid', async () => {
    s.expireToken();
    expect((await validate(`OAuth ${s.token}`)).status).toBe(401);
  });
});
