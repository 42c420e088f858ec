import { XMLParser } from 'fast-xml-parser';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SEED_PRODUCT_IDS, startFourthwallSandbox, type FourthwallSandbox } from '../src/sandbox/fourthwall/index.js';
import { basic, call, startReceiver } from './support/sandbox-fourthwall-helpers.js';

let sb: FourthwallSandbox;
beforeEach(async () => {
  sb = await startFourthwallSandbox({ deliveryRetry: { attempts: 1, delaysMs: [0], timeoutMs: 2000 } });
});
afterEach(async () => {
  await sb.close();
});

const ORDER_TWO_LINES = '7f3e2d1c-0b9a-4877-8665-544332211003';
const TEE_S = 'a1b2c3d4-0000-4000-8000-000000000001';
const MUG = 'a1b2c3d4-0000-4000-8000-000000000011';

type Case = [
  operation: string,
  method: string,
  path: string,
  body: ((v: string) => unknown) | undefined,
  status: number,
  code?: string,
];

/** One request per operation; bodies may depend on the prefix so repeated creates stay valid. */
const CASES: Case[] = [
  ['listDonations', 'GET', '/donations', undefined, 200],
  ['getDonation', 'GET', '/donations/don_Kpcjx4HIQ1e4bTIOjX9CsA', undefined, 200],
  ['finishDraw', 'PUT', '/gifting/draw/gdr_nope/finish', () => ({ participants: [] }), 404, 'GIVEAWAY_DRAW_NOT_FOUND'],
  ['getDraw', 'GET', '/gifting/draw/gdr_nope', undefined, 404, 'GIVEAWAY_DRAW_NOT_FOUND'],
  ['getGiftingConfig', 'GET', '/gifting/config', undefined, 200],
  ['updateGiftingConfig', 'PUT', '/gifting/config', () => ({ entryTimeLimitSeconds: 90 }), 200],
  ['createGiveawayLinks', 'POST', '/giveaway-links', () => ({ productId: SEED_PRODUCT_IDS.mug, number: 1 }), 200],
  ['listGiveawayPackages', 'GET', '/giveaway-links/packages', undefined, 200],
  ['getGiveawayPackage', 'GET', '/giveaway-links/packages/gpg_nope', undefined, 404, 'GIVEAWAY_PACKAGE_NOT_FOUND'],
  ['listOrders', 'GET', '/order', undefined, 200],
  ['getOrder', 'GET', `/order/${ORDER_TWO_LINES}`, undefined, 200],
  ['getOrderByFriendlyId', 'GET', '/order/by-friendly-id/D3XZFWPP', undefined, 200],
  [
    'updateProductAvailability',
    'PUT',
    `/products/${SEED_PRODUCT_IDS.mug}/availability`,
    () => ({ available: true }),
    200,
  ],
  ['listProducts', 'GET', '/products', undefined, 200],
  ['getProduct', 'GET', `/products/${SEED_PRODUCT_IDS.tshirt}`, undefined, 200],
  ['getCurrentShop', 'GET', '/shops/current', undefined, 200],
  ['getShopContactInfo', 'GET', '/shops/current/contact-info', undefined, 200],
  [
    'startStreaming',
    'PUT',
    '/streaming/start',
    () => ({ services: [{ type: 'TWITCH', broadcasterId: '1', broadcasterLogin: 'streamer' }] }),
    200,
  ],
  ['endStreaming', 'PUT', '/streaming/end', () => ({ services: ['TWITCH'] }), 200],
  ['getStreamingStatus', 'GET', '/streaming', undefined, 200],
  ['getThankYou', 'GET', '/thank-yous/ty_EdJvIXu3SEiXe_QkPavHSA', undefined, 200],
  ['getGiftPurchase', 'GET', '/gift-purchase/giv_nope', undefined, 404, 'GIVEAWAY_NOT_FOUND'],
  [
    'createFulfillment',
    'POST',
    '/fulfillments',
    (v) => ({
      orderId: ORDER_TWO_LINES,
      items: [{ variantId: v === 'v1.0' ? TEE_S : MUG, quantity: 1 }],
      shippingLabel: { trackingNumber: `1Z${v}`, trackingCompany: 'UPS' },
    }),
    201,
  ],
  [
    'addShippingLabel',
    'POST',
    '/fulfillments/ful_nope/shipping-labels',
    () => ({ trackingCompany: 'USPS', items: [] }),
    404,
    'FULFILLMENT_NOT_FOUND',
  ],
  [
    'findFulfillmentIds',
    'POST',
    '/fulfillments/find-ids',
    () => ({ friendlyIds: ['P4WXYZ7A'], fulfillmentService: 'FULFILLED_BY_CREATOR' }),
    200,
  ],
  [
    'bulkAddShippingLabels',
    'POST',
    '/fulfillments/shipping-labels/bulk',
    () => ({ labels: [{ fulfillmentId: 'ful_nope', trackingCompany: 'USPS', items: [] }] }),
    404,
    'FULFILLMENT_NOT_FOUND',
  ],
  ['listPromotions', 'GET', '/promotions', undefined, 200],
  [
    'createPromotion',
    'POST',
    '/promotions',
    (v) => ({
      type: 'SHOP_SINGLE',
      code: `GIFT-${v}`,
      discount: { type: 'PERCENTAGE', percentage: 15, shipping: 'Excluded' },
    }),
    200,
  ],
  ['listWebhooks', 'GET', '/webhooks', undefined, 200],
  [
    'createWebhook',
    'POST',
    '/webhooks',
    () => ({ url: 'https://bot.example.com/hook', allowedTypes: ['GIFT_PURCHASE'] }),
    200,
  ],
  ['getWebhookSecret', 'GET', '/webhooks/secret', undefined, 200],
  ['getWebhook', 'GET', '/webhooks/wcon_nope', undefined, 404, 'WEBHOOK_CONFIGURATION_NOT_FOUND'],
  [
    'updateWebhook',
    'PUT',
    '/webhooks/wcon_nope',
    () => ({ url: 'https://bot.example.com/x', allowedTypes: [] }),
    404,
    'WEBHOOK_CONFIGURATION_NOT_FOUND',
  ],
  ['deleteWebhook', 'DELETE', '/webhooks/wcon_nope', undefined, 404, 'WEBHOOK_CONFIGURATION_NOT_FOUND'],
  ['listWebhookEvents', 'GET', '/webhook-events', undefined, 200],
];

describe('Fourthwall sandbox routes', () => {
  it('answers every operation the same under /open-api/v1.0/ and /open-api/v1/', async () => {
    for (const [, base] of [
      ['v1.0', sb.apiUrl],
      ['v1', sb.apiUrlV1],
    ] as const) {
      expect(base).toMatch(/\/open-api\/v1(\.0)?$/);
    }
    for (const [v, base] of [
      ['v1.0', sb.apiUrl],
      ['v1', sb.apiUrlV1],
    ] as const) {
      for (const [op, method, path, body, status, code] of CASES) {
        const r = await call(`${base}${path}`, { method, headers: basic(sb), body: body?.(v) });
        expect(r.status, `${v} ${op} ${method} ${path}: ${r.text}`).toBe(status);
        if (code) expect(r.body.code, `${v} ${op}`).toBe(code);
      }
    }
    const seen = new Set(sb.control.requests.map((r) => r.operation).filter(Boolean));
    expect([...seen].sort()).toEqual(CASES.map((c) => c[0]).sort());
    expect(sb.control.requests.filter((r) => r.path.startsWith('/open-api/v1/')).length).toBe(CASES.length);
    // Feed (33) is public, no credentials.
    const feed = await fetch(`${sb.shopUrl}/.well-known/merchant-center/rss.xml`);
    expect(feed.status).toBe(200);
  });

  it('answers unknown paths 404 and wrong methods 405 with {code}', async () => {
    const unknown = await call(`${sb.apiUrl}/nothing-here`, { headers: basic(sb) });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('NOT_FOUND');
    const wrongMethod = await call(`${sb.apiUrl}/shops/current`, { method: 'DELETE', headers: basic(sb) });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.body.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('gives 400 on malformed JSON and names the bad field on invalid bodies', async () => {
    const malformed = await call(`${sb.apiUrl}/webhooks`, {
      method: 'POST',
      headers: { ...basic(sb), 'content-type': 'application/json' },
      body: '{"url": ',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('INVALID_REQUEST_BODY');
    expect(sb.control.requests.at(-1)?.status).toBe(400);

    const empty = await call(`${sb.apiUrl}/streaming/start`, { method: 'PUT', headers: basic(sb) });
    expect(empty.status).toBe(400);

    const cases: [string, string, unknown, string][] = [
      [
        'PUT',
        '/streaming/start',
        { services: [{ type: 'TWITCH', broadcasterLogin: 'x' }] },
        'services[0].broadcasterId',
      ],
      [
        'PUT',
        '/streaming/start',
        { services: [{ type: 'YOUTUBE', broadcasterId: '1', broadcasterLogin: 'x' }] },
        'services[0].type',
      ],
      ['PUT', '/streaming/start', { services: [] }, 'services'],
      ['PUT', '/streaming/end', { services: ['KICK'] }, 'services[0]'],
      ['PUT', `/products/${SEED_PRODUCT_IDS.mug}/availability`, { available: 'yes' }, 'available'],
      ['POST', '/giveaway-links', { productId: 'not-a-uuid', number: 1 }, 'productId'],
      ['POST', '/giveaway-links', { productId: SEED_PRODUCT_IDS.mug, number: 0 }, 'number'],
      ['POST', '/webhooks', { url: 'https://a.example.com/h', allowedTypes: ['NOT_A_TYPE'] }, 'allowedTypes[0]'],
      ['POST', '/webhooks', { url: 'https://a.example.com/h', types: ['GIFT_PURCHASE'] }, 'allowedTypes'],
      ['PUT', '/gifting/config', { entryTimeLimitSeconds: 5 }, 'entryTimeLimitSeconds'],
      ['POST', '/fulfillments', { orderId: ORDER_TWO_LINES, items: [], shippingLabel: {} }, 'items'],
    ];
    for (const [method, path, body, field] of cases) {
      const r = await call(`${sb.apiUrl}${path}`, { method, headers: basic(sb), body });
      expect(r.status, `${method} ${path}`).toBe(400);
      expect(r.body, `${method} ${path}`).toMatchObject({ code: 'VALIDATION_ERROR', field });
    }
    // Nothing changed.
    expect(sb.state.streaming.status).toBe('OFFLINE');
    expect(sb.state.packages.size).toBe(0);
  });

  it('pages lists and filters products, orders and promotions', async () => {
    const page = await call(`${sb.apiUrl}/products?page=1&size=2`, { headers: basic(sb) });
    expect(page.body).toMatchObject({ total: 5, page: 1, size: 2, totalPages: 3 });
    expect(page.body.results).toHaveLength(2);
    expect((await call(`${sb.apiUrl}/products?size=101`, { headers: basic(sb) })).status).toBe(400);

    const search = await call(`${sb.apiUrl}/products?search=hoodie`, { headers: basic(sb) });
    expect(search.body.results.map((p: { slug: string }) => p.slug)).toEqual(['giftdrop-hoodie']);
    const product = search.body.results[0];
    expect(product.id).toBe(SEED_PRODUCT_IDS.hoodie);
    expect(product.variants[0]).toMatchObject({
      unitPrice: { value: 45, currency: 'USD' },
      stock: { type: 'LIMITED', inStock: 8 },
    });
    expect(product.images[0].url).toContain(sb.shopUrl);

    const byStatus = await call(`${sb.apiUrl}/order?status=CONFIRMED`, { headers: basic(sb) });
    expect(byStatus.body.results.every((o: { status: string }) => o.status === 'CONFIRMED')).toBe(true);
    expect(byStatus.body.total).toBe(2);
    const byEmail = await call(`${sb.apiUrl}/order?email=buyer2@example.com`, { headers: basic(sb) });
    expect(byEmail.body.results.map((o: { friendlyId: string }) => o.friendlyId)).toEqual(['K8MNQR2T']);
    const byDate = await call(`${sb.apiUrl}/order?createdAt[gt]=2026-01-01T10:00:00Z`, { headers: basic(sb) });
    expect(byDate.body.results.map((o: { friendlyId: string }) => o.friendlyId)).toEqual(['P4WXYZ7A']);
    expect((await call(`${sb.apiUrl}/order?status=LOST`, { headers: basic(sb) })).status).toBe(400);

    const promo = await call(`${sb.apiUrl}/promotions?codes=launch10`, { headers: basic(sb) });
    expect(promo.body.results).toHaveLength(1);
    expect(promo.body.results[0]).toMatchObject({ code: 'LAUNCH10', status: 'Live', type: 'SHOP_SINGLE' });
  });

  it('documented error bodies for orders, donations, thank-yous, products and promotions', async () => {
    const expectError = async (
      path: string,
      status: number,
      body: Record<string, unknown>,
      method = 'GET',
      payload?: unknown,
    ) => {
      const r = await call(`${sb.apiUrl}${path}`, { method, headers: basic(sb), body: payload });
      expect(r.status, path).toBe(status);
      expect(r.body, path).toEqual(body);
    };
    await expectError('/order/00000000-0000-4000-8000-000000000000', 404, {
      code: 'ORDER_ID_NOT_FOUND',
      id: '00000000-0000-4000-8000-000000000000',
    });
    await expectError('/order/by-friendly-id/NOPE1234', 404, { code: 'ORDER_FRIENDLY_ID_NOT_FOUND', id: 'NOPE1234' });
    await expectError('/donations/don_x', 404, { code: 'DONATION_NOT_FOUND', id: 'don_x' });
    await expectError('/thank-yous/ty_x', 404, { code: 'KUDOS_THANK_YOU_DOES_NOT_EXIST', thankYouId: 'ty_x' });
    await expectError('/products/p_x', 404, {
      code: 'OFFER_NOT_FOUND_BY_SHOP_ID_AND_ID_ERROR',
      shopId: sb.state.shop.id,
      offerId: 'p_x',
    });
    await expectError('/promotions', 409, { code: 'PROMOTION_CODE_DUPLICATION', promotionCode: 'launch10' }, 'POST', {
      type: 'SHOP_SINGLE',
      code: 'launch10',
      discount: { type: 'FREE_SHIPPING' },
    });
    await expectError(
      '/giveaway-links',
      404,
      { code: 'OFFER_NOT_FOUND_ERROR', offerId: '00000000-0000-4000-8000-000000000000' },
      'POST',
      { productId: '00000000-0000-4000-8000-000000000000', number: 1 },
    );
    await expectError(
      '/giveaway-links',
      400,
      { code: 'GIFT_INVALID_OFFER', offerId: SEED_PRODUCT_IDS.giftCard, shopId: sb.state.shop.id },
      'POST',
      { productId: SEED_PRODUCT_IDS.giftCard, number: 1 },
    );
  });

  it('fulfillments move the order status and fire ORDER_UPDATED; labels and find-ids work', async () => {
    const rx = await startReceiver();
    try {
      await call(`${sb.apiUrl}/webhooks`, {
        method: 'POST',
        headers: basic(sb),
        body: { url: rx.url, allowedTypes: ['ORDER_UPDATED'] },
      });
      const first = await call(`${sb.apiUrl}/fulfillments`, {
        method: 'POST',
        headers: basic(sb),
        body: {
          orderId: ORDER_TWO_LINES,
          items: [{ variantId: TEE_S, quantity: 1 }],
          shippingLabel: { trackingNumber: '1', trackingCompany: 'UPS' },
        },
      });
      expect(first.status).toBe(201);
      expect(first.body.fulfillmentId).toMatch(/^ful_/);
      expect(sb.state.order(ORDER_TWO_LINES).status).toBe('PARTIALLY_SHIPPED');
      const evt = await rx.waitFor((w) => w.json.type === 'ORDER_UPDATED');
      expect(evt.json.data.order).toMatchObject({ id: ORDER_TWO_LINES, status: 'PARTIALLY_SHIPPED' });

      const tooMany = await call(`${sb.apiUrl}/fulfillments`, {
        method: 'POST',
        headers: basic(sb),
        body: {
          orderId: ORDER_TWO_LINES,
          items: [{ variantId: MUG, quantity: 2 }],
          shippingLabel: { trackingNumber: '2', trackingCompany: 'UPS' },
        },
      });
      expect(tooMany.body).toEqual({
        code: 'FULFILLMENT_VARIANT_QUANTITY_TO_HIGH',
        orderId: ORDER_TWO_LINES,
        variantId: MUG,
        fulfillable: 1,
        quantity: 2,
      });
      const wrongVariant = await call(`${sb.apiUrl}/fulfillments`, {
        method: 'POST',
        headers: basic(sb),
        body: {
          orderId: ORDER_TWO_LINES,
          items: [{ variantId: '00000000-0000-4000-8000-000000000000', quantity: 1 }],
          shippingLabel: { trackingNumber: '2', trackingCompany: 'UPS' },
        },
      });
      expect(wrongVariant.body.code).toBe('FULFILLMENT_ORDER_INVALID_VARIANT');

      const second = await call(`${sb.apiUrl}/fulfillments`, {
        method: 'POST',
        headers: basic(sb),
        body: {
          orderId: ORDER_TWO_LINES,
          items: [{ variantId: MUG, quantity: 1 }],
          shippingLabel: { trackingNumber: '3', trackingCompany: 'UPS' },
        },
      });
      expect(second.status).toBe(201);
      expect(sb.state.order(ORDER_TWO_LINES).status).toBe('SHIPPED');

      const label = await call(`${sb.apiUrl}/fulfillments/${second.body.fulfillmentId}/shipping-labels`, {
        method: 'POST',
        headers: basic(sb),
        body: { trackingCompany: 'USPS', trackingNumber: '9400', items: [{ offerVariantId: MUG, quantity: 1 }] },
      });
      expect(label.status).toBe(201);
      expect(label.body.shippingLabels).toHaveLength(2);

      const found = await call(`${sb.apiUrl}/fulfillments/find-ids`, {
        method: 'POST',
        headers: basic(sb),
        body: { friendlyIds: ['P4WXYZ7A'], fulfillmentService: 'FULFILLED_BY_CREATOR' },
      });
      expect(found.body.map((f: { fulfillmentId: string }) => f.fulfillmentId).sort()).toEqual(
        [first.body.fulfillmentId, second.body.fulfillmentId].sort(),
      );

      const bulk = await call(`${sb.apiUrl}/fulfillments/shipping-labels/bulk`, {
        method: 'POST',
        headers: basic(sb),
        body: { labels: [{ fulfillmentId: first.body.fulfillmentId, trackingCompany: 'DHL', items: [] }] },
      });
      expect(bulk.status).toBe(201);
      expect(bulk.body.result[0].shippingLabels.at(-1).trackingCompany).toBe('DHL');
    } finally {
      await rx.close();
    }
  });

  it('availability changes the product state and gifting refuses a sold-out product', async () => {
    const r = await call(`${sb.apiUrl}/products/${SEED_PRODUCT_IDS.stickers}/availability`, {
      method: 'PUT',
      headers: basic(sb),
      body: { available: false },
    });
    expect(r.body.state).toEqual({ type: 'SOLD_OUT' });
    const links = await call(`${sb.apiUrl}/giveaway-links`, {
      method: 'POST',
      headers: basic(sb),
      body: { productId: SEED_PRODUCT_IDS.stickers, number: 1 },
    });
    expect(links.body.code).toBe('GIFT_INVALID_OFFER');
  });

  it('serves the public RSS product feed with Google merchant fields', async () => {
    const res = await fetch(`${sb.shopUrl}/.well-known/merchant-center/rss.xml`);
    expect(res.headers.get('content-type')).toContain('xml');
    const doc = new XMLParser({ ignoreAttributes: false }).parse(await res.text());
    const items = doc.rss.channel.item as Record<string, unknown>[];
    expect(doc.rss['@_xmlns:g']).toBe('http://base.google.com/ns/1.0');
    expect(items.map((i) => i['g:id']).sort()).toEqual(
      [SEED_PRODUCT_IDS.tshirt, SEED_PRODUCT_IDS.mug, SEED_PRODUCT_IDS.hoodie, SEED_PRODUCT_IDS.stickers].sort(),
    );
    const tee = items.find((i) => i['g:id'] === SEED_PRODUCT_IDS.tshirt) as Record<string, unknown>;
    expect(tee).toMatchObject({ title: 'Giftdrop T-Shirt', 'g:price': '25.00 USD', 'g:availability': 'in_stock' });
    expect(tee['link']).toBe(`${sb.shopUrl}/products/giftdrop-t-shirt`);
    const img = await fetch(tee['g:image_link'] as string);
    expect(img.status).toBe(200);
  });

  it('product pictures are drawn products, one per product, not labels: an SVG with no text and nothing active', async () => {
    const seen = new Set<string>();
    for (const p of sb.state.products.values()) {
      const url = p.images[0]!.url;
      const res = await fetch(url);
      expect(res.status, url).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/svg+xml');
      const svg = await res.text();
      expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="400" height="400"/);
      expect(svg, url).not.toMatch(/<text|<script|<foreignObject|href=|on\w+=/i); // a picture, not a label; no link or script
      expect(svg.match(/<(path|rect|circle|ellipse) /g)?.length ?? 0, url).toBeGreaterThanOrEqual(5); // drawn shapes
      seen.add(svg);
    }
    expect(seen.size).toBe(sb.state.products.size);
  });

  it('reports the shop with id, name, domain and publicDomain', async () => {
    const shop = await call(`${sb.apiUrl}/shops/current`, { headers: basic(sb) });
    expect(shop.body).toEqual({
      id: sb.state.shop.id,
      name: 'Giftdrop Demo Shop',
      domain: new URL(sb.shopUrl).host,
      publicDomain: new URL(sb.shopUrl).host,
    });
    const secret = await call(`${sb.apiUrl}/webhooks/secret`, { headers: basic(sb) });
    expect(secret.body).toEqual({ secret: sb.webhookSecret });
  });
});
