/**
 * Gifting of the Fourthwall sandbox: simulated gift purchases (`giv_...` with `gft_...` gifts)
 * and their draws (`gdr_...`), finishing a draw with one winner per participant, the service's
 * closing of an unfinished draw after durationSeconds + 60 s (no winners, then a `REDO` draw for
 * the same gifts), giveaway link packages (`gpg_...`), gift redemption on the shop site, and the
 * shop closing a prize not redeemed yet (`closePrize`: done in Fourthwall's own dashboard, no API
 * endpoint and no webhook).
 * Fires GIFT_PURCHASE, GIFT_DRAW_STARTED, GIFT_DRAW_ENDED (and ORDER_PLACED on redemption)
 * through the webhook hub. Draw expiry runs on the injected business Clock.
 * It does not pick winners: participants are the winners the caller chose, as on Fourthwall.
 */
import type { Clock, TimerHandle } from '../../shared/clock.js';
import type { Logger } from '../../logging/index.js';
import { ApiError, asObject, invalid, requireString } from './http.js';
import type { IdFactory } from './ids.js';
import { offerSummary, orderOffer, usd } from './shapes.js';
import type { ShopState } from './state.js';
import type {
  DrawState,
  Gift,
  GiftPurchase,
  GiftStatus,
  GiveawayLink,
  GiveawayPackage,
  Order,
  Product,
} from './types.js';
import type { WebhookHub } from './webhooks.js';

/** The statuses the shop can close a prize with (`Gifting.closePrize`). */
export type ClosedGiftStatus = Exclude<GiftStatus, 'AVAILABLE' | 'REDEEMED'>;

export const CLOSED_GIFT_STATUSES: readonly ClosedGiftStatus[] = [
  'CANCELLED',
  'CHANGED_TO_PROMOTION',
  'CHANGED_TO_GIFT_CARD',
];

export interface GiftPurchaseInput {
  /** Product (offer) id; default: the first seeded product. */
  productId?: string;
  /** Number of gifts bought (1-100). */
  quantity: number;
  /** The supporter's name; default `generous_viewer`. */
  username?: string;
  message?: string;
  email?: string;
  /** Entry window of the draw; default the sandbox's drawDurationSeconds. */
  durationSeconds?: number;
}

export interface GiftingOptions {
  state: ShopState;
  hub: WebhookHub;
  clock: Clock;
  ids: IdFactory;
  shopUrl: string;
  drawDurationSeconds: number;
  logger: Logger;
}

/** Seconds after a draw's entry window during which it may still be finished. */
export const DRAW_GRACE_SECONDS = 60;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function giftable(p: Product): boolean {
  return p.type === 'STANDARD' && p.state.type === 'AVAILABLE' && p.access.type !== 'ARCHIVED';
}

export class Gifting {
  private readonly timers = new Map<string, TimerHandle>();

  constructor(private readonly o: GiftingOptions) {}

  private now(): { ms: number; iso: string } {
    const ms = this.o.clock.now();
    return { ms, iso: new Date(ms).toISOString() };
  }

  /** A supporter buys `quantity` gifts while the shop is live: purchase + INITIAL draw + events. */
  simulatePurchase(input: GiftPurchaseInput): { purchase: Record<string, unknown>; draw: Record<string, unknown> } {
    const { state } = this.o;
    if (!state.live) {
      throw new ApiError(409, 'SHOP_NOT_LIVE', {
        reason:
          'gift offers can only be bought while the shop is live: start streaming first (PUT /streaming/start or control.setLive(true))',
      });
    }
    if (!state.giftingConfig.enabled)
      throw new ApiError(409, 'GIFTING_DISABLED', { reason: 'gifting config has enabled=false' });
    const quantity = input.quantity;
    if (!Number.isInteger(quantity) || quantity < 1 || quantity > 100)
      throw invalid('quantity', 'must be an integer from 1 to 100');
    const duration = input.durationSeconds ?? this.o.drawDurationSeconds;
    if (!Number.isInteger(duration) || duration < 1) throw invalid('durationSeconds', 'must be a positive integer');
    const productId = input.productId ?? [...state.products.keys()][0];
    const product = productId === undefined ? undefined : state.products.get(productId);
    if (!product) throw new ApiError(404, 'OFFER_NOT_FOUND_ERROR', { offerId: productId });
    if (!giftable(product))
      throw new ApiError(400, 'GIFT_INVALID_OFFER', { offerId: productId, shopId: state.shop.id });
    const price = product.variants[0]?.unitPrice.value ?? 0;
    const { iso } = this.now();
    const purchase: GiftPurchase = {
      id: this.o.ids.prefixed('giv'),
      friendlyId: this.o.ids.friendly(),
      shopId: state.shop.id,
      offer: offerSummary(product),
      amounts: {
        subtotal: usd(price * quantity),
        tax: usd(0),
        total: usd(price * quantity),
        profit: usd(price * quantity * 0.4),
        prepaidShipping: usd(5 * quantity),
      },
      email: input.email ?? 'supporter@example.com',
      username: input.username ?? 'generous_viewer',
      ...(input.message !== undefined ? { message: input.message } : {}),
      quantity,
      gifts: Array.from({ length: quantity }, () => ({ id: this.o.ids.prefixed('gft'), status: 'AVAILABLE' as const })),
      createdAt: iso,
    };
    state.giftPurchases.set(purchase.id, purchase);
    const draw = this.openDraw(
      purchase,
      'INITIAL',
      purchase.gifts.map((g) => g.id),
      duration,
    );
    this.o.hub.emit('GIFT_PURCHASE', this.purchaseView(purchase));
    this.o.hub.emit('GIFT_DRAW_STARTED', this.drawView(draw));
    this.o.logger.info({ giveawayId: purchase.id, drawId: draw.id, quantity }, 'sandbox gift purchase');
    return { purchase: this.purchaseView(purchase), draw: this.drawView(draw) };
  }

  private openDraw(
    purchase: GiftPurchase,
    type: DrawState['type'],
    giftIds: string[],
    durationSeconds: number,
  ): DrawState {
    const { ms, iso } = this.now();
    const draw: DrawState = {
      id: this.o.ids.prefixed('gdr'),
      type,
      giveawayId: purchase.id,
      giftIds,
      durationSeconds,
      createdAt: iso,
      createdAtMs: ms,
      status: 'OPEN',
    };
    this.o.state.draws.set(draw.id, draw);
    this.timers.set(
      draw.id,
      this.o.clock.setTimeout(
        () => {
          this.timers.delete(draw.id);
          if (draw.status === 'OPEN') this.expire(draw.id);
        },
        (durationSeconds + DRAW_GRACE_SECONDS) * 1000,
      ),
    );
    return draw;
  }

  /**
   * `PUT /gifting/draw/{id}/finish`: one winner per participant, onto AVAILABLE gifts; a count
   * that does not match the available gifts is 400 GIVEAWAY_DRAW_FINISHED_DATA_MISMATCH
   * `{availableGifts, participants}`, as Fourthwall answers.
   */
  finish(drawId: string, rawBody: unknown): Record<string, unknown> {
    const body = asObject(rawBody);
    const list = body['participants'];
    if (!Array.isArray(list)) throw invalid('participants', 'is required and must be an array');
    const participants = list.map((item, i) => {
      const p = asObject(item, `participants[${i}]`);
      const service = requireString(p, 'service', `participants[${i}].`);
      if (service !== 'TWITCH') throw invalid(`participants[${i}].service`, 'must be TWITCH');
      return {
        userId: requireString(p, 'userId', `participants[${i}].`),
        userName: requireString(p, 'userName', `participants[${i}].`),
      };
    });
    const draw = this.o.state.draw(drawId);
    if (draw.status !== 'OPEN') throw new ApiError(400, 'GIVEAWAY_DRAW_ALREADY_FINISHED', { drawId });
    const purchase = this.o.state.giftPurchase(draw.giveawayId);
    const available = this.drawGifts(draw, purchase).filter((g) => g.status === 'AVAILABLE' && !g.winner);
    // One participant per available gift, no more and no fewer (the real service's check).
    if (participants.length !== available.length) {
      throw new ApiError(400, 'GIVEAWAY_DRAW_FINISHED_DATA_MISMATCH', {
        availableGifts: available.length,
        participants: participants.length,
      });
    }
    const { iso } = this.now();
    participants.forEach((p, i) => {
      const gift = available[i] as Gift;
      const token = this.o.ids.secret().slice(0, 24);
      gift.winner = {
        selectedAt: iso,
        redeemUri: `${this.o.shopUrl}/gifts/${gift.id}/redeem?platform=TWITCH&token=${token}`,
        username: p.userName,
        userId: p.userId,
      };
    });
    this.close(draw, 'FINISHED');
    const view = this.drawView(draw);
    this.o.hub.emit('GIFT_DRAW_ENDED', view);
    return view;
  }

  /** Closes an open draw with no winners now and opens its REDO draw (if gifts remain). */
  expire(drawId: string): { ended: Record<string, unknown>; redo?: Record<string, unknown> } {
    const draw = this.o.state.draw(drawId);
    if (draw.status !== 'OPEN') throw new ApiError(400, 'GIVEAWAY_DRAW_ALREADY_FINISHED', { drawId });
    this.close(draw, 'EXPIRED');
    const ended = this.drawView(draw);
    this.o.hub.emit('GIFT_DRAW_ENDED', ended);
    const purchase = this.o.state.giftPurchase(draw.giveawayId);
    const remaining = this.drawGifts(draw, purchase).filter((g) => g.status === 'AVAILABLE' && !g.winner);
    this.o.logger.info({ drawId, remaining: remaining.length }, 'sandbox draw closed unfinished');
    if (remaining.length === 0) return { ended };
    const redo = this.openDraw(
      purchase,
      'REDO',
      remaining.map((g) => g.id),
      draw.durationSeconds,
    );
    const redoView = this.drawView(redo);
    this.o.hub.emit('GIFT_DRAW_STARTED', redoView);
    return { ended, redo: redoView };
  }

  private close(draw: DrawState, status: 'FINISHED' | 'EXPIRED'): void {
    draw.status = status;
    draw.finishedAt = this.now().iso;
    this.timers.get(draw.id)?.cancel();
    this.timers.delete(draw.id);
  }

  private drawGifts(draw: DrawState, purchase: GiftPurchase): Gift[] {
    return purchase.gifts.filter((g) => draw.giftIds.includes(g.id));
  }

  /** The draw as the API and GIFT_DRAW_* events carry it. */
  drawView(draw: DrawState): Record<string, unknown> {
    const purchase = this.o.state.giftPurchase(draw.giveawayId);
    return {
      id: draw.id,
      type: draw.type,
      giveawayId: purchase.id,
      giveawayFriendlyId: purchase.friendlyId,
      shopId: purchase.shopId,
      offer: purchase.offer,
      amounts: { subtotal: purchase.amounts.subtotal, total: purchase.amounts.total },
      email: purchase.email,
      ...(purchase.username !== undefined ? { username: purchase.username } : {}),
      ...(purchase.message !== undefined ? { message: purchase.message } : {}),
      gifts: this.drawGifts(draw, purchase).map((g) => ({
        id: g.id,
        status: g.status,
        ...(g.orderId ? { orderId: g.orderId, orderFriendlyId: g.orderFriendlyId } : {}),
        ...(g.winner
          ? {
              winner: {
                selectedAt: g.winner.selectedAt,
                redeemUri: g.winner.redeemUri,
                ...(g.winner.username !== undefined ? { username: g.winner.username } : {}),
              },
            }
          : {}),
      })),
      createdAt: draw.createdAt,
      durationSeconds: draw.durationSeconds,
    };
  }

  /** The gift purchase as `GET /gift-purchase/{id}` and GIFT_PURCHASE carry it (no redeem links). */
  purchaseView(p: GiftPurchase): Record<string, unknown> {
    const { gifts, ...rest } = p;
    return {
      ...rest,
      gifts: gifts.map((g) => ({
        status: g.status,
        id: g.id,
        ...(g.winner
          ? {
              winner: {
                selectedAt: g.winner.selectedAt,
                ...(g.winner.username !== undefined ? { username: g.winner.username } : {}),
              },
            }
          : {}),
      })),
    };
  }

  /** `POST /giveaway-links`: a package of `number` links for a product. */
  createLinks(rawBody: unknown): GiveawayPackage {
    const body = asObject(rawBody);
    const productId = body['productId'];
    if (typeof productId !== 'string' || !UUID_RE.test(productId)) throw invalid('productId', 'must be a product uuid');
    const n = body['number'];
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 100)
      throw invalid('number', 'must be an integer from 1 to 100');
    const product = this.o.state.products.get(productId);
    if (!product) throw new ApiError(404, 'OFFER_NOT_FOUND_ERROR', { offerId: productId });
    if (!giftable(product))
      throw new ApiError(400, 'GIFT_INVALID_OFFER', { offerId: productId, shopId: this.o.state.shop.id });
    const { iso } = this.now();
    const pkg: GiveawayPackage = {
      packageId: this.o.ids.prefixed('gpg'),
      createdAt: iso,
      giveawayLinks: Array.from({ length: n }, () => {
        const id = this.o.ids.prefixed('gft');
        return { status: 'AVAILABLE' as const, id, link: `${this.o.shopUrl}/gifts/${id}`, productId, createdAt: iso };
      }),
    };
    this.o.state.packages.set(pkg.packageId, pkg);
    return pkg;
  }

  /**
   * A winner redeems a gift on the shop site (a draw gift with a winner, or a giveaway link):
   * the gift becomes REDEEMED and an order is placed (ORDER_PLACED fires).
   */
  redeem(giftId: string): Order {
    const { iso } = this.now();
    for (const purchase of this.o.state.giftPurchases.values()) {
      const gift = purchase.gifts.find((g) => g.id === giftId);
      if (!gift) continue;
      if (!gift.winner || gift.status !== 'AVAILABLE')
        throw new ApiError(400, 'GIFT_NOT_REDEEMABLE', { giftId, status: gift.status });
      const order = this.placeOrder(purchase.offer.id, gift.winner.username ?? 'winner', iso, {
        type: 'TWITCH_GIFT_REDEMPTION',
        giftPurchaseId: purchase.id,
        giftId,
      });
      gift.status = 'REDEEMED';
      gift.orderId = order.id;
      gift.orderFriendlyId = order.friendlyId;
      return order;
    }
    for (const pkg of this.o.state.packages.values()) {
      const link = pkg.giveawayLinks.find((l) => l.id === giftId);
      if (!link) continue;
      if (link.status !== 'AVAILABLE') throw new ApiError(400, 'GIFT_NOT_REDEEMABLE', { giftId, status: link.status });
      const order = this.placeOrder(link.productId, 'link_winner', iso, { type: 'GIVEAWAY_LINKS', giftId });
      link.status = 'REDEEMED';
      link.redeemedAt = iso;
      return order;
    }
    throw new ApiError(404, 'GIFT_NOT_FOUND', { giftId });
  }

  /**
   * The shop closes a prize that was not redeemed (as in Fourthwall's dashboard; the API has no
   * endpoint for it and no webhook tells of it): a giveaway link becomes CANCELLED with
   * `cancelledAt`; a gift becomes `as` (CANCELLED, CHANGED_TO_PROMOTION or CHANGED_TO_GIFT_CARD).
   * Only an AVAILABLE prize can be closed (else 400 GIFT_NOT_REDEEMABLE, like a redemption).
   */
  closePrize(giftId: string, as: ClosedGiftStatus = 'CANCELLED'): Gift | GiveawayLink {
    for (const purchase of this.o.state.giftPurchases.values()) {
      const gift = purchase.gifts.find((g) => g.id === giftId);
      if (!gift) continue;
      if (gift.status !== 'AVAILABLE') throw new ApiError(400, 'GIFT_NOT_REDEEMABLE', { giftId, status: gift.status });
      gift.status = as;
      return gift;
    }
    for (const pkg of this.o.state.packages.values()) {
      const link = pkg.giveawayLinks.find((l) => l.id === giftId);
      if (!link) continue;
      if (link.status !== 'AVAILABLE') throw new ApiError(400, 'GIFT_NOT_REDEEMABLE', { giftId, status: link.status });
      if (as !== 'CANCELLED') throw invalid('status', 'a giveaway link can only be CANCELLED');
      link.status = 'CANCELLED';
      link.cancelledAt = this.now().iso;
      return link;
    }
    throw new ApiError(404, 'GIFT_NOT_FOUND', { giftId });
  }

  private placeOrder(productId: string, username: string, iso: string, source: Order['source']): Order {
    const product = this.o.state.product(productId);
    const v = product.variants[0];
    if (!v) throw new ApiError(400, 'GIFT_INVALID_OFFER', { offerId: productId, shopId: this.o.state.shop.id });
    const address = {
      name: username,
      address1: '1 Winner Way',
      city: 'Springfield',
      state: 'IL',
      country: 'US',
      zip: '62701',
    };
    const zero = usd(0);
    const order: Order = {
      id: this.o.ids.uuid(),
      shopId: this.o.state.shop.id,
      friendlyId: this.o.ids.friendly(),
      checkoutId: this.o.ids.prefixed('ch'),
      status: 'CONFIRMED',
      email: `${username}@example.com`,
      emailMarketingOptIn: false,
      username,
      message: '',
      amounts: {
        subtotal: zero,
        shipping: zero,
        tax: zero,
        donation: zero,
        discount: zero,
        giftCards: [],
        total: zero,
      },
      billing: { address },
      shipping: { address },
      offers: [orderOffer(product, v, 1)],
      source,
      createdAt: iso,
      updatedAt: iso,
    };
    this.o.state.orders.set(order.id, order);
    this.o.hub.emit('ORDER_PLACED', order);
    return order;
  }

  /** Cancels every draw timer (server shutdown). */
  shutdown(): void {
    for (const t of this.timers.values()) t.cancel();
    this.timers.clear();
  }
}
