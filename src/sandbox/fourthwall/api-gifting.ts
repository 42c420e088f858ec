/**
 * Gifting-side routes of the Fourthwall sandbox API: donations, giveaway draws (through the
 * gifting engine), the gifting config, giveaway links, the streaming status, thank-yous and gift
 * purchases.
 *
 * Contract: synchronous handlers over the in-memory state and the gifting engine; bodies are
 * validated like the real service (400 `INVALID_REQUEST` naming the field); answers use
 * Fourthwall's shapes. Auth `A` = Basic or Bearer, `B` = Basic only (enforced by the server).
 *
 * Deliberately not here: orders, products, shop, promotions (api-shop.ts), fulfillment
 * (api-fulfillment.ts), webhook configuration (api-webhooks.ts).
 */
import { asObject, invalid, optionalString, pageOf, paginate, requireString } from './http.js';
import { arrayField, newestFirst, ok, type ApiDeps, type ApiRoute } from './api-kit.js';
import type { GiftingConfig, StreamingService } from './types.js';

/** Donations, draws, the gifting config and giveaway links. */
export function donationAndGiftingRoutes(d: ApiDeps): ApiRoute[] {
  const { state, gifting } = d;
  return [
    // Donations
    {
      operation: 'listDonations',
      method: 'GET',
      path: '/donations',
      auth: 'A',
      handler: ({ query }) => ok(paginate(newestFirst(state.donations.values()), pageOf(query))),
    },
    {
      operation: 'getDonation',
      method: 'GET',
      path: '/donations/:donationId',
      auth: 'A',
      handler: ({ params }) => ok(state.donation(params['donationId'] as string)),
    },
    // Gifting
    {
      operation: 'finishDraw',
      method: 'PUT',
      path: '/gifting/draw/:id/finish',
      auth: 'B',
      handler: ({ params, json }) => ok(gifting.finish(params['id'] as string, json())),
    },
    {
      operation: 'getDraw',
      method: 'GET',
      path: '/gifting/draw/:id',
      auth: 'B',
      handler: ({ params }) => ok(gifting.drawView(state.draw(params['id'] as string))),
    },
    {
      operation: 'getGiftingConfig',
      method: 'GET',
      path: '/gifting/config',
      auth: 'A',
      handler: () => ok(state.giftingConfig),
    },
    {
      operation: 'updateGiftingConfig',
      method: 'PUT',
      path: '/gifting/config',
      auth: 'A',
      handler: ({ json }) => {
        const body = asObject(json());
        const next: GiftingConfig = { ...state.giftingConfig };
        if (body['enabled'] !== undefined) {
          if (typeof body['enabled'] !== 'boolean') throw invalid('enabled', 'must be a boolean');
          next.enabled = body['enabled'];
        }
        if (body['entryTimeLimitSeconds'] !== undefined) {
          const s = body['entryTimeLimitSeconds'];
          if (typeof s !== 'number' || !Number.isInteger(s) || s < 20 || s > 180) {
            throw invalid('entryTimeLimitSeconds', 'must be an integer from 20 to 180');
          }
          next.entryTimeLimitSeconds = s;
        }
        if (body['platform'] !== undefined) {
          const p = body['platform'];
          if (p !== 'TWITCH' && p !== 'STREAMELEMENTS' && p !== 'OPEN_API' && p !== 'NOT_SELECTED') {
            throw invalid('platform', 'must be TWITCH, STREAMELEMENTS, OPEN_API or NOT_SELECTED');
          }
          next.platform = p;
        }
        if (body['shipping'] !== undefined) next.shipping = asObject(body['shipping'], 'shipping');
        if (body['products'] !== undefined) next.products = asObject(body['products'], 'products');
        state.giftingConfig = next;
        return ok(next);
      },
    },
    {
      operation: 'createGiveawayLinks',
      method: 'POST',
      path: '/giveaway-links',
      auth: 'A',
      handler: ({ json }) => {
        const pkg = gifting.createLinks(json());
        return ok({ packageId: pkg.packageId, giveawayLinks: pkg.giveawayLinks });
      },
    },
    {
      operation: 'listGiveawayPackages',
      method: 'GET',
      path: '/giveaway-links/packages',
      auth: 'A',
      handler: () =>
        ok({
          packages: newestFirst(state.packages.values()).map((p) => ({
            packageId: p.packageId,
            createdAt: p.createdAt,
          })),
        }),
    },
    {
      operation: 'getGiveawayPackage',
      method: 'GET',
      path: '/giveaway-links/packages/:packageId',
      auth: 'A',
      handler: ({ params }) => {
        const pkg = state.giveawayPackage(params['packageId'] as string);
        return ok({ packageId: pkg.packageId, giveawayLinks: pkg.giveawayLinks });
      },
    },
  ];
}

/** The streaming status, thank-yous and gift purchases. */
export function streamingRoutes(d: ApiDeps): ApiRoute[] {
  const { state, gifting } = d;
  const streamingStatus = (): Record<string, unknown> => ({
    shopId: state.shop.id,
    services: [{ ...state.streaming }],
  });

  return [
    // Streaming
    {
      operation: 'startStreaming',
      method: 'PUT',
      path: '/streaming/start',
      auth: 'B',
      handler: ({ json }) => {
        const body = asObject(json());
        const services = arrayField(body, 'services', 1);
        const parsed = services.map((s, i): StreamingService => {
          const o = asObject(s, `services[${i}]`);
          const type = requireString(o, 'type', `services[${i}].`);
          if (type !== 'TWITCH') throw invalid(`services[${i}].type`, 'must be TWITCH');
          const thumbnailUrl = optionalString(o, 'thumbnailUrl', `services[${i}].`);
          return {
            type: 'TWITCH',
            status: 'ONLINE',
            broadcasterId: requireString(o, 'broadcasterId', `services[${i}].`),
            broadcasterLogin: requireString(o, 'broadcasterLogin', `services[${i}].`),
            ...(thumbnailUrl !== undefined ? { thumbnailUrl } : {}),
          };
        });
        state.streaming = parsed[parsed.length - 1] as StreamingService;
        return ok(streamingStatus());
      },
    },
    {
      operation: 'endStreaming',
      method: 'PUT',
      path: '/streaming/end',
      auth: 'B',
      handler: ({ json }) => {
        const body = asObject(json());
        const services = arrayField(body, 'services', 1);
        services.forEach((s, i) => {
          if (s !== 'TWITCH') throw invalid(`services[${i}]`, 'must be TWITCH');
        });
        state.streaming = { ...state.streaming, status: 'OFFLINE' };
        return ok(streamingStatus());
      },
    },
    {
      operation: 'getStreamingStatus',
      method: 'GET',
      path: '/streaming',
      auth: 'B',
      handler: () => ok(streamingStatus()),
    },
    // Thank yous and gift purchases
    {
      operation: 'getThankYou',
      method: 'GET',
      path: '/thank-yous/:thankYouId',
      auth: 'A',
      handler: ({ params }) => ok(state.thankYou(params['thankYouId'] as string)),
    },
    {
      operation: 'getGiftPurchase',
      method: 'GET',
      path: '/gift-purchase/:giftPurchaseId',
      auth: 'B',
      handler: ({ params }) => ok(gifting.purchaseView(state.giftPurchase(params['giftPurchaseId'] as string))),
    },
  ];
}
