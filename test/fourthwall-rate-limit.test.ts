import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/shared/clock.js';
import { FourthwallClient, SlidingWindowLimiter } from '../src/fourthwall/index.js';
import { maxInAnyWindow, sendJson, startTestServer } from './support/fourthwall-server.js';
import { shopFixture } from './support/fourthwall-fixtures.js';

const flush = () => new Promise<void>((r) => setImmediate(r));

describe('SlidingWindowLimiter (manual clock)', () => {
  it('grants N immediately, makes the rest wait FIFO, and reuses a slot intervalMs after release', async () => {
    const clock = new ManualClock(0);
    const lim = new SlidingWindowLimiter({ limit: 3, intervalMs: 100 }, clock);
    const order: number[] = [];
    const permits = Array.from({ length: 7 }, (_, i) =>
      lim.acquire().then((p) => {
        order.push(i);
        return { p, at: clock.now() };
      }),
    );
    await flush();
    expect(order).toEqual([0, 1, 2]);
    expect(lim.waiting).toBe(4);
    const first = await Promise.all(permits.slice(0, 3));
    clock.advance(10);
    first[0]!.p.release(); // slot free at 110
    clock.advance(30);
    first[1]!.p.release(); // slot free at 140
    first[2]!.p.release(); // slot free at 140
    clock.advance(69); // t=109
    await flush();
    expect(order).toEqual([0, 1, 2]);
    clock.advance(1); // t=110
    await flush();
    expect(order).toEqual([0, 1, 2, 3]);
    clock.advance(30); // t=140
    await flush();
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    const got = await Promise.all(permits.slice(3, 6));
    expect(got.map((g) => g.at)).toEqual([110, 140, 140]);
    for (const g of got) g.p.release();
    clock.advance(100);
    await flush();
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('lets an aborted waiter leave the queue without consuming a slot', async () => {
    const clock = new ManualClock(0);
    const lim = new SlidingWindowLimiter({ limit: 1, intervalMs: 50 }, clock);
    const p0 = await lim.acquire();
    const ac = new AbortController();
    const aborted = lim.acquire(ac.signal);
    const next = lim.acquire();
    ac.abort(new Error('gone'));
    await expect(aborted).rejects.toThrow('gone');
    p0.release();
    clock.advance(50);
    await expect(next).resolves.toBeDefined();
    expect(lim.waiting).toBe(0);
  });

  it('never hands out more than N permits in any window under random release patterns', async () => {
    const clock = new ManualClock(0);
    const lim = new SlidingWindowLimiter({ limit: 5, intervalMs: 100 }, clock);
    const grants: number[] = [];
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const all = Array.from({ length: 60 }, () =>
      lim.acquire().then((p) => {
        grants.push(clock.now());
        const hold = Math.floor(rnd() * 40);
        clock.setTimeout(() => p.release(), hold);
      }),
    );
    for (let t = 0; t < 2000 && grants.length < 60; t++) {
      clock.advance(1);
      await flush();
    }
    await Promise.all(all);
    expect(grants).toHaveLength(60);
    expect(maxInAnyWindow(grants, 100)).toBeLessThanOrEqual(5);
  });
});

describe('client rate limit against a real server', () => {
  it('16 callers x 30 calls at 20 per 200 ms: no server-side window over budget, none fails', async () => {
    const server = await startTestServer((_req, res) => sendJson(res, 200, shopFixture()));
    const client = new FourthwallClient({
      apiUrl: server.url,
      auth: { basic: { username: 'u', password: 'p' } },
      rateLimit: { limit: 20, intervalMs: 200 },
    });
    try {
      const started = Date.now();
      const results = await Promise.allSettled(
        Array.from({ length: 16 }, async () => {
          for (let i = 0; i < 30; i++) await client.getCurrentShop();
        }),
      );
      const elapsed = Date.now() - started;
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      expect(server.requests).toHaveLength(480);
      const arrivals = server.requests.map((r) => r.arrivedAt);
      expect(maxInAnyWindow(arrivals, 200)).toBeLessThanOrEqual(20);
      // 480 calls at 20 per 200 ms need at least 23 further windows after the first.
      expect(elapsed).toBeGreaterThanOrEqual(23 * 200);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
