/**
 * The typed Fourthwall client against the local Fourthwall sandbox, over real HTTP on 127.0.0.1:
 * every operation of the client's OPERATIONS table is called for real (responses go through the
 * client's zod schemas) and its result is checked against the seeded shop or against what an
 * earlier call created. Also: the `/open-api/v1/` prefix, Basic and OAuth (code exchange, refresh
 * after the sandbox expires the access tokens), the documented error bodies surfacing as
 * FourthwallApiError codes, "outcome unknown" on finishDraw, and a table-driven check that the
 * sandbox's request log holds every operation once the suite has run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FourthwallApiError,
  FourthwallAuthError,
  FourthwallClient,
  FourthwallOutcomeUnknownError,
  FourthwallTokenError,
  OPERATIONS,
  OPERATION_LIST,
  exchangeAuthorizationCode,
  verifyWebhookSignature,
  type OAuthTokens,
  type OperationKey,
  type OperationSpec,
} from '../src/fourthwall/index.js';
import {
  SEED_PRODUCT_IDS,
  SEED_SHOP_ID,
  startFourthwallSandbox,
  type FourthwallSandbox,
  type RequestRecord,
} from '../src/sandbox/fourthwall/index.js';
import { systemClock } from '../src/shared/clock.js';
import { startReceiver, type Receiver } from './support/sandbox-fourthwall-helpers.js';

const FAST = {
  rateLimit: { limit: 1000, intervalMs: 1000 },
  timeoutMs: 3000,
  deadlineMs: 5000,
  retry: { baseDelayMs: 5, maxDelayMs: 20 },
};
const BROADCASTER = { broadcasterId: '41245072', broadcasterLogin: 'giftdrop_streamer' };
const REDIRECT_URI = 'http://127.0.0.1/oauth/callback';
const MISSING_UUID = '9f9f9f9f-0000-4000-8000-000000000000';

/**
 * Operations whose client and sandbox disagree on the wire shape (reported, not hidden): they
 * must still reach the sandbox, but are not required to succeed. None at present.
 */
const KNOWN_MISMATCHES: ReadonlySet<OperationKey> = new Set([]);

/** The sandbox's own names where they differ from the client's operation keys. */
const SANDBOX_NAMES: Partial<Record<OperationKey, string>> = {
  streamingStart: 'startStreaming',
  streamingEnd: 'endStreaming',
};

async function apiError(p: Promise<unknown>): Promise<FourthwallApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof FourthwallApiError) return e;
    throw e;
  }
  throw new Error('expected a FourthwallApiError, the call succeeded');
}

/** Number of literal segments of `template` when it matches `path` segment for segment, else -1. */
function templateScore(template: string, path: string): number {
  const t = template.split('/').filter((s) => s !== '');
  const p = path.split('/').filter((s) => s !== '');
  if (t.length !== p.length) return -1;
  let literal = 0;
  for (let i = 0; i < t.length; i++) {
    if (/^\{[A-Za-z0-9_]+\}$/.test(t[i]!)) continue;
    if (t[i] !== p[i]) return -1;
    literal++;
  }
  return literal;
}

/**
 * The client operation a logged request was, from its method and path alone (API paths under
 * either prefix, feed paths under the shop path), preferring the most literal template.
 */
function operationOf(rec: RequestRecord, shopPath: string): OperationKey | undefined {
  let rel: string | undefined;
  let base: OperationSpec['base'] | undefined;
  for (const prefix of ['/open-api/v1.0', '/open-api/v1']) {
    if (rec.path.startsWith(`${prefix}/`)) {
      rel = rec.path.slice(prefix.length);
      base = 'api';
      break;
    }
  }
  if (rel === undefined && rec.path.startsWith(`${shopPath}/`)) {
    rel = rec.path.slice(shopPath.length);
    base = 'shop';
  }
  if (rel === undefined) return undefined;
  let best: { key: OperationKey; score: number } | undefined;
  for (const op of OPERATION_LIST) {
    if (op.base !== base || op.method !== rec.method) continue;
    const score = templateScore(op.path, rel);
    if (score >= 0 && (!best || score > best.score)) best = { key: op.key, score };
  }
  return best?.key;
}

/** Operation keys with no logged request (or, unless a known mismatch, no 2xx answer). */
function uncovered(
  requests: readonly RequestRecord[],
  shopPath: string,
): { missing: OperationKey[]; failing: OperationKey[] } {
  const seen = new Map<OperationKey, RequestRecord[]>();
  for (const r of requests) {
    const key = operationOf(r, shopPath);
    if (key) seen.set(key, [...(seen.get(key) ?? []), r]);
  }
  const missing: OperationKey[] = [];
  const failing: OperationKey[] = [];
  for (const { key } of OPERATION_LIST) {
    const recs = seen.get(key) ?? [];
    if (recs.length === 0) missing.push(key);
    else if (
      !KNOWN_MISMATCHES.has(key) &&
      !recs.some((r) => typeof r.status === 'number' && r.status >= 200 && r.status < 300)
    ) {
      failing.push(key);
    }
  }
  return { missing, failing };
}

describe('FourthwallClient against the Fourthwall sandbox', () => {
  let sb: FourthwallSandbox;
  let client: FourthwallClient;
  let receiver: Receiver;
  let shopPath: string;

  beforeAll(async () => {
    sb = await startFourthwallSandbox({
      rateLimit: { limit: 10_000, intervalMs: 1000 },
      deliveryRetry: { delaysMs: [20], timeoutMs: 1000 },
    });
    receiver = await startReceiver();
    shopPath = new URL(sb.shopUrl).pathname;
    client = new FourthwallClient({
      apiUrl: sb.apiUrl,
      auth: { basic: { username: sb.username, password: sb.password } },
      ...FAST,
    });
  });

  afterAll(async () => {
    await client?.close();
    await sb?.close();
    await receiver?.close();
  });

  describe('shop, catalogue and the public product feed', () => {
    it('getCurrentShop and getShopContactInfo return the seeded shop', async () => {
      const shop = await client.getCurrentShop();
      expect(shop.id).toBe(SEED_SHOP_ID);
      expect(shop.name).toBe('Giftdrop Demo Shop');
      expect(shop.domain).toBe(new URL(sb.shopUrl).host);
      const contact = await client.getShopContactInfo();
      expect(contact).toMatchObject({
        shopName: shop.name,
        domain: shop.domain,
        customerSupportEmail: sb.state.contactInfo.customerSupportEmail,
      });
    });

    it('listProducts pages and searches; getProduct returns a seeded product with its variants', async () => {
      const all = await client.listAllProducts({ pageSize: 2 });
      expect(all.map((p) => p.id).sort()).toEqual(Object.values(SEED_PRODUCT_IDS).sort());
      const page1 = await client.listProducts({ page: 1, size: 2 });
      expect(page1.results.map((p) => p.id)).toEqual([SEED_PRODUCT_IDS.hoodie, SEED_PRODUCT_IDS.stickers]);
      const mugs = await client.listProducts({ search: 'mug' });
      expect(mugs.results.map((p) => p.id)).toEqual([SEED_PRODUCT_IDS.mug]);
      const hoodie = await client.getProduct(SEED_PRODUCT_IDS.hoodie);
      expect(hoodie.name).toBe('Giftdrop Hoodie');
      expect(hoodie.variants?.map((v) => v.sku)).toEqual(['GD-HOOD-BLK-M', 'GD-HOOD-BLK-L']);
    });

    it('updateProductAvailability changes the product, which getProduct and the RSS feed then show', async () => {
      const feedBefore = await client.fetchProductFeed(sb.shopUrl);
      const publicIds = [
        SEED_PRODUCT_IDS.tshirt,
        SEED_PRODUCT_IDS.mug,
        SEED_PRODUCT_IDS.hoodie,
        SEED_PRODUCT_IDS.stickers,
      ];
      expect(feedBefore.items.map((i) => i.id).sort()).toEqual([...publicIds].sort());
      const mugItem = feedBefore.items.find((i) => i.id === SEED_PRODUCT_IDS.mug)!;
      expect(mugItem).toMatchObject({
        title: 'Giftdrop Mug',
        price: { value: 15, currency: 'USD' },
        availability: 'in_stock',
      });

      const soldOut = await client.updateProductAvailability(SEED_PRODUCT_IDS.stickers, false);
      expect(soldOut.state).toMatchObject({ type: 'SOLD_OUT' });
      expect((await client.getProduct(SEED_PRODUCT_IDS.stickers)).state).toMatchObject({ type: 'SOLD_OUT' });
      const feedAfter = await client.fetchProductFeed(sb.shopUrl);
      expect(feedAfter.items.find((i) => i.id === SEED_PRODUCT_IDS.stickers)?.availability).toBe('out_of_stock');

      const back = await client.updateProductAvailability(SEED_PRODUCT_IDS.stickers, true);
      expect(back.state).toMatchObject({ type: 'AVAILABLE' });
    });
  });

  describe('donations, orders, thank-yous', () => {
    it('listDonations and getDonation return the seeded donations', async () => {
      const seeded = [...sb.state.donations.values()];
      const page = await client.listDonations({ page: 0, size: 10 });
      expect(page.results.map((d) => d.id).sort()).toEqual(seeded.map((d) => d.id).sort());
      const one = await client.getDonation(seeded[0]!.id);
      expect(one).toMatchObject({
        id: seeded[0]!.id,
        status: 'COMPLETED',
        amounts: { total: { value: 10, currency: 'USD' } },
      });
    });

    it('listOrders applies email, status and date filters; getOrder and getOrderByFriendlyId agree', async () => {
      const seeded = [...sb.state.orders.values()];
      const confirmedOfBuyer1 = seeded
        .filter((o) => o.email === 'buyer1@example.com' && o.status === 'CONFIRMED')
        .map((o) => o.id);
      expect(confirmedOfBuyer1).toHaveLength(2);
      const filtered = await client.listOrders({ email: 'buyer1@example.com', status: ['CONFIRMED'] });
      expect(filtered.results.map((o) => o.id).sort()).toEqual(confirmedOfBuyer1.sort());
      const recent = await client.listOrders({
        createdAfter: new Date('2026-01-01T00:00:00Z'),
        createdBefore: '2026-01-01T10:00:00.000Z',
      });
      expect(recent.results.map((o) => o.friendlyId)).toEqual(['D3XZFWPP']);

      const byId = await client.getOrder(seeded[1]!.id);
      expect(byId).toMatchObject({ id: seeded[1]!.id, friendlyId: 'K8MNQR2T', status: 'SHIPPED' });
      const byFriendly = await client.getOrderByFriendlyId('K8MNQR2T');
      expect(byFriendly.id).toBe(byId.id);
    });

    it('getThankYou returns the seeded thank-you for a seeded donation', async () => {
      const seeded = [...sb.state.thankYous.values()][0]!;
      const ty = await client.getThankYou(seeded.id);
      expect(ty).toMatchObject({ id: seeded.id, contribution: { type: 'DONATION', id: seeded.contribution.id } });
      expect(sb.state.donations.has(seeded.contribution.id)).toBe(true);
    });
  });

  describe('promotions and fulfillments', () => {
    it('listPromotions filters by code; createPromotion creates one that is then listed', async () => {
      const launch = await client.listPromotions({ codes: ['LAUNCH10'] });
      expect(launch.results.map((p) => p.code)).toEqual(['LAUNCH10']);
      const created = await client.createPromotion({
        type: 'SHOP_SINGLE',
        code: 'DROP25',
        title: 'Giftdrop special',
        discount: { type: 'PERCENTAGE', percentage: 25 },
        limits: { maximumUse: 50, oneUsePerCustomer: true },
      });
      expect(created).toMatchObject({ code: 'DROP25', status: 'Live' });
      expect(created.id).toMatch(/^prm_/);
      const listed = await client.listPromotions({ codes: ['DROP25'] });
      expect(listed.results.map((p) => p.id)).toEqual([created.id]);
      const every = await client.listPromotions({ size: 100 });
      expect(every.results.map((p) => p.code).sort()).toEqual(['DROP25', 'LAUNCH10']);
    });

    it('createFulfillment, addShippingLabel and findFulfillmentIds work on a seeded order', async () => {
      const order = [...sb.state.orders.values()].find((o) => o.friendlyId === 'D3XZFWPP')!;
      const variantId = order.offers[0]!.variant.id;
      const { fulfillmentId } = await client.createFulfillment({
        orderId: order.id,
        items: [{ variantId, quantity: 1 }],
        shippingLabel: { trackingNumber: '9400100000000000000001', trackingCompany: 'USPS' },
      });
      expect(fulfillmentId).toMatch(/^ful_/);
      expect((await client.getOrder(order.id)).status).toBe('PARTIALLY_SHIPPED');

      const withLabel = await client.addShippingLabel(fulfillmentId, {
        trackingCompany: 'UPS',
        trackingNumber: '1Z999AA10123456784',
        items: [{ offerVariantId: variantId, quantity: 1 }],
      });
      expect(withLabel.id).toBe(fulfillmentId);
      expect(withLabel.shippingLabels?.map((l) => l.trackingCompany)).toEqual(['USPS', 'UPS']);

      const found = await client.findFulfillmentIds({
        friendlyIds: ['D3XZFWPP', 'K8MNQR2T'],
        fulfillmentService: 'FULFILLED_BY_CREATOR',
      });
      expect(found).toEqual([{ friendlyId: 'D3XZFWPP', fulfillmentService: 'FULFILLED_BY_CREATOR', fulfillmentId }]);
    });

    it('bulkAddShippingLabels round-trips (the request object as query parameters, as the spec says)', async () => {
      const fulfillmentId = [...sb.state.fulfillments.keys()][0]!;
      const result = await client.bulkAddShippingLabels({ fulfillmentId, trackingCompany: 'DHL' });
      expect(result.result.map((f) => f.id)).toEqual([fulfillmentId]);
    });
  });

  describe('webhook configurations', () => {
    it('create, list, get, update, delete; the secret matches the sandbox', async () => {
      const created = await client.createWebhook({ url: receiver.url, allowedTypes: ['ORDER_PLACED'] });
      expect(created.id).toMatch(/^wcon_/);
      expect(created).toMatchObject({ url: receiver.url, allowedTypes: ['ORDER_PLACED'] });
      expect((await client.listWebhooks()).results.map((w) => w.id)).toContain(created.id);
      expect(await client.getWebhook(created.id)).toMatchObject({ id: created.id, url: receiver.url });

      const updated = await client.updateWebhook(created.id, {
        url: `${receiver.url}?v=2`,
        allowedTypes: ['ORDER_PLACED', 'DONATION'],
      });
      expect(updated.allowedTypes).toEqual(['ORDER_PLACED', 'DONATION']);
      expect((await client.getWebhook(created.id)).url).toBe(`${receiver.url}?v=2`);

      await expect(client.deleteWebhook(created.id)).resolves.toBeUndefined();
      expect((await client.listWebhooks()).results.map((w) => w.id)).not.toContain(created.id);
      const gone = await apiError(client.getWebhook(created.id));
      expect(gone.status).toBe(404);
      expect(gone.code).toBe('WEBHOOK_CONFIGURATION_NOT_FOUND');
      expect(gone.context).toMatchObject({ webhookConfigurationId: created.id });

      expect((await client.getWebhookSecret()).secret).toBe(sb.webhookSecret);
    });
  });

  describe('gifting', () => {
    it('streaming start/end change the status the API reports', async () => {
      const started = await client.streamingStart({ services: [BROADCASTER] });
      expect(started.services?.[0]).toMatchObject({
        type: 'TWITCH',
        status: 'ONLINE',
        broadcasterLogin: BROADCASTER.broadcasterLogin,
      });
      expect((await client.getStreamingStatus()).services?.[0]?.status).toBe('ONLINE');
      const ended = await client.streamingEnd();
      expect(ended.services?.[0]?.status).toBe('OFFLINE');
      expect((await client.getStreamingStatus()).services?.[0]).toMatchObject({
        status: 'OFFLINE',
        broadcasterId: BROADCASTER.broadcasterId,
      });
      expect(() => sb.control.simulateGiftPurchase({ quantity: 1 })).toThrow(/SHOP_NOT_LIVE/);
    });

    it('getGiftingConfig returns the shop configuration', async () => {
      const config = await client.getGiftingConfig();
      expect(config).toMatchObject({
        enabled: true,
        entryTimeLimitSeconds: sb.state.giftingConfig.entryTimeLimitSeconds,
        platform: sb.state.giftingConfig.platform,
      });
    });

    it('a gift purchase: getGiftPurchase, getDraw, finishDraw gives each winner a redeemUri, signed webhooks are listed as events', async () => {
      const hook = await client.createWebhook({
        url: receiver.url,
        allowedTypes: ['GIFT_PURCHASE', 'GIFT_DRAW_STARTED', 'GIFT_DRAW_ENDED'],
      });
      await client.streamingStart({ services: [BROADCASTER] });
      const sim = sb.control.simulateGiftPurchase({
        productId: SEED_PRODUCT_IDS.tshirt,
        quantity: 3,
        username: 'big_spender',
      });
      const purchaseId = sim.purchase['id'] as string;
      const drawId = sim.draw['id'] as string;

      const purchase = await client.getGiftPurchase(purchaseId);
      expect(purchase).toMatchObject({
        id: purchaseId,
        quantity: 3,
        offer: { id: SEED_PRODUCT_IDS.tshirt },
        username: 'big_spender',
      });
      expect(purchase.gifts).toHaveLength(3);
      const open = await client.getDraw(drawId);
      expect(open).toMatchObject({ id: drawId, type: 'INITIAL', giveawayId: purchaseId, durationSeconds: 60 });
      expect(open.gifts.map((g) => g.id)).toEqual(purchase.gifts.map((g) => g.id));
      expect(open.gifts.every((g) => !g.winner)).toBe(true);

      const mismatch = await apiError(
        client.finishDraw(drawId, {
          participants: ['1', '2', '3', '4'].map((n) => ({ userId: `100${n}`, userName: `viewer_${n}` })),
        }),
      );
      expect(mismatch.code).toBe('GIVEAWAY_DRAW_FINISHED_DATA_MISMATCH');
      expect(mismatch.context).toMatchObject({ availableGifts: 3, participants: 4 });

      // fewer than the available gifts is a mismatch too: one participant per gift
      const fewer = await apiError(
        client.finishDraw(drawId, { participants: [{ userId: '2001', userName: 'lucky_one' }] }),
      );
      expect(fewer.code).toBe('GIVEAWAY_DRAW_FINISHED_DATA_MISMATCH');
      expect(fewer.context).toMatchObject({ availableGifts: 3, participants: 1 });

      const winners = [
        { userId: '2001', userName: 'lucky_one' },
        { userId: '2002', userName: 'lucky_two' },
        { userId: '2003', userName: 'lucky_three' },
      ];
      const finished = await client.finishDraw(drawId, { participants: winners });
      const won = finished.gifts.filter((g) => g.winner);
      expect(won.map((g) => g.winner?.username)).toEqual(['lucky_one', 'lucky_two', 'lucky_three']);
      for (const g of won) expect(g.winner?.redeemUri).toMatch(new RegExp(`^${sb.shopUrl}/gifts/${g.id}/redeem\\?`));
      expect((await client.getDraw(drawId)).gifts.filter((g) => g.winner).map((g) => g.winner?.redeemUri)).toEqual(
        won.map((g) => g.winner?.redeemUri),
      );

      const again = await apiError(client.finishDraw(drawId, { participants: winners.slice(0, 1) }));
      expect(again.code).toBe('GIVEAWAY_DRAW_ALREADY_FINISHED');
      expect(again.context).toMatchObject({ drawId });

      const delivered = await receiver.waitFor(
        (w) => w.json?.type === 'GIFT_DRAW_ENDED' && w.json?.data?.id === drawId,
      );
      const secret = (await client.getWebhookSecret()).secret;
      expect(verifyWebhookSignature(delivered.raw, delivered.headers, { webhookSecret: secret })).toEqual({
        ok: true,
        scheme: 'shop',
      });
      const ended = await client.listWebhookEvents({ type: 'GIFT_DRAW_ENDED', size: 50 });
      const record = ended.results.find((e) => e.id === delivered.json.id);
      expect(record).toMatchObject({ type: 'GIFT_DRAW_ENDED', webhookId: hook.id });
      const allEvents = await client.listWebhookEvents();
      expect(allEvents.results.map((e) => e.type)).toEqual(
        expect.arrayContaining(['GIFT_PURCHASE', 'GIFT_DRAW_STARTED', 'GIFT_DRAW_ENDED']),
      );
      await client.deleteWebhook(hook.id);
    });

    it('giveaway links: a created package is listed and fetched with the same links', async () => {
      const pkg = await client.createGiveawayLinks({ productId: SEED_PRODUCT_IDS.mug, number: 3 });
      expect(pkg.packageId).toMatch(/^gpg_/);
      expect(pkg.giveawayLinks).toHaveLength(3);
      for (const l of pkg.giveawayLinks) {
        expect(l.id).toMatch(/^gft_/);
        expect(l.link).toBe(`${sb.shopUrl}/gifts/${l.id}`);
        expect(l).toMatchObject({ productId: SEED_PRODUCT_IDS.mug, status: 'AVAILABLE' });
      }
      const packages = await client.listGiveawayPackages();
      expect(packages.packages.map((p) => p.packageId)).toContain(pkg.packageId);
      const fetched = await client.getGiveawayPackage(pkg.packageId);
      expect(fetched.giveawayLinks.map((l) => l.id)).toEqual(pkg.giveawayLinks.map((l) => l.id));
    });

    it('"outcome unknown": a finishDraw whose answer is lost is not re-sent, and getDraw shows the winners', async () => {
      await client.streamingStart({ services: [BROADCASTER] });
      const drawId = sb.control.simulateGiftPurchase({ quantity: 2 }).draw['id'] as string;
      const drawPath = `/open-api/v1.0/gifting/draw/${drawId}/finish`;
      sb.control.faults.dropAfterProcessing('finishDraw');
      const err = await client
        .finishDraw(drawId, {
          participants: [
            { userId: '3001', userName: 'quiet_fan' },
            { userId: '3002', userName: 'loud_fan' },
          ],
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(FourthwallOutcomeUnknownError);
      const finishes = sb.control.requests.filter((r) => r.method === 'PUT' && r.path === drawPath);
      expect(finishes.map((r) => r.status)).toEqual(['dropped']);
      const draw = await client.getDraw(drawId);
      expect(draw.gifts.map((g) => g.winner?.username)).toEqual(['quiet_fan', 'loud_fan']);
      expect(draw.gifts.every((g) => typeof g.winner?.redeemUri === 'string')).toBe(true);
    });
  });

  describe('documented error bodies', () => {
    it('not found: draw, product (offer), giveaway links offer, webhook configuration', async () => {
      const draw = await apiError(client.getDraw('gdr_doesnotexist'));
      expect([draw.status, draw.code, draw.operation]).toEqual([404, 'GIVEAWAY_DRAW_NOT_FOUND', 'getDraw']);
      expect(draw.context).toMatchObject({ drawId: 'gdr_doesnotexist' });
      const finish = await apiError(
        client.finishDraw('gdr_doesnotexist', { participants: [{ userId: '1', userName: 'a' }] }),
      );
      expect(finish.code).toBe('GIVEAWAY_DRAW_NOT_FOUND');
      const product = await apiError(client.getProduct(MISSING_UUID));
      expect([product.status, product.code]).toEqual([404, 'OFFER_NOT_FOUND_BY_SHOP_ID_AND_ID_ERROR']);
      const links = await apiError(client.createGiveawayLinks({ productId: MISSING_UUID, number: 1 }));
      expect([links.status, links.code]).toEqual([404, 'OFFER_NOT_FOUND_ERROR']);
      expect(links.context).toMatchObject({ offerId: MISSING_UUID });
      const hook = await apiError(client.deleteWebhook('wcon_doesnotexist'));
      expect([hook.status, hook.code]).toEqual([404, 'WEBHOOK_CONFIGURATION_NOT_FOUND']);
    });

    it('wrong Basic credentials are a FourthwallAuthError (401)', async () => {
      const bad = new FourthwallClient({
        apiUrl: sb.apiUrl,
        auth: { basic: { username: sb.username, password: 'not-the-password' } },
        ...FAST,
      });
      try {
        const err = await apiError(bad.getCurrentShop());
        expect(err).toBeInstanceOf(FourthwallAuthError);
        expect(err.status).toBe(401);
      } finally {
        await bad.close();
      }
    });
  });

  describe('the /open-api/v1/ prefix', () => {
    it('answers the same client under apiUrlV1', async () => {
      const v1 = new FourthwallClient({
        apiUrl: sb.apiUrlV1,
        auth: { basic: { username: sb.username, password: sb.password } },
        ...FAST,
      });
      try {
        const before = sb.control.requests.length;
        expect((await v1.getCurrentShop()).id).toBe(SEED_SHOP_ID);
        expect((await v1.getProduct(SEED_PRODUCT_IDS.mug)).name).toBe('Giftdrop Mug');
        const orders = await v1.listOrders({ status: ['SHIPPED'] });
        expect(orders.results.map((o) => o.friendlyId)).toEqual(['K8MNQR2T']);
        expect((await v1.getStreamingStatus()).services?.[0]?.type).toBe('TWITCH');
        const logged = sb.control.requests.slice(before);
        expect(logged).toHaveLength(4);
        for (const r of logged) {
          expect(r.path.startsWith('/open-api/v1/')).toBe(true);
          expect(r.status).toBe(200);
        }
      } finally {
        await v1.close();
      }
    });
  });

  describe('OAuth', () => {
    it('exchanges a code, calls with the Bearer token, refreshes once after the tokens expire', async () => {
      const code = sb.control.issueAuthCode(REDIRECT_URI);
      const oauth = { tokenUrl: sb.tokenUrl, clientId: sb.clientId, clientSecret: sb.clientSecret };
      const tokens = await exchangeAuthorizationCode({ ...oauth, redirectUri: REDIRECT_URI, code, clock: systemClock });
      expect(tokens.accessToken.length).toBeGreaterThan(10);
      expect(tokens.refreshToken).toBeDefined();
      expect(tokens.expiresAt).toBeGreaterThan(Date.now());
      await expect(
        exchangeAuthorizationCode({ ...oauth, redirectUri: REDIRECT_URI, code, clock: systemClock }),
      ).rejects.toMatchObject({
        constructor: FourthwallTokenError,
        oauthError: 'invalid_grant',
      });

      const rotated: OAuthTokens[] = [];
      const bearer = new FourthwallClient({
        apiUrl: sb.apiUrl,
        auth: { oauth: { ...oauth, ...tokens, onTokens: (t) => void rotated.push(t) } },
        ...FAST,
      });
      try {
        const tokenCalls = (): number =>
          sb.control.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/platform/token')).length;
        const before = tokenCalls();
        expect((await bearer.getCurrentShop()).id).toBe(SEED_SHOP_ID);
        expect(tokenCalls()).toBe(before);
        // A Basic-only operation refuses a Bearer token: proof the token, not Basic, was sent.
        const basicOnly = await apiError(bearer.getStreamingStatus());
        expect([basicOnly.status, basicOnly.code]).toEqual([403, 'FORBIDDEN']);

        sb.control.expireAccessTokens();
        const n = sb.control.requests.length;
        expect((await bearer.getProduct(SEED_PRODUCT_IDS.tshirt)).id).toBe(SEED_PRODUCT_IDS.tshirt);
        expect(tokenCalls()).toBe(before + 1);
        expect(rotated).toHaveLength(1);
        expect(rotated[0]!.accessToken).not.toBe(tokens.accessToken);
        const after = sb.control.requests
          .slice(n)
          .map((r) => `${r.method} ${r.path.replace(/^\/open-api\/v1\.0/, '')} ${r.status}`);
        expect(after).toEqual([
          `GET /products/${SEED_PRODUCT_IDS.tshirt} 401`,
          'POST /platform/token 200',
          `GET /products/${SEED_PRODUCT_IDS.tshirt} 200`,
        ]);
      } finally {
        await bearer.close();
      }
    });
  });

  describe('coverage of the operations table', () => {
    it('the coverage check names an operation whose requests are missing', () => {
      const log = sb.control.requests;
      expect(uncovered(log, shopPath).missing).toEqual([]);
      const withoutFeed = log.filter((r) => operationOf(r, shopPath) !== 'fetchProductFeed');
      expect(uncovered(withoutFeed, shopPath).missing).toEqual(['fetchProductFeed']);
      const getDrawFailing = log.filter((r) => operationOf(r, shopPath) !== 'getDraw' || r.status !== 200);
      expect(uncovered(getDrawFailing, shopPath).failing).toEqual(['getDraw']);
    });

    it('maps logged requests to the same operation the sandbox routed them to', () => {
      const mismatched = sb.control.requests
        .filter((r) => r.operation !== undefined)
        .map((r) => ({ path: r.path, sandbox: r.operation, client: operationOf(r, shopPath) }))
        .filter((m) => m.client === undefined || (SANDBOX_NAMES[m.client] ?? m.client) !== m.sandbox);
      expect(mismatched).toEqual([]);
    });

    it.each(OPERATION_LIST.map((o) => [o.key, o.method, o.path] as const))(
      '%s (%s %s) reached the sandbox and succeeded',
      (key) => {
        const { missing, failing } = uncovered(sb.control.requests, shopPath);
        expect(missing, `no request for ${key}`).not.toContain(key);
        expect(failing, `no 2xx answer for ${key}`).not.toContain(key);
      },
    );

    it('covers all 35 operations of the table', () => {
      expect(Object.keys(OPERATIONS)).toHaveLength(35);
    });
  });
});
