/**
 * The delivery tracker's RedemptionPort on the Fourthwall client: the status of a draw's prizes
 * in ONE call per draw (`GET /gifting/draw/{id}` for gift draws, `GET /gift-purchase/{id}` for
 * gift purchases, `GET /giveaway-links/packages/{id}` for link giveaways), keyed by gift id.
 * Calls go through the client's shared rate budget (FOURTHWALL_RATE_LIMIT). Never returns a link.
 */
import type { PrizeStatus, RedemptionPort } from './tracker.js';
import type { FourthwallClient } from '../fourthwall/index.js';
import type { DrawRecord } from '../giveaway/model.js';

type StatusApi = Pick<FourthwallClient, 'getDraw' | 'getGiftPurchase' | 'getGiveawayPackage'>;

const opt = (v: string | null | undefined) => (v ? v : undefined);

export function fourthwallRedemption(client: StatusApi): RedemptionPort {
  return {
    async statuses(record: DrawRecord): Promise<Map<string, PrizeStatus>> {
      const out = new Map<string, PrizeStatus>();
      const s = record.source;
      if (record.kind === 'link-giveaway') {
        if (!s.packageId) return out;
        for (const l of (await client.getGiveawayPackage(s.packageId)).giveawayLinks) {
          const redeemedAt = opt(l.redeemedAt);
          out.set(l.id, { redeemed: l.status === 'REDEEMED', ...(redeemedAt ? { redeemedAt } : {}) });
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
        out.set(g.id, { redeemed: g.status === 'REDEEMED', ...(orderFriendlyId ? { orderFriendlyId } : {}) });
      }
      return out;
    },
  };
}
