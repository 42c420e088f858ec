/**
 * The ShopPort adapter (src/shop/shop-port.ts) over a real FourthwallClient and a local HTTP server:
 * once a non-idempotent call has taken effect, no later failure in the same port call may be
 * reported as a retryable kind (the domain would re-send it and create a second package).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FourthwallClient } from '../src/fourthwall/index.js';
import { FourthwallShop, toShopError } from '../src/shop/shop-port.js';
import { ShopError } from '../src/giveaway/ports.js';
import { silentLogger } from '../src/logging/index.js';
import { sendJson, startTestServer, type TestServer } from './support/fourthwall-server.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setup(handler: Parameters<typeof startTestServer>[0]): Promise<{ s: TestServer; shop: FourthwallShop }> {
  const s = await startTestServer(handler);
  cleanups.push(() => s.close());
  const client = new FourthwallClient({
    apiUrl: s.url,
    auth: { basic: { username: 'u', password: 'p4ss-w0rd' } },
    timeoutMs: 2_000,
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
  });
  cleanups.push(() => client.close());
  return { s, shop: new FourthwallShop(client, { logger: silentLogger() }) };
}

const packageWithoutLinks = {
  packageId: 'gpg_1',
  giveawayLinks: [
    { id: 'gft_a', status: 'AVAILABLE' },
    { id: 'gft_b', status: 'AVAILABLE' },
  ],
};

describe('FourthwallShop.createGiveawayLinks', () => {
  it('builds missing link URLs from the shop domain', async () => {
    const { shop } = await setup((req, res) =>
      req.path === '/giveaway-links'
        ? sendJson(res, 200, packageWithoutLinks)
        : sendJson(res, 200, { id: 'sh_1', name: 'Shop', domain: 'shop.example.com' }),
    );
    const out = await shop.createGiveawayLinks('prod-1', 2);
    expect(out.links.map((l) => l.link)).toEqual([
      'https://shop.example.com/gifts/gft_a',
      'https://shop.example.com/gifts/gft_b',
    ]);
  });

  it('links created but the shop domain unreadable: not a retryable failure, and the package was created once', async () => {
    const { s, shop } = await setup((req, res) =>
      req.path === '/giveaway-links'
        ? sendJson(res, 200, packageWithoutLinks)
        : sendJson(res, 503, { code: 'UNAVAILABLE' }),
    );
    const err = await shop.createGiveawayLinks('prod-1', 2).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ShopError);
    // 'unavailable' makes the link flow send POST /giveaway-links again: a second package.
    expect((err as ShopError).kind).not.toBe('unavailable');
    expect((err as ShopError).kind).toBe('outcome-unknown');
    expect(s.requests.filter((r) => r.path === '/giveaway-links')).toHaveLength(1);
  });
});

describe('toShopError', () => {
  it('keeps a ShopError as it is', () => {
    const e = new ShopError('rejected', 'x');
    expect(toShopError(e, 'createGiveawayLinks')).toBe(e);
  });
});

describe('operations missing from the published document (unverified)', () => {
  it('GET /gifting/config answering 404 (or anything else) is "not available": the configured window is used', async () => {
    for (const status of [404, 500]) {
      const { s, shop } = await setup((_req, res) => sendJson(res, status, { code: 'NOT_FOUND' }));
      expect(await shop.giftingEntrySeconds()).toBeUndefined();
      expect(s.requests.some((r) => r.path === '/gifting/config')).toBe(true);
    }
  });
});

describe('FourthwallShop giveaway packages (GET /giveaway-links/packages)', () => {
  it('lists packages and reads one, building missing link URLs from the shop domain', async () => {
    const { shop } = await setup((req, res) => {
      if (req.path === '/giveaway-links/packages')
        return sendJson(res, 200, { packages: [{ packageId: 'gpg_1', createdAt: '2026-01-01T00:00:00Z' }] });
      if (req.path === '/giveaway-links/packages/gpg_1')
        return sendJson(res, 200, {
          ...packageWithoutLinks,
          giveawayLinks: packageWithoutLinks.giveawayLinks.map((l) => ({ ...l, productId: 'prod-1' })),
        });
      return sendJson(res, 200, { id: 'sh_1', name: 'Shop', domain: 'shop.example.com' });
    });
    expect(await shop.listGiveawayPackages()).toEqual([{ packageId: 'gpg_1', createdAt: '2026-01-01T00:00:00Z' }]);
    const pkg = await shop.getGiveawayPackage('gpg_1');
    expect(pkg.links).toEqual([
      { id: 'gft_a', link: 'https://shop.example.com/gifts/gft_a', productId: 'prod-1' },
      { id: 'gft_b', link: 'https://shop.example.com/gifts/gft_b', productId: 'prod-1' },
    ]);
  });
});
