import { describe, expect, it } from 'vitest';
import {
  DrawSchema,
  ErrorBodySchema,
  FourthwallSchemaError,
  GiftPurchaseSchema,
  GiveawayPackageSchema,
  GiveawayPackagesSchema,
  OPERATIONS,
  OPERATION_LIST,
  ShopSchema,
  StreamingStatusSchema,
  WebhookConfigSchema,
  WebhookConfigPageSchema,
  buildPath,
  parseProductFeed,
  parseWebhookEvent,
  parseWire,
  pathParams,
  WebhookPayloadError,
  formatIssuePath,
} from '../src/fourthwall/index.js';
import * as S from '../src/fourthwall/schemas.js';
import * as F from './support/fourthwall-fixtures.js';

const call = { operation: 'getDraw', method: 'GET', path: '/gifting/draw/x' };

describe('fourthwall operations table', () => {
  it('lists the 33 operations of the spec once each, plus the two marked extras', () => {
    const seeds = OPERATION_LIST.filter((o) => !o.extra).map((o) => o.seed);
    expect(seeds).toEqual(Array.from({ length: 33 }, (_, i) => i + 1));
    expect(
      OPERATION_LIST.filter((o) => o.extra)
        .map((o) => o.key)
        .sort(),
    ).toEqual(['getGiftingConfig', 'listWebhookEvents']);
    const routes = OPERATION_LIST.map((o) => `${o.method} ${o.base}${o.path}`);
    expect(new Set(routes).size).toBe(routes.length);
  });

  it('marks the operations missing from the published document (22-24, 32, gifting config) unverified and everything else verified', () => {
    const unverified = OPERATION_LIST.filter((o) => !o.verified)
      .map((o) => o.key)
      .sort();
    expect(unverified).toEqual([
      'addShippingLabel',
      'bulkAddShippingLabels',
      'findFulfillmentIds',
      'getGiftingConfig',
      'getWebhookSecret',
    ]);
  });

  it('records the documented auth, idempotency and success status', () => {
    expect(OPERATIONS.finishDraw).toMatchObject({
      method: 'PUT',
      path: '/gifting/draw/{id}/finish',
      auth: 'B',
      idempotent: false,
    });
    expect(OPERATIONS.getGiftPurchase.auth).toBe('B');
    expect(OPERATIONS.fetchProductFeed).toMatchObject({ auth: 'none', base: 'shop' });
    const nonIdempotent = OPERATION_LIST.filter((o) => !o.idempotent)
      .map((o) => o.key)
      .sort();
    expect(nonIdempotent).toEqual(
      [
        'addShippingLabel',
        'bulkAddShippingLabels',
        'createFulfillment',
        'createGiveawayLinks',
        'createPromotion',
        'createWebhook',
        'finishDraw',
      ].sort(),
    );
    for (const o of OPERATION_LIST)
      if (o.method !== 'POST' && o.key !== 'finishDraw') expect(o.idempotent, o.key).toBe(true);
    expect(
      OPERATION_LIST.filter((o) => o.successStatus === 201)
        .map((o) => o.key)
        .sort(),
    ).toEqual(['addShippingLabel', 'bulkAddShippingLabels', 'createFulfillment'].sort());
  });

  it('fills path templates with encoded values and refuses missing ones', () => {
    expect(pathParams('/gifting/draw/{id}/finish')).toEqual(['id']);
    expect(buildPath('/order/by-friendly-id/{friendlyId}', { friendlyId: 'a/b c' })).toBe(
      '/order/by-friendly-id/a%2Fb%20c',
    );
    expect(() => buildPath('/gifting/draw/{id}', {})).toThrow(/"id"/);
    expect(() => buildPath('/gifting/draw/{id}', { id: '' })).toThrow(/"id"/);
  });
});

describe('fourthwall wire schemas', () => {
  it('parse every published-example fixture and keep unknown fields', () => {
    const draw = DrawSchema.parse({ ...F.drawFixture(), futureField: 1 });
    expect(draw.gifts.map((g) => g.id)).toEqual([F.IDS.gift, F.IDS.gift2]);
    expect((draw as Record<string, unknown>).futureField).toBe(1);
    expect(DrawSchema.parse(F.finishedDrawFixture()).gifts[0]!.winner?.redeemUri).toContain('/gifts/');
    expect(GiftPurchaseSchema.parse(F.giftPurchaseFixture()).quantity).toBe(2);
    expect(GiveawayPackageSchema.parse(F.giveawayPackageFixture(3)).giveawayLinks).toHaveLength(3);
    expect(GiveawayPackagesSchema.parse(F.giveawayPackagesFixture()).packages[0]!.packageId).toBe(F.IDS.package);
    expect(StreamingStatusSchema.parse(F.streamingStatusFixture()).services[0]!.status).toBe('ONLINE');
    expect(ShopSchema.parse(F.shopFixture()).publicDomain).toBe('shop.example.com');
    expect(WebhookConfigSchema.parse(F.webhookConfigFixture()).allowedTypes).toContain('GIFT_DRAW_STARTED');
    expect(WebhookConfigPageSchema.parse(F.pageOf([F.webhookConfigFixture()])).results).toHaveLength(1);
    expect(S.ShopContactInfoSchema.parse(F.contactInfoFixture()).shopName).toBe('My Shop');
    expect(S.DonationSchema.parse(F.donationFixture()).amounts?.total?.value).toBe(10);
    expect(S.OrderSchema.parse(F.orderFixture()).source?.giftId).toBe(F.IDS.gift);
    expect(S.ProductSchema.parse(F.productFixture()).variants?.[0]?.id).toBe('var_1');
    expect(S.ThankYouSchema.parse(F.thankYouFixture()).contribution?.type).toBe('DONATION');
    expect(S.PromotionSchema.parse(F.promotionFixture()).code).toBe('STREAM10');
    expect(S.FulfillmentSchema.parse(F.fulfillmentFixture()).status).toBe('OPEN');
    expect(S.GiftingConfigSchema.parse(F.giftingConfigFixture()).entryTimeLimitSeconds).toBe(60);
    expect(S.WebhookEventRecordSchema.parse(F.webhookEventRecordFixture()).type).toBe('GIFT_DRAW_STARTED');
    for (const body of Object.values(F.ERROR_BODIES)) expect(ErrorBodySchema.parse(body).code).toBe(body.code);
  });

  it('accepts null for optional fields (winner: null, username: null)', () => {
    const d = F.drawFixture();
    const parsed = DrawSchema.parse({ ...d, username: null, gifts: [{ ...d.gifts[0], winner: null }] });
    expect(parsed.gifts[0]!.winner).toBeNull();
  });

  it('names the operation and the exact bad field path on mismatch', () => {
    const d = F.drawFixture() as Record<string, unknown> & { gifts: Record<string, unknown>[] };
    delete d.gifts[0]!.id;
    let err: unknown;
    try {
      parseWire(DrawSchema, d, call);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FourthwallSchemaError);
    const se = err as FourthwallSchemaError;
    expect(se.field).toBe('gifts[0].id');
    expect(se.operation).toBe('getDraw');
    expect(se.message).toContain('gifts[0].id');
    expect(se.message).toContain('getDraw');

    const p = F.giveawayPackageFixture();
    (p.giveawayLinks[1] as Record<string, unknown>).status = 7;
    expect(() => parseWire(GiveawayPackageSchema, p, { ...call, operation: 'createGiveawayLinks' })).toThrow(
      /giveawayLinks\[1\]\.status/,
    );
    expect(() => parseWire(DrawSchema, { ...F.drawFixture(), durationSeconds: '60' }, call)).toThrow(/durationSeconds/);
    expect(() => parseWire(DrawSchema, { ...F.drawFixture(), offer: { id: 'x' } }, call)).toThrow(/offer\.name/);
  });

  it('does not put the offending value into the error message', () => {
    const secretish = 'https://my-shop.fourthwall.com/gifts/gft_secret';
    const d = F.drawFixture() as Record<string, unknown>;
    d.gifts = [{ id: 5, status: 'AVAILABLE', winner: { redeemUri: 42, username: secretish } }];
    try {
      parseWire(DrawSchema, d, call);
      expect.unreachable();
    } catch (e) {
      expect(String((e as Error).message)).not.toContain(secretish);
      expect((e as FourthwallSchemaError).issues.join(' ')).not.toContain(secretish);
    }
  });

  it('formats issue paths like JS accessors', () => {
    expect(formatIssuePath(['gifts', 0, 'winner', 'redeemUri'])).toBe('gifts[0].winner.redeemUri');
    expect(formatIssuePath([2, 'id'])).toBe('[2].id');
    expect(formatIssuePath([])).toBe('');
  });
});

describe('fourthwall webhook envelope', () => {
  it('types GIFT_DRAW_STARTED data as a draw', () => {
    const ev = parseWebhookEvent(Buffer.from(JSON.stringify(F.envelopeFixture('GIFT_DRAW_STARTED', F.drawFixture()))));
    expect(ev.known).toBe(true);
    if (ev.type === 'GIFT_DRAW_STARTED' && ev.known) {
      expect(ev.data.durationSeconds).toBe(60);
      expect(ev.data.offer.name).toBe('My t-shirt');
    } else expect.unreachable();
    expect(ev).toMatchObject({
      id: F.IDS.event,
      webhookId: F.IDS.webhook,
      shopId: F.IDS.shop,
      apiVersion: 'V1',
      testMode: false,
    });
  });

  it('types the other known events', () => {
    const cases: [string, unknown][] = [
      ['GIFT_PURCHASE', F.giftPurchaseFixture()],
      ['GIFT_DRAW_ENDED', F.finishedDrawFixture()],
      ['ORDER_PLACED', F.orderFixture()],
      ['ORDER_UPDATED', { order: F.orderFixture(), update: { type: 'STATUS' } }],
      ['DONATION', F.donationFixture()],
      ['THANK_YOU_SENT', F.thankYouFixture()],
      ['PRODUCT_CREATED', F.productFixture()],
      ['PROMOTION_STATUS_CHANGED', F.promotionFixture()],
      ['SUBSCRIPTION_PURCHASED', { id: 'sub_1', email: 'a@b.c', nickname: 'x' }],
      ['NEWSLETTER_SUBSCRIBED', { email: 'a@b.c' }],
    ];
    for (const [type, data] of cases) {
      const ev = parseWebhookEvent(JSON.stringify(F.envelopeFixture(type, data, { testMode: true })));
      expect(ev.type).toBe(type);
      expect(ev.known).toBe(true);
      expect(ev.testMode).toBe(true);
    }
  });

  it('accepts what the published document allows: any int64 durationSeconds, an untyped testMode, minimal unused payloads', () => {
    for (const d of ['0', '-45', '9223372036854775807', '2.5']) {
      const body = JSON.stringify(F.envelopeFixture('GIFT_DRAW_STARTED', F.drawFixture())).replace(
        '"durationSeconds":60',
        `"durationSeconds":${d}`,
      );
      const ev = parseWebhookEvent(body);
      expect(ev.known && ev.type === 'GIFT_DRAW_STARTED' ? ev.data.durationSeconds : undefined, d).toBe(Number(d));
    }
    const testModes: [unknown, boolean][] = [
      [true, true],
      ['true', true],
      [false, false],
      [null, false],
      ['yes', false],
      [{ x: 1 }, false],
    ];
    for (const [value, isTest] of testModes) {
      expect(
        parseWebhookEvent(JSON.stringify(F.envelopeFixture('DONATION', F.donationFixture(), { testMode: value })))
          .testMode,
        String(value),
      ).toBe(isTest);
    }
    // OrderUpdatedV1 requires nothing, OfferUpdatedV1 is {product: <page>}, PromotionV1 requires only `type`
    for (const [type, data] of [
      ['ORDER_UPDATED', {}],
      ['PRODUCT_UPDATED', { product: { results: [F.productFixture()] } }],
      ['PROMOTION_CREATED', { type: 'SHOP_SINGLE' }],
      ['PROMOTION_STATUS_CHANGED', { type: 'SHOP_MULTI' }],
    ] as const) {
      expect(parseWebhookEvent(JSON.stringify(F.envelopeFixture(type, data))).known, type).toBe(true);
    }
  });

  it('accepts unknown event types as opaque data', () => {
    const ev = parseWebhookEvent(
      JSON.stringify(F.envelopeFixture('CART_ABANDONED_24H', { cartId: 'c1', anything: [1, 2] })),
    );
    expect(ev).toMatchObject({ type: 'CART_ABANDONED_24H', known: false, data: { cartId: 'c1' } });
  });

  it('rejects bad JSON and bad envelopes with the field named', () => {
    const err = (raw: string) => {
      try {
        parseWebhookEvent(raw);
      } catch (e) {
        return e as WebhookPayloadError;
      }
      throw new Error('expected a throw');
    };
    expect(err('{not json').message).toMatch(/not valid JSON/);
    expect(err(JSON.stringify({ ...F.envelopeFixture('DONATION', {}), id: undefined })).field).toBe('id');
    expect(err(JSON.stringify({ ...F.envelopeFixture('DONATION', {}), type: 5 })).field).toBe('type');
    const noData = F.envelopeFixture('GIFT_PURCHASE', {}) as Record<string, unknown>;
    delete noData.data;
    expect(err(JSON.stringify(noData)).field).toBe('data');
    const badDraw = F.drawFixture() as Record<string, unknown>;
    delete badDraw.durationSeconds;
    const e = err(JSON.stringify(F.envelopeFixture('GIFT_DRAW_STARTED', badDraw)));
    expect(e.field).toBe('data.durationSeconds');
    expect(e.message).toContain('GIFT_DRAW_STARTED');
    expect(err('[1,2]')).toBeInstanceOf(WebhookPayloadError);
  });
});

describe('fourthwall product feed', () => {
  it('parses merchant-center RSS items with prefixed and plain tags', async () => {
    const feed = await parseProductFeed(F.PRODUCT_FEED_XML, {
      operation: 'fetchProductFeed',
      method: 'GET',
      path: '/x',
    });
    expect(feed.title).toBe('My Shop');
    expect(feed.items).toHaveLength(2);
    expect(feed.items[0]).toMatchObject({
      id: `${F.IDS.offer}_var_1`,
      title: 'My t-shirt & more',
      price: { value: 20, currency: 'USD' },
      availability: 'in_stock',
      itemGroupId: F.IDS.offer,
      imageLink: 'https://cdn.example.com/t.png',
    });
    expect(feed.items[1]).toMatchObject({ id: 'mug-1', title: 'Mug', price: { value: 12.5, currency: 'EUR' } });
  });

  it('names the bad field of a broken feed', async () => {
    const c = { operation: 'fetchProductFeed', method: 'GET', path: '/x' };
    await expect(parseProductFeed('<html><body>nope</body></html>', c)).rejects.toThrow(/rss\.channel/);
    await expect(
      parseProductFeed('<rss><channel><item><description>x</description></item></channel></rss>', c),
    ).rejects.toThrow(/items\[0\]\.id/);
  });
});
