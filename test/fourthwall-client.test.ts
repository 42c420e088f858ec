import { inspect } from 'node:util';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/shared/clock.js';
import { createLogger } from '../src/logging/index.js';
import {
  FourthwallApiError,
  FourthwallAuthError,
  FourthwallClient,
  FourthwallNetworkError,
  FourthwallOutcomeUnknownError,
  FourthwallSchemaError,
  FourthwallTimeoutError,
  createAuthProvider,
  exchangeAuthorizationCode,
  isApiError,
  isOutcomeUnknown,
  parseRetryAfter,
  undiciTokenTransport,
  type FourthwallClientOptions,
} from '../src/fourthwall/index.js';
import { LogCapture } from './support/log-capture.js';
import { resetSocket, sendJson, startTestServer, type TestServer } from './support/fourthwall-server.js';
import * as F from './support/fourthwall-fixtures.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function server(handler: Parameters<typeof startTestServer>[0]): Promise<TestServer> {
  const s = await startTestServer(handler);
  cleanups.push(() => s.close());
  return s;
}

function client(url: string, opts: Partial<FourthwallClientOptions> = {}): FourthwallClient {
  const c = new FourthwallClient({
    apiUrl: url,
    auth: { basic: { username: 'shop-api-user', password: 'p4ss-w0rd-secret' } },
    timeoutMs: 2_000,
    ...opts,
    retry: { baseDelayMs: 5, maxDelayMs: 20, ...opts.retry },
  });
  cleanups.push(() => c.close());
  return c;
}

/** Waits on a predicate (checked on every macrotask), failing after `ms`. */
async function until(pred: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function caught(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

const participants = [{ userId: '1001', userName: 'viewer_one' }];

describe('FourthwallClient retries', () => {
  it('retries an idempotent call after 5xx and succeeds', async () => {
    const s = await server((req, res) =>
      req.index < 2 ? sendJson(res, 503, { code: 'UNAVAILABLE' }) : sendJson(res, 200, F.drawFixture()),
    );
    const draw = await client(s.url).getDraw(F.IDS.draw);
    expect(draw.id).toBe(F.IDS.draw);
    expect(s.requests.map((r) => `${r.method} ${r.path}`)).toEqual(Array(3).fill(`GET /gifting/draw/${F.IDS.draw}`));
  });

  it('gives up after maxAttempts with the last API error', async () => {
    const s = await server((_req, res) => sendJson(res, 502, { code: 'BAD_GATEWAY' }));
    const e = await caught(client(s.url, { retry: { maxAttempts: 3 } }).getStreamingStatus());
    expect(e).toBeInstanceOf(FourthwallApiError);
    expect((e as FourthwallApiError).status).toBe(502);
    expect(s.requests).toHaveLength(3);
  });

  it('honours Retry-After seconds on 429', async () => {
    const s = await server((req, res) =>
      req.index === 0
        ? sendJson(res, 429, undefined, { 'retry-after': '1' })
        : sendJson(res, 200, F.streamingStatusFixture()),
    );
    const status = await client(s.url).getStreamingStatus();
    expect(status.services[0]!.status).toBe('ONLINE');
    expect(s.requests).toHaveLength(2);
    expect(s.requests[1]!.arrivedAt - s.requests[0]!.arrivedAt).toBeGreaterThanOrEqual(990);
  });

  it('retries a non-idempotent call on 429 (rejected before processing)', async () => {
    const s = await server((req, res) =>
      req.index === 0
        ? sendJson(res, 429, {}, { 'retry-after': '0' })
        : sendJson(res, 200, F.giveawayPackageFixture(2)),
    );
    const pkg = await client(s.url).createGiveawayLinks({ productId: F.IDS.offer, number: 2 });
    expect(pkg.giveawayLinks).toHaveLength(2);
    expect(s.requests).toHaveLength(2);
  });

  it('parses Retry-After as seconds or HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('times out a hanging idempotent call per attempt and retries it', async () => {
    const s = await server(() => undefined);
    const started = Date.now();
    const e = await caught(client(s.url, { timeoutMs: 150, retry: { maxAttempts: 2 } }).getDraw(F.IDS.draw));
    expect(e).toBeInstanceOf(FourthwallTimeoutError);
    expect((e as FourthwallTimeoutError).phase).toBe('request');
    expect(s.requests).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });

  it("its signal ends a call in flight at once with the signal's reason, and no retry follows", async () => {
    const s = await server(() => undefined); // never answers
    const stop = new AbortController();
    const c = client(s.url, { timeoutMs: 30_000, retry: { maxAttempts: 5 }, signal: stop.signal });
    const call = caught(c.getDraw(F.IDS.draw));
    await until(() => s.requests.length === 1);
    const reason = new Error('stopped during start-up');
    const t0 = Date.now();
    stop.abort(reason);
    expect(await call).toBe(reason);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(s.requests).toHaveLength(1);
    // and a call after the abort is never sent
    expect(await caught(c.getDraw(F.IDS.draw))).toBe(reason);
    expect(s.requests).toHaveLength(1);
  });

  it('stops at the per-call deadline even with attempts left', async () => {
    const s = await server(() => undefined);
    const e = await caught(
      client(s.url, { timeoutMs: 100, deadlineMs: 250, retry: { maxAttempts: 50 } }).getDraw(F.IDS.draw),
    );
    expect(e).toBeInstanceOf(FourthwallTimeoutError);
    expect(s.requests.length).toBeGreaterThanOrEqual(2);
    expect(s.requests.length).toBeLessThanOrEqual(3);
  });

  it('does not retry 4xx and exposes code and context', async () => {
    const s = await server((_req, res) => sendJson(res, 400, F.ERROR_BODIES.drawAlreadyFinished));
    const e = await caught(client(s.url).finishDraw(F.IDS.draw, { participants }));
    expect(isApiError(e, 'GIVEAWAY_DRAW_ALREADY_FINISHED')).toBe(true);
    const api = e as FourthwallApiError;
    expect(api).toMatchObject({
      status: 400,
      operation: 'finishDraw',
      method: 'PUT',
      path: `/gifting/draw/${F.IDS.draw}/finish`,
      context: { drawId: F.IDS.draw },
    });
    expect(s.requests).toHaveLength(1);
    const s2 = await server((_req, res) => sendJson(res, 404, '<html>'));
    const e2 = await caught(client(s2.url).getDraw('gdr_x'));
    expect((e2 as FourthwallApiError).code).toBe('HTTP_404');
  });

  it('throws a schema error naming operation and field for a bad 200 body', async () => {
    const bad = F.drawFixture() as Record<string, unknown>;
    bad.gifts = [{ status: 'AVAILABLE' }];
    const s = await server((_req, res) => sendJson(res, 200, bad));
    const e = await caught(client(s.url).getDraw(F.IDS.draw));
    expect(e).toBeInstanceOf(FourthwallSchemaError);
    expect(e.message).toMatch(/gifts\[0\]\.id/);
    expect((e as FourthwallSchemaError).operation).toBe('getDraw');
  });

  it('waits in the limiter but fails with a queued timeout at the deadline (nothing sent)', async () => {
    const s = await server((_req, res) => sendJson(res, 200, F.shopFixture()));
    const c = client(s.url, { rateLimit: { limit: 1, intervalMs: 60_000 }, deadlineMs: 200 });
    await c.getCurrentShop();
    const e = await caught(c.getCurrentShop());
    expect(e).toBeInstanceOf(FourthwallTimeoutError);
    expect((e as FourthwallTimeoutError).phase).toBe('queued');
    expect(s.requests).toHaveLength(1);
  });
});

describe('FourthwallClient non-idempotent calls (finishDraw)', () => {
  it('server received the request, then reset the connection: outcome unknown, sent exactly once', async () => {
    const s = await server((_req, res) => resetSocket(res));
    const e = await caught(client(s.url).finishDraw(F.IDS.draw, { participants }));
    expect(e).toBeInstanceOf(FourthwallOutcomeUnknownError);
    expect(isOutcomeUnknown(e)).toBe(true);
    expect((e as FourthwallOutcomeUnknownError).cause).toBeInstanceOf(FourthwallNetworkError);
    expect(s.requests).toHaveLength(1);
    expect(JSON.parse(s.requests[0]!.body)).toEqual({
      participants: [{ service: 'TWITCH', userId: '1001', userName: 'viewer_one' }],
    });
  });

  it('server received the request, then hung: outcome unknown after the timeout, sent exactly once', async () => {
    const s = await server(() => undefined);
    const e = await caught(client(s.url, { timeoutMs: 150 }).finishDraw(F.IDS.draw, { participants }));
    expect(e).toBeInstanceOf(FourthwallOutcomeUnknownError);
    expect((e as FourthwallOutcomeUnknownError).cause).toBeInstanceOf(FourthwallTimeoutError);
    expect(s.requests).toHaveLength(1);
  });

  it('5xx on finishDraw: outcome unknown, sent exactly once', async () => {
    const s = await server((_req, res) => sendJson(res, 500, { code: 'INTERNAL' }));
    const e = await caught(client(s.url).finishDraw(F.IDS.draw, { participants }));
    expect(e).toBeInstanceOf(FourthwallOutcomeUnknownError);
    expect(((e as FourthwallOutcomeUnknownError).cause as FourthwallApiError).status).toBe(500);
    expect(s.requests).toHaveLength(1);
  });

  it('a 2xx answer too large to read: the call took effect, so outcome unknown (not a plain network error)', async () => {
    const s = await server((_req, res) =>
      sendJson(res, 200, { ...F.finishedDrawFixture(), padding: 'x'.repeat(4096) }),
    );
    const e = await caught(client(s.url, { maxResponseBytes: 1024 }).finishDraw(F.IDS.draw, { participants }));
    expect(e).toBeInstanceOf(FourthwallOutcomeUnknownError);
    expect(((e as FourthwallOutcomeUnknownError).cause as FourthwallNetworkError).networkCode).toBe(
      'RESPONSE_TOO_LARGE',
    );
    expect(s.requests).toHaveLength(1);
  });

  it('connection refused certainly did not reach the server: retried until the server is up', async () => {
    // Reserve a port, free it: connections to it are refused until the server starts there.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const clock = new ManualClock(Date.now());
    const cap = new LogCapture();
    const logger = createLogger({ destination: cap, level: 'debug' });
    const c = client(`http://127.0.0.1:${port}`, { clock, logger, retry: { maxAttempts: 5, baseDelayMs: 100 } });
    const pending = c.finishDraw(F.IDS.draw, { participants });
    await until(() => cap.lines.some((l) => l.includes('will be retried')));
    expect(cap.json()[0]).toMatchObject({ op: 'finishDraw', error: 'ECONNREFUSED' });
    const up = await startTestServer((_req, res) => sendJson(res, 200, F.finishedDrawFixture()), port);
    cleanups.push(() => up.close());
    clock.advance(1_000);
    const draw = await pending;
    expect(draw.gifts[0]!.winner?.username).toBe('viewer_one');
    const received = up.requests.map((r) => `${r.method} ${r.path}`);
    expect(received).toEqual([`PUT /gifting/draw/${F.IDS.draw}/finish`]);
  });
});

describe('FourthwallClient auth', () => {
  it('sends Basic for B operations, no credentials for the product feed', async () => {
    const s = await server((req, res) => {
      if (req.path.endsWith('rss.xml')) {
        res.writeHead(200, { 'content-type': 'application/rss+xml' });
        res.end(F.PRODUCT_FEED_XML);
      } else sendJson(res, 200, F.streamingStatusFixture());
    });
    const c = client(s.url);
    await c.getStreamingStatus();
    const feed = await c.fetchProductFeed(s.url);
    expect(feed.items).toHaveLength(2);
    expect(s.requests[0]!.headers.authorization).toBe(
      `Basic ${Buffer.from('shop-api-user:p4ss-w0rd-secret').toString('base64')}`,
    );
    expect(s.requests[1]!.path).toBe('/.well-known/merchant-center/rss.xml');
    expect(s.requests[1]!.headers.authorization).toBeUndefined();
  });

  it('uses the OAuth bearer for A operations and Basic for B operations when both are configured', async () => {
    const s = await server((req, res) =>
      sendJson(res, 200, req.path === '/streaming' ? F.streamingStatusFixture() : F.shopFixture()),
    );
    const c = client(s.url, {
      auth: { basic: { username: 'u', password: 'pw-1234' }, oauth: { clientId: 'app', accessToken: 'at-1' } },
    });
    await c.getCurrentShop();
    await c.getStreamingStatus();
    expect(s.requests[0]!.headers.authorization).toBe('Bearer at-1');
    expect(s.requests[1]!.headers.authorization).toMatch(/^Basic /);
  });

  function oauthServer(opts: { validToken: () => string; issue: () => Record<string, unknown> }) {
    const tokenForms: URLSearchParams[] = [];
    return {
      tokenForms,
      handler: (
        req: Parameters<Parameters<typeof startTestServer>[0]>[0],
        res: Parameters<Parameters<typeof startTestServer>[0]>[1],
      ) => {
        if (req.path === '/platform/token') {
          tokenForms.push(new URLSearchParams(req.body));
          return sendJson(res, 200, opts.issue());
        }
        if (req.headers.authorization !== `Bearer ${opts.validToken()}`) return sendJson(res, 401, {});
        return sendJson(res, 200, F.shopFixture());
      },
    };
  }

  it('refreshes once on a 401 and retries the call once', async () => {
    let n = 0;
    const o = oauthServer({
      validToken: () => 'at-new-1',
      issue: () => ({
        access_token: `at-new-${++n}`,
        refresh_token: 'rt-rotated',
        expires_in: 3600,
        token_type: 'Bearer',
      }),
    });
    const s = await server(o.handler);
    const persisted: unknown[] = [];
    const c = client(s.url, {
      auth: {
        oauth: {
          clientId: 'app_1',
          clientSecret: 'cs-secret',
          accessToken: 'at-old',
          refreshToken: 'rt-1',
          onTokens: (t) => void persisted.push(t),
        },
      },
    });
    const shop = await c.getCurrentShop();
    expect(shop.id).toBe(F.IDS.shop);
    expect(s.requests.map((r) => r.path)).toEqual(['/shops/current', '/platform/token', '/shops/current']);
    expect(s.requests[1]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(o.tokenForms[0]!)).toEqual({
      grant_type: 'refresh_token',
      client_id: 'app_1',
      client_secret: 'cs-secret',
      refresh_token: 'rt-1',
    });
    expect(persisted).toEqual([expect.objectContaining({ accessToken: 'at-new-1', refreshToken: 'rt-rotated' })]);
  });

  it('a second 401 after the refresh is an auth error (no loop)', async () => {
    const o = oauthServer({ validToken: () => 'never', issue: () => ({ access_token: 'at-2', expires_in: 3600 }) });
    const s = await server(o.handler);
    const c = client(s.url, { auth: { oauth: { clientId: 'app', accessToken: 'at-1', refreshToken: 'rt-1' } } });
    const e = await caught(c.getCurrentShop());
    expect(e).toBeInstanceOf(FourthwallAuthError);
    expect((e as FourthwallAuthError).status).toBe(401);
    expect(s.requests.map((r) => r.path)).toEqual(['/shops/current', '/platform/token', '/shops/current']);
  });

  it('a 401 with Basic credentials is an auth error without retry; 403 likewise', async () => {
    const s = await server((req, res) => sendJson(res, req.index === 0 ? 401 : 403, {}));
    const c = client(s.url);
    expect(await caught(c.getCurrentShop())).toBeInstanceOf(FourthwallAuthError);
    const e = await caught(c.finishDraw(F.IDS.draw, { participants }));
    expect(e).toBeInstanceOf(FourthwallAuthError);
    expect((e as FourthwallAuthError).status).toBe(403);
    expect(s.requests).toHaveLength(2);
  });

  it('a refused refresh (invalid_grant) is an auth error naming the OAuth error only', async () => {
    const s = await server((req, res) =>
      req.path === '/platform/token'
        ? sendJson(res, 400, { error: 'invalid_grant', error_description: 'rt-1 is revoked' })
        : sendJson(res, 401, {}),
    );
    const c = client(s.url, { auth: { oauth: { clientId: 'app', accessToken: 'at-1', refreshToken: 'rt-1' } } });
    const e = await caught(c.getCurrentShop());
    expect(e).toBeInstanceOf(FourthwallAuthError);
    expect((e as FourthwallAuthError).code).toBe('OAUTH_REFRESH_FAILED');
    expect((e as FourthwallAuthError).context).toEqual({ oauthError: 'invalid_grant' });
    expect(JSON.stringify(e) + e.message + String(e.cause)).not.toContain('rt-1');
  });

  it('refreshes ahead of expiry and not before', async () => {
    const clock = new ManualClock(Date.now());
    let n = 0;
    let valid = 'at-initial';
    const o = oauthServer({
      validToken: () => valid,
      issue: () => ((valid = `at-${++n}`), { access_token: valid, expires_in: 600 }),
    });
    const s = await server(o.handler);
    const c = client(s.url, {
      clock,
      auth: {
        oauth: {
          clientId: 'app',
          accessToken: 'at-initial',
          refreshToken: 'rt',
          expiresAt: clock.now() + 120_000,
          refreshAheadMs: 60_000,
        },
      },
    });
    await c.getCurrentShop();
    expect(o.tokenForms).toHaveLength(0);
    clock.advance(59_000); // 61 s left: still fresh
    await c.getCurrentShop();
    expect(o.tokenForms).toHaveLength(0);
    clock.advance(2_000); // 59 s left: refresh before sending
    await c.getCurrentShop();
    expect(o.tokenForms).toHaveLength(1);
    expect(s.requests.map((r) => r.path)).toEqual([
      '/shops/current',
      '/shops/current',
      '/platform/token',
      '/shops/current',
    ]);
    expect(s.requests[3]!.headers.authorization).toBe('Bearer at-1');
    // New token lives 600 s: the next refresh is due 60 s before that.
    clock.advance(539_000);
    await c.getCurrentShop();
    expect(o.tokenForms).toHaveLength(1);
    clock.advance(2_000);
    await c.getCurrentShop();
    expect(o.tokenForms).toHaveLength(2);
    expect(s.requests.filter((r) => r.path === '/shops/current').map((r) => r.headers.authorization)).toEqual([
      'Bearer at-initial',
      'Bearer at-initial',
      'Bearer at-1',
      'Bearer at-1',
      'Bearer at-2',
    ]);
  });

  it('concurrent callers share one refresh (expired token and concurrent 401s)', async () => {
    let n = 0;
    let valid = 'at-0';
    const o = oauthServer({
      validToken: () => valid,
      issue: () => ((valid = `at-${++n}`), { access_token: valid, expires_in: 3600 }),
    });
    const s = await server(o.handler);
    const clock = new ManualClock(Date.now());
    const c = client(s.url, {
      clock,
      auth: { oauth: { clientId: 'app', accessToken: 'at-expired', refreshToken: 'rt', expiresAt: clock.now() - 1 } },
    });
    await Promise.all(Array.from({ length: 10 }, () => c.getCurrentShop()));
    expect(o.tokenForms).toHaveLength(1);
    // Server revokes the token: ten concurrent 401s still cause a single refresh.
    valid = 'revoked';
    const afterRevoke = await Promise.allSettled(Array.from({ length: 10 }, () => c.getCurrentShop()));
    expect(afterRevoke.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(o.tokenForms).toHaveLength(2);
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => c.getCurrentShop()));
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
    expect(o.tokenForms).toHaveLength(2);
  });

  it('exchanges an authorization code with PKCE against a configurable token URL', async () => {
    const s = await server((req, res) => {
      expect(req.path).toBe('/auth/realms/Fourthwall/protocol/openid-connect/token');
      sendJson(res, 200, { access_token: 'at-x', refresh_token: 'rt-x', expires_in: 300, token_type: 'Bearer' });
    });
    const clock = new ManualClock(1_000_000);
    const tokens = await exchangeAuthorizationCode({
      tokenUrl: `${s.url}/auth/realms/Fourthwall/protocol/openid-connect/token`,
      clientId: 'app',
      clientSecret: 'cs',
      redirectUri: 'http://127.0.0.1:8787/oauth/callback',
      code: 'code-123',
      codeVerifier: 'verifier-abc',
      clock,
      transport: undiciTokenTransport({ timeoutMs: 2_000 }),
    });
    expect(tokens).toEqual({
      accessToken: 'at-x',
      refreshToken: 'rt-x',
      expiresAt: 1_300_000,
      tokenType: 'Bearer',
      scope: undefined,
    });
    expect(Object.fromEntries(new URLSearchParams(s.requests[0]!.body))).toEqual({
      grant_type: 'authorization_code',
      client_id: 'app',
      client_secret: 'cs',
      redirect_uri: 'http://127.0.0.1:8787/oauth/callback',
      code: 'code-123',
      code_verifier: 'verifier-abc',
    });
  });

  it('keeps secrets out of the client and provider objects', () => {
    const auth = {
      basic: { username: 'u', password: 'pw-hidden-1' },
      oauth: { clientId: 'app', clientSecret: 'cs-hidden-2', accessToken: 'at-hidden-3', refreshToken: 'rt-hidden-4' },
    };
    const c = client('http://127.0.0.1:1', { auth });
    const provider = createAuthProvider(auth, {
      clock: new ManualClock(),
      transport: async () => ({ status: 500, body: undefined }),
      defaultTokenUrl: 'http://x',
    });
    const dumps = [
      JSON.stringify(c),
      inspect(c, { showHidden: true, depth: 8 }),
      JSON.stringify(provider),
      inspect(provider, { showHidden: true, depth: 8 }),
    ];
    for (const d of dumps)
      for (const secret of [
        'pw-hidden-1',
        'cs-hidden-2',
        'at-hidden-3',
        'rt-hidden-4',
        Buffer.from('u:pw-hidden-1').toString('base64'),
      ])
        expect(d).not.toContain(secret);
    expect(provider.describe()).toEqual({ basic: true, bearer: false, oauth: true, canRefresh: true });
    expect(c.secrets()).toEqual(expect.arrayContaining(['pw-hidden-1', 'cs-hidden-2', 'at-hidden-3', 'rt-hidden-4']));
  });
});

describe('FourthwallClient logging', () => {
  it('logs method, path, status and duration at debug, and never a secret (even without scrubbing)', async () => {
    let valid = 'none-yet';
    const s = await server((req, res) => {
      if (req.path === '/platform/token') {
        valid = 'at-second-ghijkl';
        return sendJson(res, 200, { access_token: valid, refresh_token: 'rt-second-mnopqr', expires_in: 3600 });
      }
      if (req.path === '/streaming')
        return sendJson(res, req.headers.authorization?.startsWith('Basic ') ? 200 : 401, F.streamingStatusFixture());
      if (req.path.startsWith('/gifting/draw/')) return sendJson(res, 401, { code: 'UNAUTHORIZED' });
      if (req.headers.authorization !== `Bearer ${valid}`) return sendJson(res, 401, { code: 'UNAUTHORIZED' });
      return sendJson(res, 200, F.giveawayPackageFixture(1));
    });
    const secrets = [
      'pw-basic-s3cret',
      'cs-client-s3cret',
      'at-first-abcdef',
      'rt-first-uvwxyz',
      'at-second-ghijkl',
      'rt-second-mnopqr',
    ];
    const basic64 = Buffer.from('api-user:pw-basic-s3cret').toString('base64');
    const auth = {
      basic: { username: 'api-user', password: 'pw-basic-s3cret' },
      oauth: {
        clientId: 'app',
        clientSecret: 'cs-client-s3cret',
        accessToken: 'at-first-abcdef',
        refreshToken: 'rt-first-uvwxyz',
      },
    };
    for (const scrubbed of [false, true]) {
      valid = 'the-first-token-is-revoked';
      const cap = new LogCapture();
      const logger = createLogger({ destination: cap, level: 'debug', secrets: scrubbed ? [...secrets, basic64] : [] });
      const c = client(s.url, { auth, logger });
      const pkg = await c.createGiveawayLinks({ productId: F.IDS.offer, number: 1 });
      expect(pkg.giveawayLinks[0]!.link).toContain('/gifts/');
      await c.getStreamingStatus();
      await caught(c.getDraw(F.IDS.draw));
      const text = cap.text();
      for (const secret of [...secrets, basic64, 'Basic ', 'Bearer', '/gifts/'])
        expect(text, `${secret} leaked (scrubbed=${scrubbed})`).not.toContain(secret);
      const lines = cap.json().filter((l) => l.msg === 'fourthwall call');
      expect(lines.map((l) => [l.method, l.path, l.status])).toEqual([
        ['POST', '/giveaway-links', 401],
        ['POST', '/giveaway-links', 200],
        ['GET', '/streaming', 200],
        ['GET', `/gifting/draw/${F.IDS.draw}`, 401],
      ]);
      for (const l of lines) expect(typeof l.ms).toBe('number');
    }
  });
});
