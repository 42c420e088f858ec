/**
 * Supporters of the sandbox shop, for tests and the demo: places paid orders (with the personal
 * data real orders carry: email, billing and shipping address), donations, membership purchases
 * and thank-yous, and switches promotions live or ended. Each changes the in-memory state and
 * emits the webhook Fourthwall would (ORDER_PLACED, DONATION, SUBSCRIPTION_PURCHASED,
 * THANK_YOU_SENT, PROMOTION_STATUS_CHANGED) in the published document's shapes.
 *
 * Products are named by id, slug or name (case-insensitive; first partial match); an unknown one
 * is a 404 `OFFER_NOT_FOUND...` like the API. Not part of the real service.
 */
import type { Clock } from '../../shared/clock.js';
import { ApiError, asObject, invalid, optionalString } from './http.js';
import type { IdFactory } from './ids.js';
import { orderOffer, usd } from './shapes.js';
import type { ShopState } from './state.js';
import type { Donation, Order, Product, Promotion, ThankYou } from './types.js';
import type { WebhookHub } from './webhooks.js';

export interface OrderInput {
  /** Product id, slug or name (default: the first available product). */
  product?: string;
  quantity?: number;
  username?: string;
  email?: string;
  message?: string;
}

export interface ShopSimControl {
  placeOrder(input?: OrderInput): Order;
  donate(input?: { amount?: number; username?: string; email?: string; message?: string }): Donation;
  subscribe(input?: {
    nickname?: string;
    email?: string;
    interval?: 'MONTHLY' | 'ANNUAL';
    amount?: number;
  }): Record<string, unknown>;
  /** A thank-you for the latest order (or `contribution`). */
  sendThankYou(input?: { contributionType?: 'ORDER' | 'DONATION'; contributionId?: string }): ThankYou;
  setPromotionStatus(promotionId: string, status: Promotion['status']): Promotion;
}

export class ShopSim implements ShopSimControl {
  private n = 0;

  constructor(private readonly o: { state: ShopState; hub: WebhookHub; ids: IdFactory; clock: Clock }) {}

  private iso(): string {
    return new Date(this.o.clock.now()).toISOString();
  }

  private find(query?: string): Product {
    const all = [...this.o.state.products.values()];
    if (!query) {
      const p = all.find((x) => x.state.type === 'AVAILABLE') ?? all[0];
      if (!p) throw new ApiError(404, 'OFFER_NOT_FOUND_BY_SHOP_ID_AND_ID_ERROR', { offerId: '' });
      return p;
    }
    const q = query.trim().toLowerCase();
    const p =
      all.find((x) => x.id.toLowerCase() === q || x.slug.toLowerCase() === q || x.name.toLowerCase() === q) ??
      all.find((x) => x.name.toLowerCase().includes(q) || x.slug.toLowerCase().includes(q));
    if (!p)
      throw new ApiError(404, 'OFFER_NOT_FOUND_BY_SHOP_ID_AND_ID_ERROR', {
        shopId: this.o.state.shop.id,
        offerId: query,
      });
    return p;
  }

  placeOrder(input: OrderInput = {}): Order {
    const product = this.find(input.product);
    const v = product.variants[0];
    if (!v) throw new ApiError(400, 'OFFER_NOT_BUYABLE', { offerId: product.id });
    const quantity = input.quantity ?? 1;
    if (!Number.isInteger(quantity) || quantity < 1 || quantity > 100)
      throw invalid('quantity', 'must be a whole number from 1 to 100');
    const n = ++this.n;
    const username = input.username ?? `supporter_${n}`;
    const address = {
      name: `Pat Doe ${n}`,
      address1: `${100 + n} Private Lane`,
      city: 'Springfield',
      state: 'IL',
      country: 'US',
      zip: '62701',
      phone: '+1 555 0142',
    };
    const subtotal = usd(v.unitPrice.value * quantity);
    const shipping = usd(5);
    const zero = usd(0);
    const iso = this.iso();
    const order: Order = {
      id: this.o.ids.uuid(),
      shopId: this.o.state.shop.id,
      friendlyId: this.o.ids.friendly(),
      checkoutId: this.o.ids.prefixed('ch'),
      status: 'CONFIRMED',
      email: input.email ?? `${username.replace(/[^A-Za-z0-9_.-]/g, '') || 'buyer'}@example.com`,
      emailMarketingOptIn: false,
      username,
      message: input.message ?? '',
      amounts: {
        subtotal,
        shipping,
        tax: zero,
        donation: zero,
        discount: zero,
        giftCards: [],
        total: usd(subtotal.value + shipping.value),
      },
      billing: { address },
      shipping: { address },
      offers: [orderOffer(product, v, quantity)],
      source: { type: 'ORDER' },
      createdAt: iso,
      updatedAt: iso,
    };
    this.o.state.orders.set(order.id, order);
    this.o.hub.emit('ORDER_PLACED', order);
    return order;
  }

  donate(input: { amount?: number; username?: string; email?: string; message?: string } = {}): Donation {
    const amount = input.amount ?? 5;
    if (!(amount > 0)) throw invalid('amount', 'must be a positive number');
    const iso = this.iso();
    const username = input.username ?? `donor_${++this.n}`;
    const donation: Donation = {
      id: this.o.ids.prefixed('don'),
      shopId: this.o.state.shop.id,
      status: 'COMPLETED',
      email: input.email ?? `${username}@example.com`,
      username,
      ...(input.message ? { message: input.message } : {}),
      amounts: { total: usd(amount) },
      createdAt: iso,
      updatedAt: iso,
    };
    this.o.state.donations.set(donation.id, donation);
    this.o.hub.emit('DONATION', donation);
    return donation;
  }

  subscribe(
    input: { nickname?: string; email?: string; interval?: 'MONTHLY' | 'ANNUAL'; amount?: number } = {},
  ): Record<string, unknown> {
    const nickname = input.nickname ?? `member_${++this.n}`;
    const supporter = {
      id: this.o.ids.prefixed('mem'),
      email: input.email ?? `${nickname}@example.com`,
      nickname,
      createdAt: this.iso(),
      subscription: {
        type: 'ACTIVE',
        variant: {
          id: this.o.ids.prefixed('mtv'),
          tierId: 'mt_supporters',
          interval: input.interval ?? 'MONTHLY',
          amount: usd(input.amount ?? 5),
        },
      },
    };
    this.o.hub.emit('SUBSCRIPTION_PURCHASED', supporter);
    return supporter;
  }

  sendThankYou(input: { contributionType?: 'ORDER' | 'DONATION'; contributionId?: string } = {}): ThankYou {
    const type = input.contributionType ?? 'ORDER';
    const pool = type === 'ORDER' ? [...this.o.state.orders.values()] : [...this.o.state.donations.values()];
    const target = input.contributionId ? pool.find((x) => x.id === input.contributionId) : pool[pool.length - 1];
    if (!target)
      throw new ApiError(404, type === 'ORDER' ? 'ORDER_ID_NOT_FOUND' : 'DONATION_NOT_FOUND', {
        id: input.contributionId ?? '',
      });
    const id = this.o.ids.prefixed('ty');
    const thankYou: ThankYou = {
      id,
      mediaUrl: `https://fourthwall.com/thankyou/${id}`,
      contribution: {
        type,
        id: target.id,
        shopId: this.o.state.shop.id,
        supporter: {
          email: target.email,
          ...(target.username ? { username: target.username } : {}),
          ...(target.message ? { message: target.message } : {}),
        },
      },
    };
    this.o.state.thankYous.set(id, thankYou);
    this.o.hub.emit('THANK_YOU_SENT', thankYou);
    return thankYou;
  }

  setPromotionStatus(promotionId: string, status: Promotion['status']): Promotion {
    const p = this.o.state.promotions.get(promotionId);
    if (!p) throw new ApiError(404, 'PROMOTION_NOT_FOUND', { promotionId });
    if (!['Live', 'Ended', 'Archived', 'AllUsed'].includes(status))
      throw invalid('status', 'must be Live, Ended, Archived or AllUsed');
    p.status = status;
    this.o.hub.emit('PROMOTION_STATUS_CHANGED', p);
    return p;
  }
}

const num = (b: Record<string, unknown>, f: string): number | undefined => {
  const v = b[f];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(f, 'must be a number');
  return v;
};

/** `/__sandbox/orders|donations|subscriptions|thank-yous|promotions/{id}/status`; undefined when not one of them. */
export function serveShopSim(
  sim: ShopSimControl,
  method: string,
  rest: string,
  json: () => unknown,
): { status: number; body: unknown } | undefined {
  if (method !== 'POST' && method !== 'PUT') return undefined;
  const body = () => asObject(json());
  const defined = <T extends Record<string, unknown>>(o: T) =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
  if (method === 'POST' && rest === '/orders') {
    const b = body();
    return {
      status: 201,
      body: sim.placeOrder(
        defined({
          product: optionalString(b, 'product'),
          quantity: num(b, 'quantity'),
          username: optionalString(b, 'username'),
          email: optionalString(b, 'email'),
          message: optionalString(b, 'message'),
        }),
      ),
    };
  }
  if (method === 'POST' && rest === '/donations') {
    const b = body();
    return {
      status: 201,
      body: sim.donate(
        defined({
          amount: num(b, 'amount'),
          username: optionalString(b, 'username'),
          email: optionalString(b, 'email'),
          message: optionalString(b, 'message'),
        }),
      ),
    };
  }
  if (method === 'POST' && rest === '/subscriptions') {
    const b = body();
    return {
      status: 201,
      body: sim.subscribe(
        defined({
          nickname: optionalString(b, 'nickname'),
          email: optionalString(b, 'email'),
          amount: num(b, 'amount'),
        }),
      ),
    };
  }
  if (method === 'POST' && rest === '/thank-yous') {
    const b = body();
    const t = optionalString(b, 'contributionType');
    if (t !== undefined && t !== 'ORDER' && t !== 'DONATION')
      throw invalid('contributionType', 'must be ORDER or DONATION');
    return {
      status: 201,
      body: sim.sendThankYou(defined({ contributionType: t, contributionId: optionalString(b, 'contributionId') })),
    };
  }
  const promo = /^\/promotions\/([^/]+)\/status$/.exec(rest);
  if (method === 'PUT' && promo) {
    const status = optionalString(body(), 'status');
    if (!status) throw invalid('status', 'is required');
    return { status: 200, body: sim.setPromotionStatus(decodeURIComponent(promo[1]!), status as Promotion['status']) };
  }
  return undefined;
}
