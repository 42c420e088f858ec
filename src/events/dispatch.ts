/**
 * Where a Fourthwall event the intake passed goes (the EventIntake's `handle`): the gift draw and
 * gift purchase types to the giveaway engine, a placed order to prize delivery (a redeemed gift
 * or link), and then every event to the shop features (alerts, merch train, order feed,
 * promotions).
 *
 * Contract: the wire data is mapped to the domain's shapes (src/shop/shop-port.ts) before the
 * engine sees it; a rejection of the engine or of delivery rejects (the intake retries the event),
 * and the shop features never reject. Does not: dedupe or set events aside (event-intake.ts), or
 * know what a draw is beyond which call an event type is.
 */
import type { WebhookEvent } from '../fourthwall/index.js';
import type { Order } from '../fourthwall/schemas.js';
import type { GiftDrawInfo, GiftPurchaseInfo } from '../giveaway/model.js';
import { toDrawInfo, toPurchaseInfo } from '../shop/shop-port.js';

/** Who acts on the events (the giveaway engine, prize delivery, the shop features). */
export interface EventTargets {
  engine: {
    handleGiftDrawStarted(draw: GiftDrawInfo, eventId?: string): Promise<void>;
    handleGiftDrawEnded(draw: GiftDrawInfo): Promise<void>;
    handleGiftPurchase(purchase: GiftPurchaseInfo, eventId?: string): Promise<void>;
  };
  delivery: { onOrder(order: Pick<Order, 'friendlyId' | 'createdAt' | 'source'>): Promise<void> };
  shop: { handle(event: WebhookEvent): Promise<void> };
}

/** The EventIntake's `handle` over `targets`. */
export function eventDispatch(targets: EventTargets): (event: WebhookEvent) => Promise<void> {
  const { engine, delivery, shop } = targets;
  return async (event) => {
    if (!event.known) return; // never passed by the intake; narrows the event's type
    switch (event.type) {
      case 'GIFT_DRAW_STARTED':
        await engine.handleGiftDrawStarted(toDrawInfo(event.data), event.id);
        break;
      case 'GIFT_DRAW_ENDED':
        await engine.handleGiftDrawEnded(toDrawInfo(event.data));
        break;
      case 'GIFT_PURCHASE':
        await engine.handleGiftPurchase(toPurchaseInfo(event.data), event.id);
        break;
      case 'ORDER_PLACED':
        await delivery.onOrder(event.data); // a redeemed gift or link: its prize is delivered
        break;
    }
    await shop.handle(event); // alerts, merch train, order feed, promotions; never rejects
  };
}
