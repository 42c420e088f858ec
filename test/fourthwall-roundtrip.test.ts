import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FourthwallClient, OPERATIONS, OPERATION_LIST, type OperationKey } from '../src/fourthwall/index.js';
import { sendJson, startTestServer, type TestServer } from './support/fourthwall-server.js';
import * as F from './support/fourthwall-fixtures.js';

interface Case {
  op: OperationKey;
  run: (c: FourthwallClient, base: string) => Promise<unknown>;
  path: string;
  query?: Record<string, string | string[]>;
  body?: unknown;
  response: unknown;
  /** Checks on the parsed result. */
  check?: (result: unknown) => void;
}

const participants = [
  { userId: '1001', userName: 'viewer_one' },
  { userId: '1002', userName: 'viewer_two', service: 'TWITCH' },
];
const fulfillmentInput = {
  orderId: F.IDS.offer,
  items: [{ variantId: '7d2b3c1e-0000-4000-8000-000000000001', quantity: 1 }],
  shippingLabel: { trackingNumber: '9400', trackingCompany: 'USPS' },
};
const labelInput = {
  trackingCompany: 'USPS',
  trackingNumber: '9401',
  items: [{ offerVariantId: '7d2b3c1e-0000-4000-8000-000000000001', quantity: 1 }],
};
const webhookInput = { url: 'https://bot.example.com/webhooks/fourthwall', allowedTypes: ['GIFT_DRAW_STARTED'] };

const CASES: Case[] = [
  {
    op: 'listDonations',
    run: (c) => c.listDonations({ page: 1, size: 5 }),
    path: '/donations',
    query: { page: '1', size: '5' },
    response: F.pageOf([F.donationFixture()]),
  },
  {
    op: 'getDonation',
    run: (c) => c.getDonation(F.IDS.donation),
    path: `/donations/${F.IDS.donation}`,
    response: F.donationFixture(),
  },
  {
    op: 'finishDraw',
    run: (c) => c.finishDraw(F.IDS.draw, { participants }),
    path: `/gifting/draw/${F.IDS.draw}/finish`,
    body: { participants: participants.map((p) => ({ service: 'TWITCH', userId: p.userId, userName: p.userName })) },
    response: F.finishedDrawFixture(),
    check: (r) =>
      expect((r as { gifts: { winner: { username: string } }[] }).gifts.map((g) => g.winner.username)).toEqual([
        'viewer_one',
        'viewer_two',
      ]),
  },
  { op: 'getDraw', run: (c) => c.getDraw(F.IDS.draw), path: `/gifting/draw/${F.IDS.draw}`, response: F.drawFixture() },
  {
    op: 'createGiveawayLinks',
    run: (c) => c.createGiveawayLinks({ productId: F.IDS.offer, number: 3 }),
    path: '/giveaway-links',
    body: { productId: F.IDS.offer, number: 3 },
    response: F.giveawayPackageFixture(3),
    check: (r) => expect((r as { giveawayLinks: unknown[] }).giveawayLinks).toHaveLength(3),
  },
  {
    op: 'listGiveawayPackages',
    run: (c) => c.listGiveawayPackages(),
    path: '/giveaway-links/packages',
    response: F.giveawayPackagesFixture(),
  },
  {
    op: 'getGiveawayPackage',
    run: (c) => c.getGiveawayPackage(F.IDS.package),
    path: `/giveaway-links/packages/${F.IDS.package}`,
    response: F.giveawayPackageFixture(1),
  },
  {
    op: 'listOrders',
    run: (c) =>
      c.listOrders({
        page: 0,
        size: 50,
        email: 'a+b@example.com',
        createdAfter: new Date('2026-01-01T00:00:00Z'),
        createdBefore: '2026-02-01T00:00:00.000Z',
        updatedAfter: '2026-01-05T00:00:00.000Z',
        updatedBefore: '2026-01-06T00:00:00.000Z',
        status: ['SHIPPED', 'DELIVERED', 'SHIPPED'],
      }),
    path: '/order',
    query: {
      page: '0',
      size: '50',
      email: 'a+b@example.com',
      'createdAt[gt]': '2026-01-01T00:00:00.000Z',
      'createdAt[lt]': '2026-02-01T00:00:00.000Z',
      'updatedAt[gt]': '2026-01-05T00:00:00.000Z',
      'updatedAt[lt]': '2026-01-06T00:00:00.000Z',
      status: ['SHIPPED', 'DELIVERED'],
    },
    response: F.pageOf([F.orderFixture()]),
  },
  { op: 'getOrder', run: (c) => c.getOrder(F.IDS.offer), path: `/order/${F.IDS.offer}`, response: F.orderFixture() },
  {
    op: 'getOrderByFriendlyId',
    run: (c) => c.getOrderByFriendlyId('D3XZFWPP'),
    path: '/order/by-friendly-id/D3XZFWPP',
    response: F.orderFixture(),
  },
  {
    op: 'updateProductAvailability',
    run: (c) => c.updateProductAvailability(F.IDS.offer, false),
    path: `/products/${F.IDS.offer}/availability`,
    body: { available: false },
    response: F.productFixture(),
  },
  {
    op: 'listProducts',
    run: (c) => c.listProducts({ page: 2, size: 100, search: 't shirt' }),
    path: '/products',
    query: { page: '2', size: '100', search: 't shirt' },
    response: F.pageOf([F.productFixture()]),
  },
  {
    op: 'getProduct',
    run: (c) => c.getProduct(F.IDS.offer),
    path: `/products/${F.IDS.offer}`,
    response: F.productFixture(),
  },
  { op: 'getCurrentShop', run: (c) => c.getCurrentShop(), path: '/shops/current', response: F.shopFixture() },
  {
    op: 'getShopContactInfo',
    run: (c) => c.getShopContactInfo(),
    path: '/shops/current/contact-info',
    response: F.contactInfoFixture(),
  },
  {
    op: 'streamingStart',
    run: (c) =>
      c.streamingStart({
        services: [
          {
            broadcasterId: '12345678',
            broadcasterLogin: 'streamer',
            thumbnailUrl: 'https://static-cdn.jtvnw.net/previews-ttv/live_user_streamer-{width}x{height}.jpg',
          },
        ],
      }),
    path: '/streaming/start',
    body: {
      services: [
        {
          type: 'TWITCH',
          broadcasterId: '12345678',
          broadcasterLogin: 'streamer',
          thumbnailUrl: 'https://static-cdn.jtvnw.net/previews-ttv/live_user_streamer-{width}x{height}.jpg',
        },
      ],
    },
    response: F.streamingStatusFixture('ONLINE'),
  },
  {
    op: 'streamingEnd',
    run: (c) => c.streamingEnd(),
    path: '/streaming/end',
    body: { services: ['TWITCH'] },
    response: F.streamingStatusFixture('OFFLINE'),
  },
  {
    op: 'getStreamingStatus',
    run: (c) => c.getStreamingStatus(),
    path: '/streaming',
    response: F.streamingStatusFixture(),
  },
  {
    op: 'getThankYou',
    run: (c) => c.getThankYou(F.IDS.thankYou),
    path: `/thank-yous/${F.IDS.thankYou}`,
    response: F.thankYouFixture(),
  },
  {
    op: 'getGiftPurchase',
    run: (c) => c.getGiftPurchase(F.IDS.giveaway),
    path: `/gift-purchase/${F.IDS.giveaway}`,
    response: F.giftPurchaseFixture(),
  },
  {
    op: 'createFulfillment',
    run: (c) => c.createFulfillment(fulfillmentInput),
    path: '/fulfillments',
    body: fulfillmentInput,
    response: { fulfillmentId: 'ful_1' },
  },
  {
    op: 'addShippingLabel',
    run: (c) => c.addShippingLabel('ful_1', labelInput),
    path: '/fulfillments/ful_1/shipping-labels',
    body: labelInput,
    response: F.fulfillmentFixture(),
  },
  {
    op: 'findFulfillmentIds',
    run: (c) => c.findFulfillmentIds({ friendlyIds: ['D3XZFWPP'], fulfillmentService: 'FULFILLED_BY_CREATOR' }),
    path: '/fulfillments/find-ids',
    body: { friendlyIds: ['D3XZFWPP'], fulfillmentService: 'FULFILLED_BY_CREATOR' },
    response: [{ friendlyId: 'D3XZFWPP', fulfillmentService: 'FULFILLED_BY_CREATOR', fulfillmentId: 'ful_1' }],
  },
  {
    op: 'bulkAddShippingLabels',
    run: (c) => c.bulkAddShippingLabels({ fulfillmentService: 'FULFILLED_BY_CREATOR', trackingCompany: 'USPS' }),
    path: '/fulfillments/shipping-labels/bulk',
    query: { fulfillmentService: 'FULFILLED_BY_CREATOR', trackingCompany: 'USPS' },
    response: { result: [F.fulfillmentFixture()] },
  },
  {
    op: 'listPromotions',
    run: (c) => c.listPromotions({ codes: ['STREAM10', 'VIP'] }),
    path: '/promotions',
    query: { codes: ['STREAM10', 'VIP'] },
    response: F.pageOf([F.promotionFixture()]),
  },
  {
    op: 'createPromotion',
    run: (c) => c.createPromotion({ type: 'SHOP_SINGLE', code: 'STREAM10', title: 'Stream special' }),
    path: '/promotions',
    body: { type: 'SHOP_SINGLE', code: 'STREAM10', title: 'Stream special' },
    response: F.promotionFixture(),
  },
  {
    op: 'getWebhook',
    run: (c) => c.getWebhook(F.IDS.webhook),
    path: `/webhooks/${F.IDS.webhook}`,
    response: F.webhookConfigFixture(),
  },
  {
    op: 'updateWebhook',
    run: (c) => c.updateWebhook(F.IDS.webhook, webhookInput),
    path: `/webhooks/${F.IDS.webhook}`,
    body: webhookInput,
    response: F.webhookConfigFixture(),
  },
  {
    op: 'deleteWebhook',
    run: (c) => c.deleteWebhook(F.IDS.webhook),
    path: `/webhooks/${F.IDS.webhook}`,
    response: undefined,
    check: (r) => expect(r).toBeUndefined(),
  },
  {
    op: 'listWebhooks',
    run: (c) => c.listWebhooks(),
    path: '/webhooks',
    response: F.pageOf([F.webhookConfigFixture()]),
  },
  {
    op: 'createWebhook',
    run: (c) => c.createWebhook(webhookInput),
    path: '/webhooks',
    body: webhookInput,
    response: F.webhookConfigFixture(),
  },
  {
    op: 'getWebhookSecret',
    run: (c) => c.getWebhookSecret(),
    path: '/webhooks/secret',
    response: { secret: F.IDS.webhookSecret },
  },
  {
    op: 'fetchProductFeed',
    run: (c, base) => c.fetchProductFeed(`${base}/shop-site`),
    path: '/shop-site/.well-known/merchant-center/rss.xml',
    response: F.PRODUCT_FEED_XML,
    check: (r) => expect((r as { items: unknown[] }).items).toHaveLength(2),
  },
  {
    op: 'getGiftingConfig',
    run: (c) => c.getGiftingConfig(),
    path: '/gifting/config',
    response: F.giftingConfigFixture(),
  },
  {
    op: 'listWebhookEvents',
    run: (c) => c.listWebhookEvents({ page: 0, size: 50, type: 'GIFT_DRAW_STARTED' }),
    path: '/webhook-events',
    query: { page: '0', size: '50', type: 'GIFT_DRAW_STARTED' },
    response: F.pageOf([F.webhookEventRecordFixture()]),
  },
];

const API_PREFIX = '/open-api/v1.0';

describe('FourthwallClient round trip of every operation', () => {
  let server: TestServer;
  let client: FourthwallClient;
  let current: Case | undefined;

  beforeAll(async () => {
    server = await startTestServer((req, res) => {
      const c = current!;
      if (c.op === 'fetchProductFeed') {
        res.writeHead(200, { 'content-type': 'application/rss+xml' });
        res.end(c.response as string);
        return;
      }
      if (c.response === undefined) {
        res.writeHead(200);
        res.end();
        return;
      }
      sendJson(res, OPERATIONS[c.op].successStatus, c.response);
    });
    client = new FourthwallClient({
      apiUrl: `${server.url}${API_PREFIX}/`,
      auth: { basic: { username: 'u', password: 'pw' } },
    });
  });

  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('covers every operation of the table', () => {
    expect(CASES.map((c) => c.op).sort()).toEqual(OPERATION_LIST.map((o) => o.key).sort());
  });

  it.each(CASES.map((c) => [c.op, c] as const))('%s', async (_name, c) => {
    current = c;
    const before = server.requests.length;
    const result = await c.run(client, server.url);
    expect(server.requests).toHaveLength(before + 1);
    const req = server.requests[before]!;
    const spec = OPERATIONS[c.op];
    expect(req.method).toBe(spec.method);
    expect(req.path).toBe(spec.base === 'api' ? `${API_PREFIX}${c.path}` : c.path);
    const query: Record<string, string | string[]> = {};
    for (const k of new Set(req.query.keys())) {
      const all = req.query.getAll(k);
      query[k] = all.length > 1 ? all : all[0]!;
    }
    expect(query).toEqual(c.query ?? {});
    if (c.body === undefined) expect(req.body).toBe('');
    else {
      expect(req.headers['content-type']).toBe('application/json');
      expect(JSON.parse(req.body)).toEqual(c.body);
    }
    expect(req.headers.authorization === undefined).toBe(spec.auth === 'none');
    if (c.check) c.check(result);
    else expect(result).toEqual(c.response);
  });
});
