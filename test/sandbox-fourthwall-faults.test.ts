import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/shared/clock.js';
import {
  startFourthwallSandbox,
  type FourthwallSandbox,
  type FourthwallSandboxOptions,
} from '../src/sandbox/fourthwall/index.js';
import { basic, call, until } from './support/sandbox-fourthwall-helpers.js';

const open: FourthwallSandbox[] = [];
afterEach(async () => {
  for (const sb of open.splice(0)) await sb.close();
});

async function sandbox(options: FourthwallSandboxOptions = {}): Promise<FourthwallSandbox> {
  const sb = await startFourthwallSandbox(options);
  open.push(sb);
  return sb;
}

function shop(sb: FourthwallSandbox): Promise<Response> {
  return fetch(`${sb.apiUrl}/shops/current`, { headers: basic(sb) });
}

describe('Fourthwall sandbox rate rule', () => {
  it('delays requests beyond N per rolling window and refuses none (real short window)', async () => {
    const sb = await sandbox({ rateLimit: { limit: 3, intervalMs: 300 } });
    const responses = await Promise.all(Array.from({ length: 7 }, () => shop(sb)));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 200]);
    const admitted = sb.control.requests
      .filter((r) => r.operation === 'getCurrentShop')
      .map((r) => r.admittedAt as number)
      .sort((a, b) => a - b);
    expect(admitted).toHaveLength(7);
    // Never more than 3 admissions inside any 300 ms window.
    for (let i = 0; i + 3 < admitted.length; i++) {
      expect((admitted[i + 3] as number) - (admitted[i] as number)).toBeGreaterThanOrEqual(300);
    }
    expect(sb.control.requests.filter((r) => r.delayedMs > 0).length).toBeGreaterThanOrEqual(4);
  });

  it('holds the excess until the window moves (ManualClock transport)', async () => {
    const transportClock = new ManualClock();
    const sb = await sandbox({ rateLimit: { limit: 2, intervalMs: 1000 }, transportClock });
    const answered: number[] = [];
    const pending = Array.from({ length: 4 }, (_, i) =>
      shop(sb).then((r) => {
        answered.push(i);
        return r.status;
      }),
    );
    await until(
      () => answered.length === 2 && sb.control.rateLimitWaiting() === 2 && transportClock.pending() === 1,
      5000,
      'two answered, two held on the window timer',
    );
    transportClock.advance(999);
    expect(sb.control.rateLimitWaiting()).toBe(2);
    transportClock.advance(1);
    expect(await Promise.all(pending)).toEqual([200, 200, 200, 200]);
    expect(sb.control.requests.map((r) => r.delayedMs).sort((a, b) => a - b)).toEqual([0, 0, 1000, 1000]);
  });
});

describe('Fourthwall sandbox operation faults', () => {
  it('answers 5xx N times without processing, then works', async () => {
    const sb = await sandbox();
    sb.control.faults.fail('createGiveawayLinks', 2, 502);
    const body = { productId: '00aa4abd-5778-4199-8161-0b49b2f212e5', number: 1 };
    const a = await call(`${sb.apiUrl}/giveaway-links`, { method: 'POST', headers: basic(sb), body });
    const b = await call(`${sb.apiUrl}/giveaway-links`, { method: 'POST', headers: basic(sb), body });
    expect([a.status, b.status]).toEqual([502, 502]);
    expect(a.body.code).toBe('INTERNAL_SERVER_ERROR');
    expect(sb.state.packages.size).toBe(0);
    const c = await call(`${sb.apiUrl}/giveaway-links`, { method: 'POST', headers: basic(sb), body });
    expect(c.status).toBe(200);
    expect(sb.state.packages.size).toBe(1);
  });

  it('answers 429 with Retry-After N times, only for the chosen operation', async () => {
    const sb = await sandbox();
    sb.control.faults.rateLimit('getCurrentShop', 1, 7);
    expect((await call(`${sb.apiUrl}/products`, { headers: basic(sb) })).status).toBe(200);
    const limited = await call(`${sb.apiUrl}/shops/current`, { headers: basic(sb) });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect(limited.body.code).toBe('TOO_MANY_REQUESTS');
    expect((await call(`${sb.apiUrl}/shops/current`, { headers: basic(sb) })).status).toBe(200);
  });

  it('delays an operation (ManualClock transport)', async () => {
    const transportClock = new ManualClock();
    const sb = await sandbox({ transportClock });
    sb.control.faults.delay('getCurrentShop', 3000);
    let done = false;
    const res = shop(sb).then((r) => {
      done = true;
      return r.status;
    });
    // The handler waits on a transport timer; nothing answers until the clock moves.
    await until(() => transportClock.pending() === 1, 5000, 'the injected delay timer');
    expect(sb.control.requests[0]?.operation).toBe('getCurrentShop');
    expect(done).toBe(false);
    transportClock.advance(3000);
    expect(await res).toBe(200);
  });

  it('hangs: accepts and never answers, leaving state untouched, until the sandbox closes', async () => {
    const sb = await startFourthwallSandbox();
    sb.control.setLive(true);
    const { draw } = sb.control.simulateGiftPurchase({ quantity: 1 });
    sb.control.faults.hang('finishDraw');
    let settled: 'pending' | 'answered' | 'failed' = 'pending';
    const req = fetch(`${sb.apiUrl}/gifting/draw/${draw['id']}/finish`, {
      method: 'PUT',
      headers: { ...basic(sb), 'content-type': 'application/json' },
      body: JSON.stringify({ participants: [{ service: 'TWITCH', userId: '1', userName: 'a' }] }),
    }).then(
      () => void (settled = 'answered'),
      () => void (settled = 'failed'),
    );
    await until(() => sb.control.requests.some((r) => r.status === 'hung'), 5000, 'hung request');
    // A later request is answered while the hung one stays open.
    expect((await shop(sb)).status).toBe(200);
    expect(settled).toBe('pending');
    expect(sb.state.draw(draw['id'] as string).status).toBe('OPEN');
    await sb.close();
    await req;
    expect(settled).toBe('failed');
  });

  it('processes then drops the connection: the caller sees an error while the draw is finished', async () => {
    const sb = await sandbox();
    sb.control.setLive(true);
    const { draw } = sb.control.simulateGiftPurchase({ quantity: 1 });
    sb.control.faults.dropAfterProcessing('finishDraw');
    await expect(
      fetch(`${sb.apiUrl}/gifting/draw/${draw['id']}/finish`, {
        method: 'PUT',
        headers: { ...basic(sb), 'content-type': 'application/json' },
        body: JSON.stringify({ participants: [{ service: 'TWITCH', userId: '1', userName: 'a' }] }),
      }),
    ).rejects.toThrow();
    expect(sb.control.requests.at(-1)?.status).toBe('dropped');
    const after = await call(`${sb.apiUrl}/gifting/draw/${draw['id']}`, { headers: basic(sb) });
    expect(after.body.gifts[0].winner.username).toBe('a');
    const retry = await call(`${sb.apiUrl}/gifting/draw/${draw['id']}/finish`, {
      method: 'PUT',
      headers: basic(sb),
      body: { participants: [{ service: 'TWITCH', userId: '1', userName: 'a' }] },
    });
    expect(retry.body.code).toBe('GIVEAWAY_DRAW_ALREADY_FINISHED');
  });

  it('injects, lists and clears faults over the HTTP control API; bad specs get 400', async () => {
    const sb = await sandbox();
    const control = `${new URL(sb.apiUrl).origin}/__sandbox`;
    const added = await call(`${control}/faults`, {
      method: 'POST',
      headers: basic(sb),
      body: { operation: 'getCurrentShop', kind: 'status', status: 500, times: 2 },
    });
    expect(added.status).toBe(201);
    expect(added.body.pending).toEqual([
      { operation: 'getCurrentShop', kind: 'status', remaining: 2, status: 500, retryAfterSeconds: 1, delayMs: 0 },
    ]);
    expect((await shop(sb)).status).toBe(500);
    expect((await call(`${control}/faults`, { headers: basic(sb) })).body.pending[0].remaining).toBe(1);
    expect((await call(`${control}/faults`, { method: 'DELETE', headers: basic(sb) })).status).toBe(204);
    expect((await shop(sb)).status).toBe(200);

    const bad = await call(`${control}/faults`, {
      method: 'POST',
      headers: basic(sb),
      body: { operation: '*', kind: 'explode' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');

    const live = await call(`${control}/live`, { method: 'PUT', headers: basic(sb), body: { live: true } });
    expect(live.body.services[0].status).toBe('ONLINE');
    const reqs = await call(`${control}/requests`, { headers: basic(sb) });
    const shopCalls = reqs.body.requests.filter((r: { path: string }) => r.path === '/open-api/v1.0/shops/current');
    expect(shopCalls.map((r: { status: number }) => r.status)).toEqual([500, 200]);
    expect(shopCalls[0]).toMatchObject({ method: 'GET', operation: 'getCurrentShop' });
    expect(Date.parse(shopCalls[0].time)).not.toBeNaN();
  });
});
