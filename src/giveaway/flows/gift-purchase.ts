/**
 * The gift-purchase flow: a supporter buys gifts (GIFT_PURCHASE, with `giftFlow: purchase`), the
 * bot runs one entry window for them and gives each winner the gift's link on the shop's own
 * address. Phases: open, closing, awaiting-beacon, picking, [claim-window], finishing, then
 * settled or failed (the shop address unknown: `!giveaway retry`).
 *
 * Contract: `giftPurchase` opens one draw per purchase id; its window is the shop's gifting entry
 * window when Fourthwall reports one, else the configured one. `deliver` assigns the purchase's
 * gifts to the winners in order and builds `https://<shop domain>/gifts/<gift id>`; the shop
 * domain is read with up to four attempts. Nothing here can act twice at the shop, so a restart
 * simply delivers again. Does not: announce, settle or log links.
 */
import type { FlowContext } from '../context.js';
import type { Trigger } from '../draw-machine.js';
import { openDraw } from '../opening.js';
import type { GiftPurchaseInfo } from '../model.js';
import type { DrawSession } from '../session.js';
import { SHOP_BACKOFF, type DrawFlow } from './flow.js';
import { backoffDelay } from '../../shared/retry.js';

/** GIFT_PURCHASE: one entry window (the shop's, else the configured one) for its gifts. */
export async function giftPurchase(c: FlowContext, purchase: GiftPurchaseInfo, eventId?: string): Promise<void> {
  if (c.settings.giftFlow !== 'purchase') {
    c.logger.info({ giftPurchaseId: purchase.id }, 'gift purchase ignored: the bot runs the draw flow');
    return;
  }
  if (c.draws.isKnownLive(purchase.id)) return;
  let seconds = c.settings.purchaseEntrySeconds;
  if (c.shop.giftingEntrySeconds) {
    try {
      const fromShop = await c.shop.giftingEntrySeconds();
      if (fromShop !== undefined && Number.isFinite(fromShop) && fromShop > 0) seconds = Math.round(fromShop);
    } catch (err) {
      c.logger.warn({ err }, 'could not read the gifting entry window; using the configured one');
    }
  }
  const available = purchase.gifts.filter((g) => g.status === 'AVAILABLE' || !g.status);
  await openDraw(c, purchase.id, { windowMs: seconds * 1000 }, () => ({
    kind: 'gift-purchase',
    source: { giftPurchaseId: purchase.id, giveawayId: purchase.id, ...(eventId ? { eventId } : {}) },
    offer: { id: purchase.offer.id, name: purchase.offer.name },
    gifts: available.length,
    giftIds: available.map((g) => g.id),
    supporter: { username: purchase.username, message: purchase.message },
  }));
}

export const giftPurchaseFlow: DrawFlow = {
  kind: 'gift-purchase',
  phases: ['open', 'closing', 'awaiting-beacon', 'picking', 'claim-window', 'finishing', 'settled', 'failed'],
  claimWindowFits: () => true,
  deliver: giftLinks,
  resumeDelivery: (c, s) => {
    if (s.record.finishInFlight) c.logger.info({ drawId: s.id }, 'restored draw had a finish in flight: reconciling');
    return giftLinks(c, s);
  },
};

/** Each winner gets one of the purchase's gifts and its link on the shop's address. */
async function giftLinks(c: FlowContext, s: DrawSession): Promise<Trigger | undefined> {
  const r = s.record;
  let domain: string | undefined;
  for (let attempt = 0; attempt < 4 && domain === undefined; attempt++) {
    try {
      domain = normaliseDomain(await c.shop.shopDomain());
    } catch (err) {
      c.logger.warn({ drawId: s.id, err }, 'could not read the shop domain');
      if (attempt === 3 || !(await c.work.sleep(backoffDelay(SHOP_BACKOFF, attempt + 1)))) break;
    }
  }
  if (c.work.isStopped() && domain === undefined) return undefined;
  if (!domain)
    return { name: 'failed', reason: 'the shop address for the gift links is unknown (retry with !giveaway retry)' };
  const giftIds = r.giftIds ?? [];
  const taken = new Set(r.winners.map((w) => w.giftId).filter((x): x is string => !!x));
  const free = giftIds.filter((g) => !taken.has(g));
  for (const w of r.winners) {
    if (w.giftId) continue;
    const giftId = free.shift();
    if (giftId) w.giftId = giftId;
  }
  for (const w of r.winners) if (w.giftId && !w.redeemUrl) w.redeemUrl = `https://${domain}/gifts/${w.giftId}`;
  return { name: 'delivered' };
}

/** `https://shop.example/` or `shop.example` -> `shop.example`. */
function normaliseDomain(value: string): string | undefined {
  const d = value
    .trim()
    .replace(/^https?:\/\//i, '')
    .replace(/\/+$/, '');
  return d || undefined;
}
