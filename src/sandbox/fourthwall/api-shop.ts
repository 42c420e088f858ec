/**
 * Shop routes of the Fourthwall sandbox API: orders (with the documented filters), products
 * (availability, search, paging), the current shop and its contact info, and promotions (BETA).
 *
 * Contract: synchronous handlers over the in-memory state; bodies and filters are validated like
 * the real service (400 `INVALID_REQUEST` naming the field, 409 `PROMOTION_CODE_DUPLICATION`);
 * a product availability change emits PRODUCT_UPDATED and a new promotion PROMOTION_CREATED
 * through the webhook hub.
 *
 * Deliberately not here: gifting and streaming (api-gifting.ts), fulfillment
 * (api-fulfillment.ts), webhook configuration (api-webhooks.ts).
 */
import { ApiError, asObject, invalid, optionalString, pageOf, paginate, requireString } from './http.js';
import { dateFilter, isoNow, multi, newestFirst, ok, type ApiDeps, type ApiRoute } from './api-kit.js';
import { ORDER_STATUSES, type OrderStatus, type Promotion } from './types.js';

/** Orders, products and the shop. */
export function shopRoutes(d: ApiDeps): ApiRoute[] {
  const { state, hub } = d;
  const iso = (): string => isoNow(d);
  return [
    // Orders
    {
      operation: 'listOrders',
      method: 'GET',
      path: '/order',
      auth: 'A',
      handler: ({ query }) => {
        const page = pageOf(query);
        const email = query.get('email');
        const cGt = dateFilter(query, 'createdAt[gt]');
        const cLt = dateFilter(query, 'createdAt[lt]');
        const uGt = dateFilter(query, 'updatedAt[gt]');
        const uLt = dateFilter(query, 'updatedAt[lt]');
        const statuses = multi(query, 'status');
        for (const s of statuses) {
          if (!ORDER_STATUSES.includes(s as OrderStatus))
            throw invalid('status', `must be one of ${ORDER_STATUSES.join(', ')}`);
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
      operation: 'getOrderByFriendlyId',
      method: 'GET',
      path: '/order/by-friendly-id/:friendlyId',
      auth: 'A',
      handler: ({ params }) => ok(state.orderByFriendlyId(params['friendlyId'] as string)),
    },
    {
      operation: 'getOrder',
      method: 'GET',
      path: '/order/:orderId',
      auth: 'A',
      handler: ({ params }) => ok(state.order(params['orderId'] as string)),
    },
    // Products
    {
      operation: 'updateProductAvailability',
      method: 'PUT',
      path: '/products/:productId/availability',
      auth: 'A',
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
      operation: 'listProducts',
      method: 'GET',
      path: '/products',
      auth: 'A',
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
      operation: 'getProduct',
      method: 'GET',
      path: '/products/:productId',
      auth: 'A',
      handler: ({ params }) => ok(state.product(params['productId'] as string)),
    },
    // Shop
    { operation: 'getCurrentShop', method: 'GET', path: '/shops/current', auth: 'A', handler: () => ok(state.shop) },
    {
      operation: 'getShopContactInfo',
      method: 'GET',
      path: '/shops/current/contact-info',
      auth: 'A',
      handler: () => ok(state.contactInfo),
    },
  ];
}

/** Promotions (BETA). */
export function promotionRoutes(d: ApiDeps): ApiRoute[] {
  const { state, hub } = d;
  return [
    // Promotions (BETA)
    {
      operation: 'listPromotions',
      method: 'GET',
      path: '/promotions',
      auth: 'A',
      handler: ({ query }) => {
        const page = pageOf(query);
        const codes = multi(query, 'codes').map((c) => c.toUpperCase());
        const list = [...state.promotions.values()].filter(
          (p) => codes.length === 0 || codes.includes(p.code.toUpperCase()),
        );
        return ok(paginate(list, page));
      },
    },
    {
      operation: 'createPromotion',
      method: 'POST',
      path: '/promotions',
      auth: 'A',
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
          if (p.code.toUpperCase() === code.toUpperCase())
            throw new ApiError(409, 'PROMOTION_CODE_DUPLICATION', { promotionCode: code });
        }
        const limits = body['limits'] === undefined ? {} : asObject(body['limits'], 'limits');
        const requirements = body['requirements'] === undefined ? {} : asObject(body['requirements'], 'requirements');
        const applies =
          body['appliesToProducts'] === undefined
            ? undefined
            : asObject(body['appliesToProducts'], 'appliesToProducts');
        const title = optionalString(body, 'title');
        const promotion: Promotion = {
          type,
          id: d.ids.prefixed('prm'),
          ...(title !== undefined ? { title } : {}),
          code,
          discount: { ...discount, type: discountType },
          status: 'Live',
          requirements: requirements,
          usageCount: 0,
          limits: {
            ...(typeof limits['maximumUse'] === 'number' ? { maximumUsesNumber: limits['maximumUse'] } : {}),
            oneUsePerCustomer: limits['oneUsePerCustomer'] === true,
          },
          appliesTo: applies
            ? {
                type: 'SELECTED_PRODUCTS',
                products: Array.isArray(applies['products']) ? (applies['products'] as string[]) : [],
              }
            : { type: 'ENTIRE_ORDER' },
        };
        state.promotions.set(promotion.id, promotion);
        hub.emit('PROMOTION_CREATED', promotion);
        return ok(promotion);
      },
    },
  ];
}
