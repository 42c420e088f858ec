/**
 * The Helix client against the local Helix API (on the sandbox chat server's port), on a manual
 * clock shared by both: batches of 100 ids, Ratelimit-Remaining / Ratelimit-Reset honoured (waits
 * for the reset instead of spending a request on a 429), a 429 from a shared bucket retried after
 * the reset, Helix's error shapes turned into errors naming the call, and an unreachable API.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger } from '../src/logging/index.js';
import { startChatServer } from '../src/sandbox/chat/index.js';
import { SandboxHelix } from '../src/sandbox/helix/index.js';
import { ManualClock } from '../src/shared/clock.js';
import { NO_RETRY } from '../src/shared/retry.js';
import { HelixClient, HelixError } from '../src/twitch/helix.js';
import { HelixAccountInfo } from '../src/twitch/account-info.js';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function rig(ratePerMinute = 800) {
  const clock = new ManualClock(Date.now());
  const chat = await startChatServer({ clock, scopes: ['chat:read', 'chat:edit', 'moderator:read:followers'] });
  closers.push(() => chat.close());
  const helix = new SandboxHelix({ auth: chat.tokens, clock, ratePerMinute });
  chat.mount((req, res) => helix.handle(req, res));
  const client = (token = chat.token) => {
    const c = new HelixClient({
      apiUrl: chat.authUrl.replace(/\/oauth2$/, '/helix'),
      clientId: chat.clientId,
      token: { current: () => token, canRefresh: () => false, refresh: () => Promise.resolve() },
      clock,
      logger: silentLogger(),
      retry: NO_RETRY,
      deadlineMs: 120_000, // longer than a rate-limit window (the clock is manual: nothing waits for real)
    });
    closers.push(() => c.close());
    return c;
  };
  return { clock, chat, helix, client };
}

describe('Helix client', () => {
  it('looks up 250 ids in 3 calls of at most 100', async () => {
    const { helix, client } = await rig();
    const ids = Array.from({ length: 250 }, (_, i) => String(1000 + i));
    const users = await client().users(ids);
    expect(users).toHaveLength(250);
    expect(helix.calls.map((c) => new URLSearchParams(c.query).getAll('id').length)).toEqual([100, 100, 50]);
  });

  it('at Ratelimit-Remaining 0 it waits for Ratelimit-Reset instead of getting a 429', async () => {
    const { clock, helix, client } = await rig(2);
    const api = client();
    await api.users(['1001']);
    await api.users(['1002']); // bucket spent: Ratelimit-Remaining 0
    let done = false;
    const third = api.users(['1003']).then((u) => ((done = true), u));
    await Promise.resolve();
    expect(helix.calls).toHaveLength(2); // held back, not sent
    expect(done).toBe(false);
    clock.advance(61_000); // Ratelimit-Reset is in whole seconds
    expect(await third).toHaveLength(1);
    expect(helix.calls.map((c) => c.status)).toEqual([200, 200, 200]);
  });

  it('with the bucket spent it waits for one point to come back (a minute / limit), not for the whole bucket', async () => {
    const { clock, helix, client } = await rig(60); // one point a second
    const api = client();
    for (let i = 0; i < 60; i++) await api.users([String(3000 + i)]);
    let done = false;
    const next = api.users(['4000']).then((u) => ((done = true), u));
    await vi.waitFor(() => expect(clock.pending()).toBe(1)); // waiting on the clock, nothing sent
    expect(helix.calls).toHaveLength(60);
    clock.advance(1_100);
    expect(await next).toHaveLength(1);
    expect(done).toBe(true);
    expect(helix.calls.map((c) => c.status)).toEqual(Array(61).fill(200));
  });

  it('concurrent calls share one budget: no more requests are sent than Ratelimit-Remaining allows, none gets a 429', async () => {
    const { clock, helix, client } = await rig(5);
    const api = client();
    await api.users(['1001']); // Ratelimit-Remaining 4
    const burst = Array.from({ length: 8 }, (_, i) => api.users([String(2000 + i)]));
    // Four go out; the other four wait on the clock for the reset instead of spending a 429.
    await vi.waitFor(() => expect(helix.calls.length === 5 && clock.pending() === 4).toBe(true));
    expect(helix.calls).toHaveLength(5);
    clock.advance(61_000); // the bucket is full again
    expect((await Promise.all(burst)).every((u) => u.length === 1)).toBe(true);
    expect(helix.calls).toHaveLength(9);
    expect(helix.calls.every((c) => c.status === 200)).toBe(true);
  });

  it("the local Helix refills its bucket like Twitch's (continuously) and can answer with latency", async () => {
    const { clock, helix, chat } = await rig(60); // one point a second
    const get = async () => {
      const res = await fetch(`${chat.authUrl.replace(/\/oauth2$/, '/helix')}/users?id=1`, {
        headers: { 'client-id': chat.clientId, authorization: `Bearer ${chat.token}` },
      });
      await res.text();
      return {
        status: res.status,
        remaining: res.headers.get('ratelimit-remaining'),
        limit: res.headers.get('ratelimit-limit'),
      };
    };
    for (let i = 0; i < 60; i++) await get();
    expect(await get()).toMatchObject({ status: 429, remaining: '0', limit: '60' });
    clock.advance(2_000); // two points back, not the whole bucket
    expect(await get()).toMatchObject({ status: 200, remaining: '1' });
    expect(await get()).toMatchObject({ status: 200, remaining: '0' });
    expect((await get()).status).toBe(429);
    expect(helix.calls.filter((c) => c.status === 429)).toHaveLength(2);

    const served = await startChatServer({ clock, scopes: ['chat:read', 'chat:edit'] });
    closers.push(() => served.close());
    const slow = new SandboxHelix({ auth: served.tokens, clock, latencyMs: 80 });
    served.mount((req, res) => slow.handle(req, res));
    const t = performance.now();
    const res = await fetch(`${served.authUrl.replace(/\/oauth2$/, '/helix')}/users?id=1`, {
      headers: { 'client-id': served.clientId, authorization: `Bearer ${served.token}` },
    });
    expect(res.status).toBe(200);
    await res.text();
    expect(performance.now() - t).toBeGreaterThanOrEqual(75);
  });

  it('a 429 (bucket spent by another client with the same token) is retried after the reset', async () => {
    const { clock, helix, client } = await rig(2);
    const a = client();
    const b = client();
    await a.users(['1001']); // a believes 1 request is left
    await b.users(['1002']); // ... but b spends it
    const p = a.users(['1003']);
    await vi.waitFor(() => expect(helix.calls.some((c) => c.status === 429)).toBe(true));
    clock.advance(61_000); // Ratelimit-Reset is in whole seconds
    expect(await p).toHaveLength(1);
    expect(helix.calls.map((c) => c.status)).toEqual([200, 200, 429, 200]);
  });

  it('Helix errors become errors naming the call; a wrong token is a 401 without refresh; down is retryable', async () => {
    const { helix, client } = await rig();
    const bad = client('not-the-token');
    const err = await bad.stream('123').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HelixError);
    expect(err).toMatchObject({ code: 'TWITCH_API_AUTH', status: 401, retryable: false });
    expect((err as Error).message).toMatch(/Twitch API refused TWITCH_TOKEN \(Invalid OAuth token\) \(GET \/streams\)/);
    expect((err as Error).message).not.toContain('not-the-token');

    helix.setDown(true);
    const down = await client()
      .users(['1'])
      .catch((e: unknown) => e);
    expect(down).toMatchObject({ code: 'TWITCH_API_UNAVAILABLE', status: 503, retryable: true });
    expect((down as Error).message).toBe('Twitch API answered HTTP 503 (GET /users)');
  });

  it('one deadline holds the whole call: an API that never answers is given up at the deadline on the injected clock', async () => {
    const clock = new ManualClock(Date.now());
    // A Helix that accepts each request and never answers it.
    const held: IncomingMessage[] = [];
    const server = createServer((req) => void held.push(req));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const api = new HelixClient({
      apiUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/helix`,
      clientId: 'c',
      token: { current: () => 't', canRefresh: () => false, refresh: () => Promise.resolve() },
      clock,
      logger: silentLogger(),
      timeoutMs: 10_000,
      deadlineMs: 12_000,
      retry: { baseMs: 1000, maxMs: 1000, retries: 2, jitter: 'none' },
    });
    closers.push(() => api.close());
    const started = clock.now();
    let outcome: unknown;
    const call = api.users(['1']).catch((e: unknown) => (outcome = e));
    await vi.waitFor(() => expect(held).toHaveLength(1));
    clock.advance(9_999);
    await Promise.resolve();
    expect(outcome).toBeUndefined();
    clock.advance(1); // the first attempt's timeout, on the clock
    await vi.waitFor(() => expect(clock.pending()).toBe(1)); // the 1 s backoff
    clock.advance(1000);
    await vi.waitFor(() => expect(held).toHaveLength(2));
    // The second attempt gets what is left of the deadline (1 s), not another 10 s.
    clock.advance(1000);
    await call;
    expect(outcome).toMatchObject({ code: 'TWITCH_API_UNAVAILABLE', retryable: true });
    expect(clock.now() - started).toBe(12_000);
    expect(held).toHaveLength(2);
    expect(api.requestCount()).toBe(2);
  });

  it('the account caches are bounded: past maxCached the least recently used account is evicted; a larger batch still gets every answer', async () => {
    const { clock, chat, helix, client } = await rig();
    const accounts = new HelixAccountInfo({
      helix: client(),
      broadcasterId: () => chat.channelId,
      clock,
      logger: silentLogger(),
      maxCached: 3,
      followTtlMs: 60_000,
    });
    const ids = ['2001', '2002', '2003', '2004', '2005'];
    helix.setFollow(chat.channelId, '2002', clock.now() - 86_400_000);
    const calls = (path: string) => helix.calls.filter((c) => c.path === path).length;

    const first = await accounts.lookup(ids, { follows: true });
    expect(first.unchecked).toEqual([]);
    expect([...first.info.keys()].sort()).toEqual(ids); // 5 answers from a cache of 3
    expect(first.info.get('2002')!.followedAt).toBe(clock.now() - 86_400_000);
    expect(accounts.cached()).toEqual({ created: 3, follows: 3 });
    expect([calls('/users'), calls('/channels/followers')]).toEqual([1, 5]);

    // The 3 most recent stay cached; the 2 oldest were evicted and are asked again.
    await accounts.lookup(['2003', '2004', '2005'], { follows: true });
    expect([calls('/users'), calls('/channels/followers')]).toEqual([1, 5]);
    await accounts.lookup(['2001'], { follows: true });
    expect([calls('/users'), calls('/channels/followers')]).toEqual([2, 6]);
    expect(accounts.cached()).toEqual({ created: 3, follows: 3 });

    // Many more chatters: the caches never pass their bound.
    await accounts.lookup(
      Array.from({ length: 40 }, (_, i) => String(3000 + i)),
      { follows: true },
    );
    expect(accounts.cached()).toEqual({ created: 3, follows: 3 });

    // Follow answers expire after followTtlMs; creation dates do not.
    const before = [calls('/users'), calls('/channels/followers')];
    await accounts.lookup(['3039'], { follows: true });
    expect([calls('/users'), calls('/channels/followers')]).toEqual(before);
    clock.advance(60_000);
    await accounts.lookup(['3039'], { follows: true });
    expect([calls('/users'), calls('/channels/followers')]).toEqual([before[0], before[1]! + 1]);
  });

  it('an API that is not there: TWITCH_API_UNAVAILABLE naming the URL', async () => {
    const { chat, client } = await rig();
    const api = client();
    const url = api.apiUrl;
    await chat.close();
    const err = await api.users(['1']).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TWITCH_API_UNAVAILABLE', retryable: true });
    expect((err as Error).message).toContain(`could not reach the Twitch API at ${url}`);
  });
});
