/**
 * Wire fixtures for the Fourthwall Open API, written from the published examples (ids, names and
 * shapes from the OpenAPI document and docs). Shared: the sandbox and service tests may reuse them.
 * Every export is a fresh deep copy factory or a frozen constant; mutate copies only.
 */

export const IDS = {
  draw: 'gdr_EdJvIXu3SEiXe_QkPavHSA',
  giveaway: 'giv_EdJvIXu3SEiXe_QkPavHSA',
  giveawayFriendly: 'D3XZFWPP',
  shop: 'sh_c689d374-22ca-43d3-8d29-9ef0805cc4cb',
  offer: '00aa4abd-5778-4199-8161-0b49b2f212e5',
  gift: 'gft_EdJvIXu3SEiXe_QkPavHSA',
  gift2: 'gft_Xq0b2Jc5TQWkq8hGm1n3pA',
  package: 'gpg_EdJvIXu3SEiXe_QkPavHSA',
  webhook: 'wcon_P-VkRfmJTBaC6_Tst22cew',
  event: 'weve_geAva6c1RAuyb9HQxbSlmA',
  donation: 'don_Kpcjx4HIQ1e4bTIOjX9CsA',
  thankYou: 'ty_EdJvIXu3SEiXe_QkPavHSA',
  webhookSecret: 'e3f93c7c-c92b-4b8f-a9b1-5b70e0891abc',
} as const;

const clone = <T>(v: T): T => structuredClone(v);

const money = (value: number) => ({ value, currency: 'USD' });

const offer = {
  id: IDS.offer,
  name: 'My t-shirt',
  slug: 'my-t-shirt',
  description: 'My t-shirt description',
  primaryImage: { id: 'img_1', url: 'https://cdn.example.com/t.png', width: 800, height: 800 },
};

/** A draw as GIFT_DRAW_STARTED / GET draw shows it before finishing: two available gifts. */
export function drawFixture() {
  return clone({
    id: IDS.draw,
    type: 'INITIAL',
    giveawayId: IDS.giveaway,
    giveawayFriendlyId: IDS.giveawayFriendly,
    shopId: IDS.shop,
    offer,
    amounts: { subtotal: money(40), total: money(43.2) },
    email: 'supporter@fourthwall.com',
    username: 'Johnny123',
    message: 'Sample message',
    gifts: [
      { id: IDS.gift, status: 'AVAILABLE' },
      { id: IDS.gift2, status: 'AVAILABLE' },
    ],
    createdAt: '2020-08-13T09:05:36.939Z',
    durationSeconds: 60,
  });
}

/** The same draw after finishDraw: each gift carries its winner and redeem link. */
export function finishedDrawFixture() {
  const d = drawFixture();
  return {
    ...d,
    gifts: [
      {
        id: IDS.gift,
        status: 'AVAILABLE',
        winner: {
          selectedAt: '2020-08-13T09:06:40.000Z',
          redeemUri: `https://my-shop.fourthwall.com/gifts/${IDS.gift}`,
          username: 'viewer_one',
        },
      },
      {
        id: IDS.gift2,
        status: 'AVAILABLE',
        winner: {
          selectedAt: '2020-08-13T09:06:40.000Z',
          redeemUri: `https://my-shop.fourthwall.com/gifts/${IDS.gift2}`,
          username: 'viewer_two',
        },
      },
    ],
  };
}

export function giftPurchaseFixture() {
  return clone({
    id: IDS.giveaway,
    friendlyId: IDS.giveawayFriendly,
    shopId: IDS.shop,
    offer,
    amounts: {
      subtotal: money(40),
      tax: money(3.2),
      total: money(43.2),
      profit: money(20),
      prepaidShipping: money(10),
    },
    email: 'supporter@fourthwall.com',
    username: 'Johnny123',
    message: 'Sample message',
    quantity: 2,
    gifts: [
      { id: IDS.gift, status: 'AVAILABLE' },
      {
        id: IDS.gift2,
        status: 'REDEEMED',
        orderId: IDS.offer,
        orderFriendlyId: 'D3XZFWPP',
        winner: { selectedAt: '2020-08-13T09:05:36.939Z', username: 'viewer_two' },
      },
    ],
    createdAt: '2020-08-13T09:05:36.939Z',
  });
}

export function giveawayPackageFixture(count = 2) {
  return clone({
    packageId: IDS.package,
    giveawayLinks: Array.from({ length: count }, (_, i) => ({
      status: 'AVAILABLE',
      id: i === 0 ? IDS.gift : `gft_link${i}`,
      link: `https://fourthwall.com/gifts/${i === 0 ? IDS.gift : `gft_link${i}`}`,
      productId: IDS.offer,
      createdAt: '2020-08-13T09:05:36.939Z',
    })),
  });
}

export function giveawayPackagesFixture() {
  return clone({ packages: [{ packageId: IDS.package, createdAt: '2020-08-13T09:05:36.939Z' }] });
}

export function streamingStatusFixture(status: 'ONLINE' | 'OFFLINE' = 'ONLINE') {
  return clone({
    shopId: IDS.shop,
    services: [
      {
        type: 'TWITCH',
        status,
        broadcasterId: '12345678',
        broadcasterLogin: 'streamer',
        thumbnailUrl: 'https://static-cdn.jtvnw.net/previews-ttv/live_user_streamer-{width}x{height}.jpg',
      },
    ],
  });
}

export function shopFixture() {
  return clone({ id: IDS.shop, name: 'My Shop', domain: 'my-shop.fourthwall.com', publicDomain: 'shop.example.com' });
}

export function contactInfoFixture() {
  return clone({
    shopEmail: 'shop@example.com',
    contactEmail: 'contact@example.com',
    transactionalEmail: 'orders@example.com',
    phone: '+1 555 0100',
    shopName: 'My Shop',
    domain: 'my-shop.fourthwall.com',
    location: {
      name: 'HQ',
      address1: '1 Main St',
      address2: '',
      city: 'Springfield',
      state: 'IL',
      zip: '62701',
      country: 'US',
    },
  });
}

export function webhookConfigFixture() {
  return clone({
    id: IDS.webhook,
    url: 'https://bot.example.com/webhooks/fourthwall',
    allowedTypes: ['GIFT_DRAW_STARTED', 'GIFT_DRAW_ENDED', 'GIFT_PURCHASE'],
    apiVersion: 'V1',
  });
}

export function donationFixture() {
  return clone({
    id: IDS.donation,
    shopId: IDS.shop,
    status: 'COMPLETED',
    email: 'supporter@fourthwall.com',
    username: 'Johnny123',
    message: 'Sample message',
    amounts: { total: money(10) },
    createdAt: '2020-08-13T09:05:36.939Z',
    updatedAt: '2020-08-13T09:05:36.939Z',
  });
}

export function orderFixture() {
  return clone({
    id: IDS.offer,
    shopId: IDS.shop,
    friendlyId: 'D3XZFWPP',
    checkoutId: 'ch_1',
    status: 'CONFIRMED',
    email: 'supporter@fourthwall.com',
    emailMarketingOptIn: false,
    username: 'Johnny123',
    message: 'Sample message',
    amounts: {
      subtotal: money(20),
      shipping: money(5),
      tax: money(2),
      donation: money(0),
      discount: money(0),
      giftCards: [{ code: 'GC-1', amountUsed: money(0) }],
      total: money(27),
    },
    offers: [
      {
        ...offer,
        variant: { id: 'var_1', name: 'M', sku: 'TS-M', unitPrice: money(20), quantity: 1, price: money(20) },
      },
    ],
    source: { type: 'GIVEAWAY_LINKS', giftId: IDS.gift },
    createdAt: '2020-08-13T09:05:36.939Z',
    updatedAt: '2020-08-13T09:05:36.939Z',
  });
}

export function productFixture() {
  return clone({
    id: IDS.offer,
    name: 'My t-shirt',
    slug: 'my-t-shirt',
    description: 'My t-shirt description',
    type: 'PHYSICAL',
    state: { type: 'AVAILABLE' },
    access: { type: 'PUBLIC' },
    images: [{ id: 'img_1', url: 'https://cdn.example.com/t.png', width: 800, height: 800 }],
    variants: [{ id: 'var_1', name: 'M', sku: 'TS-M', unitPrice: money(20), stock: { type: 'UNLIMITED' } }],
    createdAt: '2020-08-13T09:05:36.939Z',
    updatedAt: '2020-08-13T09:05:36.939Z',
  });
}

export function thankYouFixture() {
  return clone({
    id: IDS.thankYou,
    mediaUrl: `https://fourthwall.com/thankyou/${IDS.thankYou}`,
    contribution: {
      type: 'DONATION',
      id: IDS.donation,
      shopId: IDS.shop,
      supporter: { email: 'supporter@fourthwall.com', username: 'Johnny123', message: 'Thanks' },
    },
  });
}

export function promotionFixture() {
  return clone({
    type: 'SHOP_SINGLE',
    id: 'prm_EdJvIXu3SEiXe_QkPavHSA',
    title: 'Stream special',
    code: 'STREAM10',
    discount: { type: 'PERCENTAGE', percentage: 10 },
    status: 'Live',
    requirements: { minimumOrderValue: money(0) },
    usageCount: 0,
    limits: { maximumUsesNumber: 100, oneUsePerCustomer: true },
    appliesTo: { type: 'ENTIRE_ORDER' },
  });
}

export function fulfillmentFixture() {
  return clone({
    id: 'ful_1',
    shopId: IDS.shop,
    orderId: IDS.offer,
    status: 'OPEN',
    fulfillmentService: 'FULFILLED_BY_CREATOR',
    items: [{ variantId: '7d2b3c1e-0000-4000-8000-000000000001', quantity: 1 }],
    shippingLabels: [{ trackingCompany: 'USPS', trackingNumber: '9400', items: [] }],
    createdAt: '2020-08-13T09:05:36.939Z',
    updatedAt: '2020-08-13T09:05:36.939Z',
  });
}

export function giftingConfigFixture() {
  return clone({
    enabled: true,
    entryTimeLimitSeconds: 60,
    shipping: { type: 'WINNER_PAYS' },
    products: [],
    platform: 'OPEN_API',
  });
}

export function webhookEventRecordFixture() {
  return clone({
    id: IDS.event,
    type: 'GIFT_DRAW_STARTED',
    apiVersion: 'V1',
    createdAt: '2020-08-13T09:05:36.939Z',
    updatedAt: '2020-08-13T09:05:37.100Z',
    body: JSON.stringify(envelopeFixture('GIFT_DRAW_STARTED', drawFixture())),
    testMode: false,
    state: 'DELIVERED',
    url: 'https://bot.example.com/webhooks/fourthwall',
  });
}

/** A page object around `results`. */
export function pageOf<T>(results: T[], page = 0, size = 20) {
  return { results, total: results.length, page, size, totalPages: Math.max(1, Math.ceil(results.length / size)) };
}

/** A webhook delivery envelope. */
export function envelopeFixture(type: string, data: unknown, overrides: Record<string, unknown> = {}) {
  return clone({
    testMode: false,
    id: IDS.event,
    webhookId: IDS.webhook,
    shopId: IDS.shop,
    type,
    apiVersion: 'V1',
    createdAt: '2020-08-13T09:05:36.939Z',
    data,
    ...overrides,
  });
}

/** Error bodies exactly as the OpenAPI document's examples show them. */
export const ERROR_BODIES = Object.freeze({
  drawNotFound: { code: 'GIVEAWAY_DRAW_NOT_FOUND', drawId: IDS.draw },
  drawAlreadyFinished: { code: 'GIVEAWAY_DRAW_ALREADY_FINISHED', drawId: IDS.draw },
  drawDataMismatch: { code: 'GIVEAWAY_DRAW_FINISHED_DATA_MISMATCH', availableGifts: 1, participants: 3 },
  unsupportedPlatform: { code: 'GIVEAWAY_DRAW_UNSUPPORTED_PLATFORM_OPERATION', platform: 'TWITCH' },
  giftInvalidOffer: { code: 'GIFT_INVALID_OFFER', offerId: IDS.offer, shopId: IDS.shop },
  offerNotFound: { code: 'OFFER_NOT_FOUND_ERROR', offerId: IDS.offer },
  webhookNotFound: { code: 'WEBHOOK_CONFIGURATION_NOT_FOUND', webhookConfigurationId: IDS.webhook, shopId: IDS.shop },
  webhookIpNotAllowed: { code: 'WEBHOOK_URI_IP_NOT_ALLOWED' },
});

/** A Google Merchant Center RSS feed like `/.well-known/merchant-center/rss.xml`. */
export const PRODUCT_FEED_XML = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0">
  <channel>
    <title>My Shop</title>
    <link>https://shop.example.com</link>
    <description>Products of My Shop</description>
    <item>
      <g:id>${IDS.offer}_var_1</g:id>
      <g:title>My t-shirt &amp; more</g:title>
      <g:description>My t-shirt description</g:description>
      <g:link>https://shop.example.com/products/my-t-shirt</g:link>
      <g:image_link>https://cdn.example.com/t.png</g:image_link>
      <g:availability>in_stock</g:availability>
      <g:price>20.00 USD</g:price>
      <g:item_group_id>${IDS.offer}</g:item_group_id>
      <g:brand>My Shop</g:brand>
      <g:condition>new</g:condition>
    </item>
    <item>
      <guid>mug-1</guid>
      <title>Mug</title>
      <link>https://shop.example.com/products/mug</link>
      <g:price>12,50 eur</g:price>
      <g:availability>out_of_stock</g:availability>
    </item>
  </channel>
</rss>`;
