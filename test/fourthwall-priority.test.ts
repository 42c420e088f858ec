/**
 * The Fourthwall client's call order at its rate limit, against the Fourthwall sandbox (which holds
 * back any request over Fourthwall's rule and logs it): p-queue orders who asks the limiter next, so
 * a draw's finish call queued behind a burst of catalog reads goes before the reads still waiting;
 * the sliding-window limiter still keeps every window within the budget (nothing held back).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FourthwallClient } from '../src/fourthwall/index.js';
import { startFourthwallSandbox, type FourthwallSandbox } from '../src/sandbox/fourthwall/index.js';
import { maxInAnyWindow } from './support/fourthwall-server.js';

const BUDGET = { limit: 3, intervalMs: 400 };
const BROADCASTER = { broadcasterId: '41245072', broadcasterLogin: 'giftdrop_streamer' };

describe('Fourthwall call priority at the rate limit', () => {
  let sb: FourthwallSandbox;
  let client: FourthwallClient;

  beforeAll(async () => {
    sb = await startFourthwallSandbox({ rateLimit: BUDGET });
    client = new FourthwallClient({
      apiUrl: sb.apiUrl,
      auth: { basic: { username: sb.username, password: sb.password } },
      rateLimit: BUDGET,
      deadlineMs: 30_000,
    });
  });
  afterAll(async () => {
    await client?.close();
    await sb?.close();
  });

  it(
    'a finish asked for behind 12 catalog reads goes before the reads still queued; no window over the budget',
    { timeout: 30_000 },
    async () => {
      await client.streamingStart({ services: [BROADCASTER] });
      const sim = sb.control.simulateGiftPurchase({ quantity: 1 });
      const drawId = sim.draw['id'] as string;
      const from = sb.control.requests.length;

      const reads = Array.from({ length: 12 }, () => client.listProducts());
      await new Promise((r) => setImmediate(r));
      expect(client.queued).toBeGreaterThan(0); // the budget is spent: reads are waiting
      const finished = client.finishDraw(drawId, { participants: [{ userId: '2001', userName: 'lucky_one' }] });
      await Promise.all([...reads, finished]);

      const log = sb.control.requests
        .slice(from)
        .filter((r) => r.operation === 'listProducts' || r.operation === 'finishDraw');
      expect(log).toHaveLength(13);
      const at = log.findIndex((r) => r.operation === 'finishDraw');
      // Ahead of it: at most the reads holding the 3 slots and the one already asking the limiter.
      // In arrival order (no priority) it would be last (index 12).
      expect(at).toBeLessThanOrEqual(BUDGET.limit + 1);
      expect(log.every((r) => r.status === 200)).toBe(true);
      // At the limit, never over it: no window of the client's requests as they ARRIVED at the shop
      // (the sandbox stamps each when its handler starts; the streaming call before the burst
      // included) held more than 3. (Not the sandbox's admission times: a POST is admitted after its
      // body is read, which a loaded machine can delay past a later arrival.)
      expect(
        maxInAnyWindow(
          sb.control.requests.map((r) => Date.parse(r.time)),
          BUDGET.intervalMs,
        ),
      ).toBeLessThanOrEqual(BUDGET.limit);
    },
  );
});
