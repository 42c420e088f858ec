import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/shared/clock.js';
import { startFourthwallSandbox, type FourthwallSandbox } from '../src/sandbox/fourthwall/index.js';
import { basic, bearer, call } from './support/sandbox-fourthwall-helpers.js';

let sb: FourthwallSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

function tokenForm(fields: Record<string, string>): { method: string; headers: Record<string, string>; body: string } {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  };
}

describe('Fourthwall sandbox auth', () => {
  it('accepts Basic with the sandbox credentials and rejects wrong or missing ones with 401 {code}', async () => {
    sb = await startFourthwallSandbox();
    const okRes = await call(`${sb.apiUrl}/shops/current`, { headers: basic(sb) });
    expect(okRes.status).toBe(200);
    expect(okRes.body.id).toMatch(/^sh_/);

    const wrong = await call(`${sb.apiUrl}/shops/current`, { headers: basic(sb, `${sb.password}x`) });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ code: 'UNAUTHORIZED' });
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic/);

    const missing = await call(`${sb.apiUrl}/products`);
    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe('UNAUTHORIZED');

    const unknownToken = await call(`${sb.apiUrl}/products`, { headers: bearer('not-a-token') });
    expect(unknownToken.status).toBe(401);
  });

  it('OAuth: code -> token -> Bearer works on A ops, 403 on Basic-only ops -> refresh -> expiry on the clock', async () => {
    const clock = new ManualClock();
    sb = await startFourthwallSandbox({ clock, tokenLifetimeSeconds: 300, clientSecret: 'client-secret-1' });
    const code = sb.control.issueAuthCode('https://bot.example.com/callback');

    const tok = await call(
      sb.tokenUrl,
      tokenForm({
        grant_type: 'authorization_code',
        client_id: sb.clientId,
        client_secret: 'client-secret-1',
        redirect_uri: 'https://bot.example.com/callback',
        code,
      }),
    );
    expect(tok.status).toBe(200);
    expect(tok.body.token_type).toBe('Bearer');
    expect(tok.body.expires_in).toBe(300);
    expect(typeof tok.body.access_token).toBe('string');
    expect(typeof tok.body.refresh_token).toBe('string');

    const products = await call(`${sb.apiUrl}/products`, { headers: bearer(tok.body.access_token) });
    expect(products.status).toBe(200);
    expect(products.body.results.length).toBeGreaterThan(0);

    for (const [method, path, body] of [
      ['GET', '/streaming', undefined],
      ['GET', '/gifting/draw/gdr_missing', undefined],
      ['PUT', '/gifting/draw/gdr_missing/finish', { participants: [] }],
      ['GET', '/gift-purchase/giv_missing', undefined],
      ['PUT', '/streaming/end', { services: ['TWITCH'] }],
    ] as const) {
      const r = await call(`${sb.apiUrl}${path}`, { method, headers: bearer(tok.body.access_token), body });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.code).toBe('FORBIDDEN');
    }

    // The package list accepts Basic or OAuth in the published document.
    expect(
      (await call(`${sb.apiUrl}/giveaway-links/packages`, { headers: bearer(tok.body.access_token) })).status,
    ).toBe(200);

    // The code is single use.
    const reuse = await call(
      sb.tokenUrl,
      tokenForm({
        grant_type: 'authorization_code',
        client_id: sb.clientId,
        client_secret: 'client-secret-1',
        redirect_uri: 'https://bot.example.com/callback',
        code,
      }),
    );
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');

    clock.advance(299_000);
    expect((await call(`${sb.apiUrl}/shops/current`, { headers: bearer(tok.body.access_token) })).status).toBe(200);
    clock.advance(1_000);
    const expired = await call(`${sb.apiUrl}/shops/current`, { headers: bearer(tok.body.access_token) });
    expect(expired.status).toBe(401);
    expect(expired.body.code).toBe('UNAUTHORIZED');
    expect(expired.headers.get('www-authenticate')).toContain('invalid_token');

    const refreshed = await call(
      sb.tokenUrl,
      tokenForm({
        grant_type: 'refresh_token',
        client_id: sb.clientId,
        client_secret: 'client-secret-1',
        refresh_token: tok.body.refresh_token,
      }),
    );
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.access_token).not.toBe(tok.body.access_token);
    expect((await call(`${sb.apiUrl}/shops/current`, { headers: bearer(refreshed.body.access_token) })).status).toBe(
      200,
    );
    // The old one stays dead.
    expect((await call(`${sb.apiUrl}/shops/current`, { headers: bearer(tok.body.access_token) })).status).toBe(401);
  });

  it('rejects a wrong client secret, a wrong redirect_uri and unknown grants; answers on the Keycloak URL form too', async () => {
    sb = await startFourthwallSandbox({ clientSecret: 'cs' });
    const badClient = await call(
      sb.tokenUrl,
      tokenForm({
        grant_type: 'authorization_code',
        client_id: sb.clientId,
        client_secret: 'nope',
        code: sb.control.issueAuthCode(),
      }),
    );
    expect(badClient.status).toBe(401);
    expect(badClient.body.error).toBe('invalid_client');

    const badRedirect = await call(
      sb.tokenUrl,
      tokenForm({
        grant_type: 'authorization_code',
        client_id: sb.clientId,
        client_secret: 'cs',
        code: sb.control.issueAuthCode('https://a.example.com/cb'),
        redirect_uri: 'https://evil.example.com/cb',
      }),
    );
    expect(badRedirect.status).toBe(400);
    expect(badRedirect.body.error).toBe('invalid_grant');

    const badGrant = await call(
      sb.tokenUrl,
      tokenForm({ grant_type: 'password', client_id: sb.clientId, client_secret: 'cs' }),
    );
    expect(badGrant.body.error).toBe('unsupported_grant_type');

    const origin = new URL(sb.apiUrl).origin;
    const kc = await call(
      `${origin}/auth/realms/Fourthwall/protocol/openid-connect/token`,
      tokenForm({
        grant_type: 'authorization_code',
        client_id: sb.clientId,
        client_secret: 'cs',
        code: sb.control.issueAuthCode(),
      }),
    );
    expect(kc.status).toBe(200);
    expect(kc.body.access_token).toBeTruthy();

    // JSON token requests are accepted as the published document says.
    const json = await call(sb.tokenUrl, {
      method: 'POST',
      body: {
        grant_type: 'refresh_token',
        client_id: sb.clientId,
        client_secret: 'cs',
        refresh_token: kc.body.refresh_token,
      },
    });
    expect(json.status).toBe(200);
  });

  it('the connect page redirects back with a usable code and the state', async () => {
    sb = await startFourthwallSandbox({ clientSecret: 'cs' });
    const redirectUri = 'https://bot.example.com/oauth/callback';
    const res = await fetch(
      `${sb.shopUrl}/admin/platform-apps/${sb.clientId}/connect?redirect_uri=${encodeURIComponent(redirectUri)}&state=xyz`,
      { redirect: 'manual' },
    );
    expect(res.status).toBe(302);
    const loc = new URL(res.headers.get('location') as string);
    expect(`${loc.origin}${loc.pathname}`).toBe(redirectUri);
    expect(loc.searchParams.get('state')).toBe('xyz');
    const tok = await call(
      sb.tokenUrl,
      tokenForm({
        grant_type: 'authorization_code',
        client_id: sb.clientId,
        client_secret: 'cs',
        code: loc.searchParams.get('code') as string,
        redirect_uri: redirectUri,
      }),
    );
    expect(tok.status).toBe(200);
  });

  it('control routes need the sandbox Basic credentials', async () => {
    sb = await startFourthwallSandbox();
    expect((await call(`${new URL(sb.apiUrl).origin}/__sandbox/requests`)).status).toBe(401);
    const ok = await call(`${new URL(sb.apiUrl).origin}/__sandbox/requests`, { headers: basic(sb) });
    expect(ok.status).toBe(200);
    expect(Array.isArray(ok.body.requests)).toBe(true);
  });
});
