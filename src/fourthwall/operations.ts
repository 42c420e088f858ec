/**
 * The one table of every Fourthwall Open API operation the client knows: the 33 of the user's
 * spec (numbered as there, incl. the public RSS product feed) plus two newer extras.
 *
 * Contract: `path` is relative to the API root (default `https://api.fourthwall.com/open-api/v1.0`),
 * except for `base: 'shop'` operations, which are relative to the shop's public URL. `auth` is the
 * spec's legend: 'A' = Basic or Bearer, 'B' = Basic only, 'none' = no credentials. `idempotent`
 * says whether the client may re-send the call after it may have reached the server;
 * `verified: false` marks operations missing from Fourthwall's published OpenAPI document
 * (`getWebhookSecret`, `getGiftingConfig`, the three shipping-label routes): callers must treat a
 * 404 (or any refusal) from them as "not available" and carry on. Where the spec does not state the scheme, createGiveawayLinks and getWebhook take
 * 'A' (the OpenAPI document accepts OAuth and Basic) and the unverified getWebhookSecret takes 'B'
 * (the safe choice for a secret; 'B' still falls back to a Bearer token when that is all there is).
 * The client, the sandbox and tests all read this table.
 *
 * Deliberately not here: request/response shapes (schemas.ts) and transport (client.ts).
 */

export type AuthRequirement = 'A' | 'B' | 'none';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface OperationSpec {
  /** Number in the user's spec (1-33); undefined for extras. */
  seed?: number;
  method: HttpMethod;
  /** Path template with `{param}` placeholders. */
  path: string;
  /** `api`: relative to the API root; `shop`: relative to the shop's public URL. */
  base: 'api' | 'shop';
  auth: AuthRequirement;
  /** Safe to re-send after it may have reached the server. */
  idempotent: boolean;
  /** Path confirmed by the published OpenAPI document / docs. */
  verified: boolean;
  /** Documented success status. */
  successStatus: number;
  /** Not in the user's spec (newer API). */
  extra?: boolean;
  summary: string;
}

const op = <T extends OperationSpec>(o: T): T => o;

/** Every operation, keyed by the client method name. */
export const OPERATIONS = {
  listDonations: op({
    seed: 1,
    method: 'GET',
    path: '/donations',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'List donations',
  }),
  getDonation: op({
    seed: 2,
    method: 'GET',
    path: '/donations/{donationId}',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Get donation by id',
  }),
  finishDraw: op({
    seed: 3,
    method: 'PUT',
    path: '/gifting/draw/{id}/finish',
    base: 'api',
    auth: 'B',
    idempotent: false,
    verified: true,
    successStatus: 200,
    summary: 'Finish a giveaway draw with its winners (a PUT, but not safely repeatable)',
  }),
  getDraw: op({
    seed: 4,
    method: 'GET',
    path: '/gifting/draw/{id}',
    base: 'api',
    auth: 'B',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Get a giveaway draw',
  }),
  createGiveawayLinks: op({
    seed: 5,
    method: 'POST',
    path: '/giveaway-links',
    base: 'api',
    auth: 'A',
    idempotent: false,
    verified: true,
    successStatus: 200,
    summary: 'Create a package of giveaway links',
  }),
  listGiveawayPackages: op({
    seed: 6,
    method: 'GET',
    path: '/giveaway-links/packages',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'List giveaway packages',
  }),
  getGiveawayPackage: op({
    seed: 7,
    method: 'GET',
    path: '/giveaway-links/packages/{packageId}',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Get the giveaway links of a package',
  }),
  listOrders: op({
    seed: 8,
    method: 'GET',
    path: '/order',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'List orders',
  }),
  getOrder: op({
    seed: 9,
    method: 'GET',
    path: '/order/{orderId}',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Get order by id',
  }),
  getOrderByFriendlyId: op({
    seed: 10,
    method: 'GET',
    path: '/order/by-friendly-id/{friendlyId}',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Get order by friendly id',
  }),
  updateProductAvailability: op({
    seed: 11,
    method: 'PUT',
    path: '/products/{productId}/availability',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Set product availability',
  }),
  listProducts: op({
    seed: 12,
    method: 'GET',
    path: '/products',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'List products',
  }),
  getProduct: op({
    seed: 13,
    method: 'GET',
    path: '/products/{productId}',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Get product by id',
  }),
  getCurrentShop: op({
    seed: 14,
    method: 'GET',
    path: '/shops/current',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Get the current shop',
  }),
  getShopContactInfo: op({
    seed: 15,
    method: 'GET',
    path: '/shops/current/contact-info',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Get the current shop contact info',
  }),
  streamingStart: op({
    seed: 16,
    method: 'PUT',
    path: '/streaming/start',
    base: 'api',
    auth: 'B',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Set streaming status to started',
  }),
  streamingEnd: op({
    seed: 17,
    method: 'PUT',
    path: '/streaming/end',
    base: 'api',
    auth: 'B',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Set streaming status to ended',
  }),
  getStreamingStatus: op({
    seed: 18,
    method: 'GET',
    path: '/streaming',
    base: 'api',
    auth: 'B',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Get streaming status',
  }),
  getThankYou: op({
    seed: 19,
    method: 'GET',
    path: '/thank-yous/{thankYouId}',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Get a thank-you',
  }),
  getGiftPurchase: op({
    seed: 20,
    method: 'GET',
    path: '/gift-purchase/{giftPurchaseId}',
    base: 'api',
    auth: 'B',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Get a gift purchase',
  }),
  createFulfillment: op({
    seed: 21,
    method: 'POST',
    path: '/fulfillments',
    base: 'api',
    auth: 'A',
    idempotent: false,
    verified: true,
    successStatus: 201,
    summary: 'Create a fulfillment for an order',
  }),
  addShippingLabel: op({
    seed: 22,
    method: 'POST',
    path: '/fulfillments/{fulfillmentId}/shipping-labels',
    base: 'api',
    auth: 'A',
    idempotent: false,
    verified: false,
    successStatus: 201,
    summary: 'Add a shipping label to a fulfillment',
  }),
  findFulfillmentIds: op({
    seed: 23,
    method: 'POST',
    path: '/fulfillments/find-ids',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: false,
    successStatus: 200,
    summary: 'Find fulfillment ids by friendly ids and fulfillment service (a lookup)',
  }),
  bulkAddShippingLabels: op({
    seed: 24,
    method: 'POST',
    path: '/fulfillments/shipping-labels/bulk',
    base: 'api',
    auth: 'A',
    idempotent: false,
    verified: false,
    successStatus: 201,
    summary: 'Bulk add shipping labels to fulfillments',
  }),
  listPromotions: op({
    seed: 25,
    method: 'GET',
    path: '/promotions',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'List promotions',
  }),
  createPromotion: op({
    seed: 26,
    method: 'POST',
    path: '/promotions',
    base: 'api',
    auth: 'A',
    idempotent: false,
    verified: true,
    successStatus: 200,
    summary: 'Create a promotion',
  }),
  getWebhook: op({
    seed: 27,
    method: 'GET',
    path: '/webhooks/{webhookConfigurationId}',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Get a webhook configuration',
  }),
  updateWebhook: op({
    seed: 28,
    method: 'PUT',
    path: '/webhooks/{webhookConfigurationId}',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Update a webhook configuration',
  }),
  deleteWebhook: op({
    seed: 29,
    method: 'DELETE',
    path: '/webhooks/{webhookConfigurationId}',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Delete a webhook configuration (200, empty body)',
  }),
  listWebhooks: op({
    seed: 30,
    method: 'GET',
    path: '/webhooks',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'List webhook configurations',
  }),
  createWebhook: op({
    seed: 31,
    method: 'POST',
    path: '/webhooks',
    base: 'api',
    auth: 'A',
    idempotent: false,
    verified: true,
    successStatus: 200,
    summary: 'Create a webhook configuration',
  }),
  getWebhookSecret: op({
    seed: 32,
    method: 'GET',
    path: '/webhooks/secret',
    base: 'api',
    auth: 'B',
    idempotent: true,
    verified: false,
    successStatus: 200,
    summary: 'Get the shop webhook secret (no published endpoint)',
  }),
  fetchProductFeed: op({
    seed: 33,
    method: 'GET',
    path: '/.well-known/merchant-center/rss.xml',
    base: 'shop',
    auth: 'none',
    idempotent: true,
    verified: true,
    successStatus: 200,
    summary: 'Public RSS product feed of a shop',
  }),
  getGiftingConfig: op({
    method: 'GET',
    path: '/gifting/config',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: false,
    successStatus: 200,
    extra: true,
    summary: 'Get the shop gifting configuration (newer API)',
  }),
  listWebhookEvents: op({
    method: 'GET',
    path: '/webhook-events',
    base: 'api',
    auth: 'A',
    idempotent: true,
    verified: true,
    successStatus: 200,
    extra: true,
    summary: 'List past webhook deliveries (newer API)',
  }),
} as const satisfies Record<string, OperationSpec>;

export type OperationKey = keyof typeof OPERATIONS;

/** The table as a list, in spec order (extras last). */
export const OPERATION_LIST: readonly (OperationSpec & { key: OperationKey })[] = (
  Object.entries(OPERATIONS) as [OperationKey, OperationSpec][]
).map(([key, spec]) => ({ key, ...spec }));

/** Names of the `{param}` placeholders of a path template, in order. */
export function pathParams(template: string): string[] {
  return [...template.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!);
}

/**
 * Fills a path template; each value is URL-encoded. Throws a TypeError naming the parameter
 * when one is missing or empty (an empty id would silently hit another endpoint).
 */
export function buildPath(template: string, params: Record<string, string> = {}): string {
  return template.replace(/\{([A-Za-z0-9_]+)\}/g, (_m, name: string) => {
    const v = params[name];
    if (typeof v !== 'string' || v.length === 0)
      throw new TypeError(`path parameter "${name}" must be a non-empty string`);
    return encodeURIComponent(v);
  });
}
