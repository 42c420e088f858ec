/**
 * The in-memory state of one sandbox shop: everything the API reads and writes, seeded from
 * seed.ts. Plain maps, insertion-ordered; no behaviour beyond lookups that raise Fourthwall's
 * documented not-found errors. Tests read it through `FourthwallSandbox.state`.
 */
import { ApiError } from './http.js';
import type { SeedData } from './seed.js';
import type {
  ContactInfo,
  Donation,
  DrawState,
  Fulfillment,
  GiftingConfig,
  GiftPurchase,
  GiveawayPackage,
  Order,
  Product,
  Promotion,
  Shop,
  StreamingService,
  ThankYou,
} from './types.js';

export class ShopState {
  readonly shop: Shop;
  readonly contactInfo: ContactInfo;
  readonly products = new Map<string, Product>();
  readonly donations = new Map<string, Donation>();
  readonly orders = new Map<string, Order>();
  readonly thankYous = new Map<string, ThankYou>();
  readonly promotions = new Map<string, Promotion>();
  readonly fulfillments = new Map<string, Fulfillment>();
  readonly giftPurchases = new Map<string, GiftPurchase>();
  readonly draws = new Map<string, DrawState>();
  readonly packages = new Map<string, GiveawayPackage>();
  streaming: StreamingService = { type: 'TWITCH', status: 'OFFLINE' };
  giftingConfig: GiftingConfig = {
    enabled: true,
    entryTimeLimitSeconds: 60,
    shipping: { type: 'PREPAID' },
    products: { type: 'ALL' },
    platform: 'OPEN_API',
  };

  constructor(seed: SeedData) {
    this.shop = seed.shop;
    this.contactInfo = seed.contactInfo;
    for (const p of seed.products) this.products.set(p.id, p);
    for (const d of seed.donations) this.donations.set(d.id, d);
    for (const o of seed.orders) this.orders.set(o.id, o);
    for (const t of seed.thankYous) this.thankYous.set(t.id, t);
    for (const p of seed.promotions) this.promotions.set(p.id, p);
  }

  /** True when the shop's stream is marked started. */
  get live(): boolean {
    return this.streaming.status === 'ONLINE';
  }

  product(id: string): Product {
    const p = this.products.get(id);
    if (!p) throw new ApiError(404, 'OFFER_NOT_FOUND_BY_SHOP_ID_AND_ID_ERROR', { shopId: this.shop.id, offerId: id });
    return p;
  }

  order(id: string): Order {
    const o = this.orders.get(id);
    if (!o) throw new ApiError(404, 'ORDER_ID_NOT_FOUND', { id });
    return o;
  }

  orderByFriendlyId(friendlyId: string): Order {
    for (const o of this.orders.values()) if (o.friendlyId === friendlyId) return o;
    throw new ApiError(404, 'ORDER_FRIENDLY_ID_NOT_FOUND', { id: friendlyId });
  }

  donation(id: string): Donation {
    const d = this.donations.get(id);
    if (!d) throw new ApiError(404, 'DONATION_NOT_FOUND', { id });
    return d;
  }

  thankYou(id: string): ThankYou {
    const t = this.thankYous.get(id);
    if (!t) throw new ApiError(404, 'KUDOS_THANK_YOU_DOES_NOT_EXIST', { thankYouId: id });
    return t;
  }

  giftPurchase(id: string): GiftPurchase {
    const g = this.giftPurchases.get(id);
    if (!g) throw new ApiError(404, 'GIVEAWAY_NOT_FOUND', { shopId: this.shop.id, giveawayId: id });
    return g;
  }

  draw(id: string): DrawState {
    const d = this.draws.get(id);
    if (!d) throw new ApiError(404, 'GIVEAWAY_DRAW_NOT_FOUND', { drawId: id });
    return d;
  }

  giveawayPackage(id: string): GiveawayPackage {
    const p = this.packages.get(id);
    if (!p) throw new ApiError(404, 'GIVEAWAY_PACKAGE_NOT_FOUND', { packageId: id });
    return p;
  }
}
