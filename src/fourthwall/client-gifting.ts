/**
 * Gifting-side operations of the Fourthwall client: donations, giveaway draws and links, the
 * gifting config, the streaming status, thank-yous and gift purchases - one typed method per
 * operation of the operations table (operations.ts), each a single call through the transport core.
 *
 * Contract: every method keeps the transport's guarantees (client-transport.ts: limiter, deadline,
 * retries, zod-checked responses); `finishDraw` and `createGiveawayLinks` are NOT re-sent once they
 * may have reached the server. Inputs are mapped to Fourthwall's wire shapes here (defaults:
 * service / type `TWITCH`).
 *
 * Deliberately not here: orders, products, shop, fulfillment, promotions (client-commerce.ts),
 * webhook configuration and the product feed (client.ts).
 */
import { FourthwallTransport } from './client-transport.js';
import * as S from './schemas.js';

/** A Twitch participant / winner for finishDraw. */
export interface DrawParticipant {
  service?: 'TWITCH' | (string & {});
  userId: string;
  userName: string;
}

export interface StreamingStartService {
  type?: 'TWITCH' | (string & {});
  broadcasterId: string;
  broadcasterLogin: string;
  thumbnailUrl?: string;
}

export interface PageQuery {
  page?: number;
  size?: number;
}

/** FourthwallTransport plus the gifting-side operations (see the module header). */
export class FourthwallGiftingOperations extends FourthwallTransport {
  // -------------------------------------------------------------------------------------------
  // Donations
  // -------------------------------------------------------------------------------------------
  /** `GET /donations` */
  listDonations(q: PageQuery = {}): Promise<S.Page<S.Donation>> {
    return this.json('listDonations', { query: { page: q.page, size: q.size } }, S.DonationPageSchema);
  }

  /** `GET /donations/{donationId}` */
  getDonation(donationId: string): Promise<S.Donation> {
    return this.json('getDonation', { params: { donationId } }, S.DonationSchema);
  }

  // -------------------------------------------------------------------------------------------
  // Gifting
  // -------------------------------------------------------------------------------------------
  /** `PUT /gifting/draw/{id}/finish` - NOT retried once it may have been sent. */
  finishDraw(id: string, input: { participants: DrawParticipant[] }): Promise<S.Draw> {
    const participants = input.participants.map((p) => ({
      service: p.service ?? 'TWITCH',
      userId: p.userId,
      userName: p.userName,
    }));
    return this.json('finishDraw', { params: { id }, body: { participants } }, S.DrawSchema);
  }

  /** `GET /gifting/draw/{id}` */
  getDraw(id: string): Promise<S.Draw> {
    return this.json('getDraw', { params: { id } }, S.DrawSchema);
  }

  /** `POST /giveaway-links` - NOT retried once it may have been sent. */
  createGiveawayLinks(input: { productId: string; number: number }): Promise<S.GiveawayPackage> {
    return this.json(
      'createGiveawayLinks',
      { body: { productId: input.productId, number: input.number } },
      S.GiveawayPackageSchema,
    );
  }

  /** `GET /giveaway-links/packages` */
  listGiveawayPackages(): Promise<S.GiveawayPackages> {
    return this.json('listGiveawayPackages', {}, S.GiveawayPackagesSchema);
  }

  /** `GET /giveaway-links/packages/{packageId}` */
  getGiveawayPackage(packageId: string): Promise<S.GiveawayPackage> {
    return this.json('getGiveawayPackage', { params: { packageId } }, S.GiveawayPackageSchema);
  }

  /** `GET /gifting/config` (newer API; may 404 on older shops). */
  getGiftingConfig(): Promise<S.GiftingConfig> {
    return this.json('getGiftingConfig', {}, S.GiftingConfigSchema);
  }

  // -------------------------------------------------------------------------------------------
  // Streaming
  // -------------------------------------------------------------------------------------------
  /** `PUT /streaming/start` */
  streamingStart(input: { services: StreamingStartService[] }): Promise<S.StreamingStatus> {
    const services = input.services.map((s) => ({
      type: s.type ?? 'TWITCH',
      broadcasterId: s.broadcasterId,
      broadcasterLogin: s.broadcasterLogin,
      ...(s.thumbnailUrl ? { thumbnailUrl: s.thumbnailUrl } : {}),
    }));
    return this.json('streamingStart', { body: { services } }, S.StreamingStatusSchema);
  }

  /** `PUT /streaming/end` (default services: `['TWITCH']`). */
  streamingEnd(input: { services: string[] } = { services: ['TWITCH'] }): Promise<S.StreamingStatus> {
    return this.json('streamingEnd', { body: { services: input.services } }, S.StreamingStatusSchema);
  }

  /** `GET /streaming` */
  getStreamingStatus(): Promise<S.StreamingStatus> {
    return this.json('getStreamingStatus', {}, S.StreamingStatusSchema);
  }

  // -------------------------------------------------------------------------------------------
  // Thank-yous, gift purchases
  // -------------------------------------------------------------------------------------------
  /** `GET /thank-yous/{thankYouId}` */
  getThankYou(thankYouId: string): Promise<S.ThankYou> {
    return this.json('getThankYou', { params: { thankYouId } }, S.ThankYouSchema);
  }

  /** `GET /gift-purchase/{giftPurchaseId}` */
  getGiftPurchase(giftPurchaseId: string): Promise<S.GiftPurchase> {
    return this.json('getGiftPurchase', { params: { giftPurchaseId } }, S.GiftPurchaseSchema);
  }
}
