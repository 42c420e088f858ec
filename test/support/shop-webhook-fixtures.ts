/**
 * Webhook payloads of the types the shop features act on, written from Fourthwall's published
 * OpenAPI document (webhooks order.placed, donation, subscription.purchased, thank.you.sent,
 * gift.purchase, promotion.status.changed; schemas OrderV1, DonationV1, MembershipSupporterV1,
 * ThankYouV1, GiftPurchaseV1, PromotionV1 and their oneOf variants). For each type: `minimal`
 * holds only what the document marks required, `full` every documented property (with the
 * document's example values), and `variants` one payload per oneOf branch / enum value the bot
 * reads. Copied by hand, so tests never read the reference document itself.
 */
const money = (value: number, currency = 'USD') => ({ value, currency });
const SHOP = 'sh_c689d374-22ca-43d3-8d29-9ef0805cc4cb';
const address = { name: 'Joe Doe', address1: 'Main Street 1', city: 'San Francisco', state: 'CA', country: 'US' };
const fullAddress = { ...address, address2: 'Apt 2', zip: '12345', phone: '123456789' };
const image = {
  id: '00aa4abd-5778-4199-8161-0b49b2f212e5',
  url: 'https://fourthwall.com/image.png',
  width: 800,
  height: 600,
  transformedUrl: 'https://fourthwall.com/image.png',
};
const orderAmounts = {
  subtotal: money(25),
  shipping: money(5),
  tax: money(0),
  donation: money(0),
  discount: money(0),
  giftCards: [],
  total: money(30),
};
const offerOrder = {
  id: '00aa4abd-5778-4199-8161-0b49b2f212e5',
  name: 'My t-shirt',
  slug: 'my-t-shirt',
  description: 'My t-shirt description',
  variant: { id: '00aa4abd-5778-4199-8161-0b49b2f212e5', quantity: 1 },
};

const orderMinimal = {
  id: '00aa4abd-5778-4199-8161-0b49b2f212e5',
  shopId: SHOP,
  friendlyId: 'D3XZFWPP',
  checkoutId: 'ch_BV44UYrXQA2T_Xcf1288tw',
  status: 'CONFIRMED',
  email: 'supporter@fourthwall.com',
  emailMarketingOptIn: false,
  message: 'Sample message',
  amounts: orderAmounts,
  offers: [offerOrder],
  source: { type: 'ORDER' },
  createdAt: '2020-08-13T09:05:36.939Z',
  updatedAt: '2020-08-13T09:05:36.939Z',
};

const orderFull = {
  ...orderMinimal,
  promotionId: 'prm_EdJvIXu3SEiXe_QkPavHSA',
  username: 'Johnny123',
  amounts: { ...orderAmounts, giftCards: [{ code: 'GIFT-123', amountUsed: money(5) }] },
  billing: { address: fullAddress },
  shipping: { address: fullAddress },
  offers: [
    {
      ...offerOrder,
      primaryImage: image,
      variant: {
        id: '00aa4abd-5778-4199-8161-0b49b2f212e5',
        name: 'My t-shirt - Black, L',
        sku: 'WDEK-DRE200L',
        unitPrice: money(25),
        unitCost: money(10),
        compareAtPrice: money(30),
        attributes: { description: 'Black, L', color: { name: 'Black', swatch: '#000000' }, size: { name: 'L' } },
        quantity: 5,
        price: money(125),
        cost: money(50),
        weight: { value: 1, unit: 'kg' },
        dimensions: { length: 1, width: 1, height: 1, unit: 'cm' },
      },
    },
  ],
  trackingParams: {
    fbc: 'a',
    fbp: 'b',
    utm_source: 'twitch',
    utm_medium: 'chat',
    utm_campaign: 'stream',
    utm_content: 'c',
    utm_term: 't',
  },
  metadata: { streamId: 's1' },
};

const donationMinimal = {
  id: 'don_Kpcjx4HIQ1e4bTIOjX9CsA',
  shopId: SHOP,
  status: 'COMPLETED',
  email: 'supporter@fourthwall.com',
  amounts: { total: money(10) },
  createdAt: '2020-08-13 09:05:36.939000+00:00',
  updatedAt: '2020-08-13 09:05:36.939000+00:00',
};

const memberMinimal = {
  id: 'mem_1',
  email: 'supporter@fourthwall.com',
  nickname: 'Johnny123',
  createdAt: '2020-08-13 09:05:36.939000+00:00',
  subscription: { type: 'NONE' },
};
const tierVariant = { id: 'mtv_1', tierId: 'mt_1', interval: 'MONTHLY', amount: money(5) };

const supporter = { email: 'supporter@fourthwall.com' };
const thankYouMinimal = {
  id: 'ty_EdJvIXu3SEiXe_QkPavHSA',
  mediaUrl: 'https://fourthwall.com/thankyou/ty_EdJvIXu3SEiXe_QkPavHSA',
  contribution: { type: 'ORDER', id: '00aa4abd-5778-4199-8161-0b49b2f212e5', shopId: SHOP, supporter },
};

const giftAmounts = {
  subtotal: money(25),
  tax: money(0),
  total: money(25),
  profit: money(10),
  prepaidShipping: money(5),
};
const giftPurchaseMinimal = {
  id: 'giv_EdJvIXu3SEiXe_QkPavHSA',
  friendlyId: 'D3XZFWPP',
  shopId: SHOP,
  offer: {
    id: '00aa4abd-5778-4199-8161-0b49b2f212e5',
    name: 'My t-shirt',
    slug: 'my-t-shirt',
    description: 'My t-shirt description',
  },
  amounts: giftAmounts,
  email: 'supporter@fourthwall.com',
  quantity: 1,
  gifts: [{ status: 'AVAILABLE', id: 'gft_EdJvIXu3SEiXe_QkPavHSA' }],
  createdAt: '2020-08-13T09:05:36.939Z',
};
const winner = { selectedAt: '2020-08-13T09:05:36.939Z', username: 'winner1', email: 'winner@fourthwall.com' };

const shopSingle = {
  type: 'SHOP_SINGLE',
  id: 'prm_EdJvIXu3SEiXe_QkPavHSA',
  code: 'STREAM10',
  discount: { type: 'PERCENTAGE', percentage: 10, shipping: 'Excluded' },
  status: 'Live',
  requirements: {},
  usageCount: 0,
  appliesTo: { type: 'ENTIRE_ORDER' },
};

export interface WebhookFixtures {
  minimal: unknown;
  full: unknown;
  variants: Record<string, unknown>;
}

export const SHOP_WEBHOOK_FIXTURES: Record<string, WebhookFixtures> = {
  ORDER_PLACED: {
    minimal: orderMinimal,
    full: orderFull,
    variants: {
      ...Object.fromEntries(
        [
          'CONFIRMED',
          'PARTIALLY_IN_PRODUCTION',
          'IN_PRODUCTION',
          'PARTIALLY_SHIPPED',
          'SHIPPED',
          'PARTIALLY_DELIVERED',
          'DELIVERED',
          'CANCELLED',
          'COMPLETED',
        ].map((status) => [`status ${status}`, { ...orderMinimal, status }]),
      ),
      'source GIVEAWAY_LINKS': {
        ...orderMinimal,
        source: { type: 'GIVEAWAY_LINKS', giftId: 'gft_EdJvIXu3SEiXe_QkPavHSA' },
      },
      'source SAMPLES_ORDER': { ...orderMinimal, source: { type: 'SAMPLES_ORDER' } },
      'source TWITCH_GIFT_REDEMPTION': {
        ...orderMinimal,
        source: {
          type: 'TWITCH_GIFT_REDEMPTION',
          giftPurchaseId: 'giv_EdJvIXu3SEiXe_QkPavHSA',
          giftId: 'gft_EdJvIXu3SEiXe_QkPavHSA',
        },
      },
      'no offers': { ...orderMinimal, offers: [] },
    },
  },
  DONATION: {
    minimal: donationMinimal,
    full: { ...donationMinimal, username: 'Johnny123', message: 'Sample message' },
    variants: Object.fromEntries(
      ['OPEN', 'COMPLETED', 'ABANDONED', 'CANCELLED', 'FAILED'].map((status) => [
        `status ${status}`,
        { ...donationMinimal, status },
      ]),
    ),
  },
  SUBSCRIPTION_PURCHASED: {
    minimal: memberMinimal,
    full: { ...memberMinimal, subscription: { type: 'ACTIVE', variant: { ...tierVariant, offerId: 'off_1' } } },
    variants: {
      ACTIVE: { ...memberMinimal, subscription: { type: 'ACTIVE', variant: tierVariant } },
      CANCELLED: { ...memberMinimal, subscription: { type: 'CANCELLED', variant: tierVariant } },
      SUSPENDED: {
        ...memberMinimal,
        subscription: { type: 'SUSPENDED', variant: { ...tierVariant, interval: 'ANNUAL' } },
      },
      NONE: memberMinimal,
    },
  },
  THANK_YOU_SENT: {
    minimal: thankYouMinimal,
    full: {
      ...thankYouMinimal,
      contribution: {
        ...thankYouMinimal.contribution,
        supporter: { ...supporter, username: 'Johnny123', message: 'Sample message' },
      },
    },
    variants: Object.fromEntries(
      ['ORDER', 'DONATION', 'GIFT_PURCHASE', 'MEMBERSHIP_PAYMENT_CHARGE'].map((type) => [
        type,
        { ...thankYouMinimal, contribution: { ...thankYouMinimal.contribution, type } },
      ]),
    ),
  },
  GIFT_PURCHASE: {
    minimal: giftPurchaseMinimal,
    full: {
      ...giftPurchaseMinimal,
      offer: { ...giftPurchaseMinimal.offer, primaryImage: image },
      username: 'Johnny123',
      message: 'Sample message',
      quantity: 3,
      gifts: [
        { status: 'AVAILABLE', id: 'gft_a', winner },
        {
          status: 'REDEEMED',
          id: 'gft_b',
          orderId: '00aa4abd-5778-4199-8161-0b49b2f212e5',
          orderFriendlyId: 'D3XZFWPP',
          winner,
        },
        { status: 'CHANGED_TO_PROMOTION', id: 'gft_c', promotionId: 'prm_EdJvIXu3SEiXe_QkPavHSA', winner },
      ],
    },
    variants: {
      'gift CANCELLED': { ...giftPurchaseMinimal, gifts: [{ status: 'CANCELLED', id: 'gft_x' }] },
      'no gifts': { ...giftPurchaseMinimal, gifts: [] },
    },
  },
  PROMOTION_STATUS_CHANGED: {
    minimal: { type: 'SHOP_SINGLE' },
    full: {
      ...shopSingle,
      title: 'Stream launch',
      limits: { maximumUsesNumber: 100, oneUsePerCustomer: true },
      requirements: { minimumOrderValue: money(20) },
    },
    variants: {
      SHOP_SINGLE: shopSingle,
      SHOP_MULTI: {
        type: 'SHOP_MULTI',
        id: 'prm_multi',
        title: 'Multi',
        codes: [
          { id: 'c1', code: 'USED1', usageCount: 1, status: 'AllUsed' },
          { id: 'c2', code: 'MULTI20', usageCount: 0, status: 'Live' },
        ],
        discount: { type: 'FLAT_RATE', money: money(5), freeShipping: false },
        status: 'Live',
        requirements: {},
        usageCount: 1,
        appliesTo: {
          type: 'SELECTED_PRODUCTS',
          products: ['00aa4abd-5778-4199-8161-0b49b2f212e5'],
          oncePerOrder: true,
        },
      },
      MEMBERSHIPS_SINGLE: {
        type: 'MEMBERSHIPS_SINGLE',
        id: 'prm_mem',
        code: 'MEMBERS15',
        discount: { type: 'MEMBERSHIPS_PERCENTAGE', percentage: 15 },
        status: 'Ended',
        requirements: { newMembersOnly: true },
        usageCount: 0,
        subscriptionType: { type: 'MONTHLY' },
        tiers: { type: 'SELECTED', tiersIds: ['mt_1'] },
      },
      AUTO_APPLYING: {
        type: 'SHOP_AUTO_APPLYING',
        id: 'prm_auto',
        title: 'Auto',
        code: 'AUTO',
        discount: { type: 'FREE_SHIPPING' },
        status: 'Archived',
      },
    },
  },
};
