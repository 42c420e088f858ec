/**
 * The operations of the Fourthwall sandbox API: a route table (method, path relative to the API
 * root, accepted auth scheme, stable operation name) and one synchronous handler per operation,
 * validating bodies like the real service and answering Fourthwall's shapes and error codes.
 * Auth `A` = Basic or Bearer, `B` = Basic only. Handlers only touch the in-memory state, the
 * gifting engine and the webhook hub; transport concerns (auth, rate rule, faults) are the
 * server's.
 */
import type { Clock } from '../../shared/clock.js';
import type { Gifting } from './gifting.js';
import {
  ApiError,
  asObject,
  invalid,
  optionalString,
  pageOf,
  paginate,
  requireString,
} from './http.js';
import type { IdFactory } from './ids.js';
import type { ShopState } from './state.js';
import {
  ORDER_STATUSES,
  WEBHOOK_EVENT_TYPES,
  type Fulfillment,
  type GiftingConfig,
  type Order,
  type OrderStatus,
  type Promotion,
  type ShippingLabel,
  type StreamingService,
} from './types.js';
import { parseWebhookBody, type UriRules, type WebhookHub } from './webhooks.js';

export type AuthRule = 'A' | 'B';

export interface RouteContext {
  params: Record<string, string>;
  query: URLSearchParams;
  /** The parsed JSON body (400 on a missing or malformed one). */
  json(): unknown;
}

export interface RouteResult {
  status: number;
  body?: unknown;
}

export interface ApiRoute {
  operation: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Relative to the API root, `:name` segments are parameters. */
  path: string;
  auth: AuthRule;
  handler(ctx: RouteContext): RouteResult;
}

export interface ApiDeps {
  state: ShopState;
  gifting: Gifting;
  hub: WebhookHub;
  ids: IdFactory;
  clock: Clock;
  webhookSecret: string;
  uriRules: UriRules;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The fulfillment services the sandbox knows by name (the real list has 34). */
export const FULFILLMENT_SERVICES: readonly string[] = [
  'FULFILLED_BY_CREATOR',
  'FULFILLED_BY_FOURTHWALL',
  'FULFILLED_BY_MANUFACTURER',
  'DIGITAL_ITEM',
];

function ok(body: unknown, status = 200): RouteResult {
  return { status, body };
}

function newestFirst<T extends { createdAt: string }>(items: Iterable<T>): T[] {
  return [...items].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

function dateFilter(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  const t = Date.parse(raw);
  if (Number.isNaN(t)) throw invalid(name, 'must be an ISO 8601 date-time');
  return t;
}

function multi(query: URLSearchParams, name: string): string[] {
  return query
    .getAll(name)
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

function uuidField(obj: Record<string, unknown>, field: string, prefix = ''): string {
  const v = obj[field];
  if (typeof v !== 'string' || !UUID_RE.test(v)) throw invalid(prefix + field, 'must be a uuid');
  return v;
}

function positiveInt(obj: Record<string, unknown>, field: string, prefix = ''): number {
  const v = obj[field];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw invalid(prefix + field, 'must be a positive integer');
  return v;
}

function arrayField(obj: Record<string, unknown>, field: string, minItems = 0): unknown[] {
  const v = obj[field];
  if (!Array.isArray(v)) throw invalid(field, 'is required and must be an array');
  if (v.length < minItems) throw invalid(field, `must have at least ${minItems} item(s)`);
  return v;
}

/** Builds the route table over the given state and engines. */
export function buildApiRoutes(d: ApiDeps): ApiRoute[] {
  const { state, gifting, hub } = d;
  const iso = (): string => new Date(d.clock.now()).toISOString();
  const streamingStatus = (): Record<string, unknown> => ({ shopId: state.shop.id, services: [{ ...state.streaming }] });

  const parseLabel = (body: Record<string, unknown>, prefix: string): ShippingLabel => {
    const items = body['items'];
    if (!Array.isArray(items)) throw invalid(`${prefix}items`, 'is required and must be an array');
    const trackingService = optionalString(body, 'trackingService', prefix);
    const trackingNumber = optionalString(body, 'trackingNumber', prefix);
    const labelUrl = optionalString(body, 'labelUrl', prefix);
    return {
      trackingCompany: requireString(body, 'trackingCompany', prefix),
      ...(trackingService !== undefined ? { trackingService } : {}),
      ...(trackingNumber !== undefined ? { trackingNumber } : {}),
      ...(labelUrl !== undefined ? { labelUrl } : {}),
      items: items.map((it, i) => {
        const o = asObject(it, `${prefix}items[${i}]`);
        return {
          offerVariantId: uuidField(o, 'offerVariantId', `${prefix}items[${i}].`),
          quantity: positiveInt(o, 'quantity', `${prefix}items[${i}].`),
        };
      }),
    };
  };

  const fulfillment = (id: string): Fulfillment => {
    const f = state.fulfillments.get(id);
    if (!f) throw new ApiError(404, 'FULFILLMENT_NOT_FOUND', { fulfillmentId: id });
    return f;
  };

  const addLabel = (f: Fulfillment, label: ShippingLabel): Fulfillment => {
    f.shippingLabels.push(label);
    f.updatedAt = iso();
    return f;
  };

  const orderUpdated = (order: Order): void => {
    hub.emit('ORDER_UPDATED', { order, update: { type: 'STATUS' } });
  };

  return [
    // Donations
    {
      operation: 'listDonations', method: 'GET', path: '/donations', auth: 'A',
      handler: ({ query }) => ok(paginate(newestFirst(state.donations.values()), pageOf(query))),
    },
    {
      operation: 'getDonation', method: 'GET', path: '/donations/:donationId', auth: 'A',
      handler: ({ params }) => ok(state.donation(params['donationId'] as string)),
    },
    // Gifting
    {
      operation: 'finishDraw', method: 'PUT', path: '/gifting/draw/:id/finish', auth: 'B',
      handler: ({ params, json }) => ok(gifting.finish(params['id'] as string, json())),
    },
    {
      operation: 'getDraw', method: 'GET', path: '/gifting/draw/:id', auth: 'B',
      handler: ({ params }) => ok(gifting.drawView(state.draw(params['id'] as string))),
    },
    {
      operation: 'getGiftingConfig', method: 'GET', path: '/gifting/config', auth: 'A',
      handler: () => ok(state.giftingConfig),
    },
    {
      operation: 'updateGiftingConfig', method: 'PUT', path: '/gifting/config', auth: 'A',
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
      operation: 'createGiveawayLinks', method: 'POST', path: '/giveaway-links', auth: 'A',
      handler: ({ json }) => {
        const pkg = gifting.createLinks(json());
        return ok({ packageId: pkg.packageId, giveawayLinks: pkg.giveawayLinks });
      },
    },
    {
      operation: 'listGiveawayPackages', method: 'GET', path: '/giveaway-links/packages', auth: 'A',
      handler: () =>
        ok({ packages: newestFirst(state.packages.values()).map((p) => ({ packageId: p.packageId, createdAt: p.createdAt })) }),
    },
    {
      operation: 'getGiveawayPackage', method: 'GET', path: '/giveaway-links/packages/:packageId', auth: 'A',
      handler: ({ params }) => {
        const pkg = state.giveawayPackage(params['packageId'] as string);
        return ok({ packageId: pkg.packageId, giveawayLinks: pkg.giveawayLinks });
      },
    },
    // Orders
    {
      operation: 'listOrders', method: 'GET', path: '/order', auth: 'A',
      handler: ({ query }) => {
        const page = pageOf(query);
        const email = query.get('email');
        const cGt = dateFilter(query, 'createdAt[gt]');
        const cLt = dateFilter(query, 'createdAt[lt]');
        const uGt = dateFilter(query, 'updatedAt[gt]');
        const uLt = dateFilter(query, 'updatedAt[lt]');
        const statuses = multi(query, 'status');
        for (const s of statuses) {
          if (!ORDER_STATUSES.includes(s as OrderStatus)) throw invalid('status', `must be one of ${ORDER_STATUSES.join(', ')}`);
        }
        const list = newestFirst(state.orders.values()).filter((o) => {
          const c = Date.parse(o.createdAt);
          const u = Date.parse(o.updatedAt);
          return (
            (email === null || email === '' || o.email.toLowerCase() === email.toLowerCase()) &&
            (cGt === undefined || c > cGt) &&
            (cLt === undefined || c < cLt) &&
            (uGt === undefined || u > uGt) &&
            (uLt === undefined || u < uLt) &&
            (statuses.length === 0 || statuses.includes(o.status))
          );
        });
        return ok(paginate(list, page));
      },
    },
    {
      operation: 'getOrderByFriendlyId', method: 'GET', path: '/order/by-friendly-id/:friendlyId', auth: 'A',
      handler: ({ params }) => ok(state.orderByFriendlyId(params['friendlyId'] as string)),
    },
    {
      operation: 'getOrder', method: 'GET', path: '/order/:orderId', auth: 'A',
      handler: ({ params }) => ok(state.order(params['orderId'] as string)),
    },
    // Products
    {
      operation: 'updateProductAvailability', method: 'PUT', path: '/products/:productId/availability', auth: 'A',
      handler: ({ params, json }) => {
        const body = asObject(json());
        if (typeof body['available'] !== 'boolean') throw invalid('available', 'is required and must be a boolean');
        const product = state.product(params['productId'] as string);
        product.state = { type: body['available'] ? 'AVAILABLE' : 'SOLD_OUT' };
        product.updatedAt = iso();
        // OfferUpdatedV1 in the published document: `{product: <page of offers>}`.
        hub.emit('PRODUCT_UPDATED', { product: { results: [product], total: 1, page: 0, size: 1, totalPages: 1 } });
        return ok(product);
      },
    },
    {
      operation: 'listProducts', method: 'GET', path: '/products', auth: 'A',
      handler: ({ query }) => {
        const page = pageOf(query);
        const search = (query.get('search') ?? '').trim().toLowerCase();
        const list = [...state.products.values()].filter(
          (p) => search === '' || p.name.toLowerCase().includes(search) || p.slug.includes(search),
        );
        return ok(paginate(list, page));
      },
    },
    {
      operation: 'getProduct', method: 'GET', path: '/products/:productId', auth: 'A',
      handler: ({ params }) => ok(state.product(params['productId'] as string)),
    },
    // Shop
    { operation: 'getCurrentShop', method: 'GET', path: '/shops/current', auth: 'A', handler: () => ok(state.shop) },
    {
      operation: 'getShopContactInfo', method: 'GET', path: '/shops/current/contact-info', auth: 'A',
      handler: () => ok(state.contactInfo),
    },
    // Streaming
    {
      operation: 'startStreaming', method: 'PUT', path: '/streaming/start', auth: 'B',
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
      operation: 'endStreaming', method: 'PUT', path: '/streaming/end', auth: 'B',
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
    { operation: 'getStreamingStatus', method: 'GET', path: '/streaming', auth: 'B', handler: () => ok(streamingStatus()) },
    // Thank yous and gift purchases
    {
      operation: 'getThankYou', method: 'GET', path: '/thank-yous/:thankYouId', auth: 'A',
      handler: ({ params }) => ok(state.thankYou(params['thankYouId'] as string)),
    },
    {
      operation: 'getGiftPurchase', method: 'GET', path: '/gift-purchase/:giftPurchaseId', auth: 'B',
      handler: ({ params }) => ok(gifting.purchaseView(state.giftPurchase(params['giftPurchaseId'] as string))),
    },
    // Fulfillment (BETA)
    {
      operation: 'createFulfillment', method: 'POST', path: '/fulfillments', auth: 'A',
      handler: ({ json }) => {
        const body = asObject(json());
        const orderId = uuidField(body, 'orderId');
        const items = arrayField(body, 'items', 1).map((it, i) => {
          const o = asObject(it, `items[${i}]`);
          return { variantId: uuidField(o, 'variantId', `items[${i}].`), quantity: positiveInt(o, 'quantity', `items[${i}].`) };
        });
        const label = asObject(body['shippingLabel'], 'shippingLabel');
        const trackingNumber = requireString(label, 'trackingNumber', 'shippingLabel.');
        const trackingCompany = requireString(label, 'trackingCompany', 'shippingLabel.');
        const order = state.orders.get(orderId);
        if (!order) throw new ApiError(404, 'FULFILLMENT_ORDER_NOT_FOUND', { orderId });
        const fulfilled = new Map<string, number>();
        for (const f of state.fulfillments.values()) {
          if (f.orderId !== orderId) continue;
          for (const it of f.items) fulfilled.set(it.variantId, (fulfilled.get(it.variantId) ?? 0) + it.quantity);
        }
        for (const it of items) {
          const line = order.offers.find((o) => o.variant.id === it.variantId);
          if (!line) throw new ApiError(400, 'FULFILLMENT_ORDER_INVALID_VARIANT', { orderId, variantId: it.variantId });
          const fulfillable = line.variant.quantity - (fulfilled.get(it.variantId) ?? 0);
          if (fulfillable <= 0 && items.length === 1) {
            const existing = [...state.fulfillments.values()].find((f) => f.orderId === orderId);
            throw new ApiError(400, 'FULFILLMENT_ALREADY_EXISTS', { fulfillmentId: existing?.id, orderId });
          }
          if (it.quantity > fulfillable) {
            throw new ApiError(400, 'FULFILLMENT_VARIANT_QUANTITY_TO_HIGH', {
              orderId, variantId: it.variantId, fulfillable, quantity: it.quantity,
            });
          }
          fulfilled.set(it.variantId, (fulfilled.get(it.variantId) ?? 0) + it.quantity);
        }
        const now = iso();
        const f: Fulfillment = {
          id: d.ids.prefixed('ful'),
          shopId: state.shop.id,
          orderId,
          status: 'OPEN',
          fulfillmentService: 'FULFILLED_BY_CREATOR',
          items,
          createdAt: now,
          updatedAt: now,
          shippingLabels: [
            { trackingCompany, trackingNumber, items: items.map((i) => ({ offerVariantId: i.variantId, quantity: i.quantity })) },
          ],
          orderShipmentId: d.ids.prefixed('osh'),
          fulfillmentServiceShopConfigId: 1,
        };
        state.fulfillments.set(f.id, f);
        const complete = order.offers.every((o) => (fulfilled.get(o.variant.id) ?? 0) >= o.variant.quantity);
        order.status = complete ? 'SHIPPED' : 'PARTIALLY_SHIPPED';
        order.updatedAt = now;
        orderUpdated(order);
        return ok({ fulfillmentId: f.id }, 201);
      },
    },
    {
      operation: 'findFulfillmentIds', method: 'POST', path: '/fulfillments/find-ids', auth: 'A',
      handler: ({ json }) => {
        const body = asObject(json());
        const friendlyIds = arrayField(body, 'friendlyIds').map((v, i) => {
          if (typeof v !== 'string') throw invalid(`friendlyIds[${i}]`, 'must be a string');
          return v;
        });
        const service = requireString(body, 'fulfillmentService');
        if (!FULFILLMENT_SERVICES.includes(service) && !/^FULFILLED_BY_[A-Z0-9_]+$/.test(service)) {
          throw invalid('fulfillmentService', 'is not a known fulfillment service');
        }
        const out: { friendlyId: string; fulfillmentService: string; fulfillmentId: string }[] = [];
        for (const f of state.fulfillments.values()) {
          const order = state.orders.get(f.orderId);
          if (order && friendlyIds.includes(order.friendlyId) && f.fulfillmentService === service) {
            out.push({ friendlyId: order.friendlyId, fulfillmentService: f.fulfillmentService, fulfillmentId: f.id });
          }
        }
        return ok(out);
      },
    },
    {
      operation: 'bulkAddShippingLabels', method: 'POST', path: '/fulfillments/shipping-labels/bulk', auth: 'A',
      handler: ({ json, query }) => {
        // The spec passes the bulk request as one query parameter object (flattened here:
        // fulfillmentId (repeatable), trackingCompany, trackingNumber?, trackingService?,
        // labelUrl?; the label covers the fulfillment's items). A JSON body `{labels}` is also accepted.
        const ids = multi(query, 'fulfillmentId');
        if (ids.length) {
          const company = query.get('trackingCompany');
          if (!company) throw invalid('trackingCompany', 'is required');
          const extra = (k: string) => (query.get(k) ? { [k]: query.get(k) as string } : {});
          return ok(
            {
              result: ids.map((id) => {
                const f = fulfillment(id);
                const label: ShippingLabel = {
                  trackingCompany: company,
                  ...extra('trackingNumber'),
                  ...extra('trackingService'),
                  ...extra('labelUrl'),
                  items: f.items.map((it) => ({ offerVariantId: it.variantId, quantity: it.quantity })),
                };
                return addLabel(f, label);
              }),
            },
            201,
          );
        }
        const body = asObject(json());
        const labels = arrayField(body, 'labels', 1).map((l, i) => {
          const o = asObject(l, `labels[${i}]`);
          return { fulfillmentId: requireString(o, 'fulfillmentId', `labels[${i}].`), label: parseLabel(o, `labels[${i}].`) };
        });
        const targets = labels.map((l) => ({ f: fulfillment(l.fulfillmentId), label: l.label }));
        return ok({ result: targets.map((t) => addLabel(t.f, t.label)) }, 201);
      },
    },
    {
      operation: 'addShippingLabel', method: 'POST', path: '/fulfillments/:fulfillmentId/shipping-labels', auth: 'A',
      handler: ({ params, json }) => {
        const label = parseLabel(asObject(json()), '');
        return ok(addLabel(fulfillment(params['fulfillmentId'] as string), label), 201);
      },
    },
    // Promotions (BETA)
    {
      operation: 'listPromotions', method: 'GET', path: '/promotions', auth: 'A',
      handler: ({ query }) => {
        const page = pageOf(query);
        const codes = multi(query, 'codes').map((c) => c.toUpperCase());
        const list = [...state.promotions.values()].filter((p) => codes.length === 0 || codes.includes(p.code.toUpperCase()));
        return ok(paginate(list, page));
      },
    },
    {
      operation: 'createPromotion', method: 'POST', path: '/promotions', auth: 'A',
      handler: ({ json }) => {
        const body = asObject(json());
        const type = requireString(body, 'type');
        if (!['SHOP_SINGLE', 'SHOP_MULTI', 'MEMBERSHIPS_SINGLE', 'MEMBERSHIPS_MULTI'].includes(type)) {
          throw invalid('type', 'must be SHOP_SINGLE, SHOP_MULTI, MEMBERSHIPS_SINGLE or MEMBERSHIPS_MULTI');
        }
        const code = requireString(body, 'code');
        const discount = asObject(body['discount'], 'discount');
        const discountType = requireString(discount, 'type', 'discount.');
        if (!['PERCENTAGE', 'FLAT_RATE', 'FREE_SHIPPING'].includes(discountType)) {
          throw invalid('discount.type', 'must be PERCENTAGE, FLAT_RATE or FREE_SHIPPING');
        }
        if (discountType === 'PERCENTAGE' && typeof discount['percentage'] !== 'number') {
          throw invalid('discount.percentage', 'is required for PERCENTAGE');
        }
        for (const p of state.promotions.values()) {
          if (p.code.toUpperCase() === code.toUpperCase()) throw new ApiError(409, 'PROMOTION_CODE_DUPLICATION', { promotionCode: code });
        }
        const limits = body['limits'] === undefined ? {} : asObject(body['limits'], 'limits');
        const requirements = body['requirements'] === undefined ? {} : asObject(body['requirements'], 'requirements');
        const applies = body['appliesToProducts'] === undefined ? undefined : asObject(body['appliesToProducts'], 'appliesToProducts');
        const title = optionalString(body, 'title');
        const promotion: Promotion = {
          type,
          id: d.ids.prefixed('prm'),
          ...(title !== undefined ? { title } : {}),
          code,
          discount: { ...discount, type: discountType },
          status: 'Live',
          requirements: requirements as Promotion['requirements'],
          usageCount: 0,
          limits: {
            ...(typeof limits['maximumUse'] === 'number' ? { maximumUsesNumber: limits['maximumUse'] } : {}),
            oneUsePerCustomer: limits['oneUsePerCustomer'] === true,
          },
          appliesTo: applies
            ? { type: 'SELECTED_PRODUCTS', products: Array.isArray(applies['products']) ? (applies['products'] as string[]) : [] }
            : { type: 'ENTIRE_ORDER' },
        };
        state.promotions.set(promotion.id, promotion);
        hub.emit('PROMOTION_CREATED', promotion);
        return ok(promotion);
      },
    },
    // Webhooks (BETA)
    {
      operation: 'listWebhooks', method: 'GET', path: '/webhooks', auth: 'A',
      handler: ({ query }) => ok(paginate([...hub.configs.values()], pageOf(query))),
    },
    {
      operation: 'createWebhook', method: 'POST', path: '/webhooks', auth: 'A',
      handler: ({ json }) => {
        const { url, allowedTypes } = parseWebhookBody(asObject(json()), d.uriRules);
        return ok(hub.create(url, allowedTypes));
      },
    },
    {
      operation: 'getWebhookSecret', method: 'GET', path: '/webhooks/secret', auth: 'B',
      handler: () => ok({ secret: d.webhookSecret }),
    },
    {
      operation: 'getWebhook', method: 'GET', path: '/webhooks/:webhookConfigurationId', auth: 'A',
      handler: ({ params }) => ok(hub.get(params['webhookConfigurationId'] as string)),
    },
    {
      operation: 'updateWebhook', method: 'PUT', path: '/webhooks/:webhookConfigurationId', auth: 'A',
      handler: ({ params, json }) => {
        const id = params['webhookConfigurationId'] as string;
        hub.get(id);
        const { url, allowedTypes } = parseWebhookBody(asObject(json()), d.uriRules);
        return ok(hub.update(id, url, allowedTypes));
      },
    },
    {
      operation: 'deleteWebhook', method: 'DELETE', path: '/webhooks/:webhookConfigurationId', auth: 'A',
      handler: ({ params }) => {
        hub.remove(params['webhookConfigurationId'] as string);
        return { status: 200 };
      },
    },
    {
      operation: 'listWebhookEvents', method: 'GET', path: '/webhook-events', auth: 'A',
      handler: ({ query }) => {
        const type = query.get('type');
        if (type !== null && !WEBHOOK_EVENT_TYPES.includes(type)) throw invalid('type', 'is not a webhook event type');
        return ok(paginate(hub.events(type ?? undefined), pageOf(query, 50)));
      },
    },
  ];
}

export interface RouteMatch {
  route: ApiRoute;
  params: Record<string, string>;
}

/** Finds the route for a method and a path relative to the API root. */
export function matchRoute(
  routes: readonly ApiRoute[],
  method: string,
  path: string,
): RouteMatch | { methodNotAllowed: true } | undefined {
  const segs = path.split('/').filter((s) => s !== '');
  let pathMatched = false;
  for (const route of routes) {
    const pattern = route.path.split('/').filter((s) => s !== '');
    if (pattern.length !== segs.length) continue;
    const params: Record<string, string> = {};
    let hit = true;
    for (let i = 0; i < pattern.length; i++) {
      const p = pattern[i] as string;
      const s = segs[i] as string;
      if (p.startsWith(':')) {
        try {
          params[p.slice(1)] = decodeURIComponent(s);
        } catch {
          hit = false;
          break;
        }
      } else if (p !== s) {
        hit = false;
        break;
      }
    }
    if (!hit) continue;
    if (route.method === method) return { route, params };
    pathMatched = true;
  }
  return pathMatched ? { methodNotAllowed: true } : undefined;
}
