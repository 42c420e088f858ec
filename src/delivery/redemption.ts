/**
 * The delivery tracker's RedemptionPort on the Fourthwall client: the status of a draw's prizes
 * in ONE call per draw (`GET /gifting/draw/{id}` for gift draws, `GET /gift-purchase/{id}` for
 * gift purchases, `GET /giveaway-links/packages/{id}` for link giveaways, plus one per package
 * made later for a replacement, `source.extraPackageIds`), keyed by gift id:
 * REDEEMED is redeemed; CANCELLED (links and gifts), CHANGED_TO_PROMOTION and
 * CHANGED_TO_GIFT_CARD (gifts) are closures (the prize can no longer be redeemed); AVAILABLE and
 * any status Fourthwall adds later leave the prize waiting.
 * Calls go through the client's shared rate budget (FOURTHWALL_RATE_LIMIT). Never returns a link.
 */
import type { PrizeStatus, RedemptionPort } from './tracker.js';
import type { FourthwallClient } from '../fourthwall/index.js';
import type { DrawRecord, PrizeClosure } from '../giveaway/model.js';

type StatusApi = Pick<FourthwallClient, 'getDraw' | 'getGiftPurchase' | 'getGiveawayPackage'>;

const opt = (v: string | null | undefined) => (v ? v : undefined);

const CLOSURES: ReadonlySet<string> = new Set<PrizeClosure>([
  'CANCELLED',
  'CHANGED_TO_PROMOTION',
  'CHANGED_TO_GIFT_CARD',
]);

/** `{ closedAs }` (+ `closedAt`) when `status` says the prize can no longer be redeemed, else `{}`. */
function closure(status: string, at?: string | null): Pick<PrizeStatus, 'closedAs' | 'closedAt'> {
  if (!CLOSURES.has(status)) return {};
  const closedAt = opt(at);
  return { closedAs: status as PrizeClosure, ...(closedAt ? { closedAt } : {}) };
}

export function fourthwallRedemption(client: StatusApi): RedemptionPort {
  return {
    async statuses(record: DrawRecord): Promise<Map<string, PrizeStatus>> {
      const out = new Map<string, PrizeStatus>();
      const s = record.source;
      if (record.kind === 'link-giveaway') {
        // The draw's package, and those made later for replacements (one call each).
        for (const packageId of [s.packageId, ...(s.extraPackageIds ?? [])]) {
          if (!packageId) continue;
          for (const l of (await client.getGiveawayPackage(packageId)).giveawayLinks) {
            const redeemedAt = opt(l.redeemedAt);
            out.set(l.id, {
              redeemed: l.status === 'REDEEMED',
              ...(redeemedAt ? { redeemedAt } : {}),
              ...closure(l.status, l.cancelledAt),
            });
          }
        }
        return out;
      }
      const gifts =
        record.kind === 'gift-draw' && s.drawId
          ? (await client.getDraw(s.drawId)).gifts
          : s.giftPurchaseId
            ? (await client.getGiftPurchase(s.giftPurchaseId)).gifts
            : [];
      for (const g of gifts) {
        const orderFriendlyId = opt(g.orderFriendlyId);
        out.set(g.id, {
          redeemed: g.status === 'REDEEMED',
          ...(orderFriendlyId ? { orderFriendlyId } : {}),
          ...closure(g.status),
        });
      }
      return out;
    },
  };
}
