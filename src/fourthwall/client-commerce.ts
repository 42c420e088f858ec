/**
 * Commerce operations of the Fourthwall client: orders, products, the shop, fulfillment (BETA)
 * and promotions (BETA) - one typed method per operation of the operations table (operations.ts),
 * each a single call through the transport core (`listAllProducts` pages through `listProducts`).
 *
 * Contract: every method keeps the transport's guarantees (client-transport.ts: limiter, deadline,
 * retries, zod-checked responses); `createFulfillment`, `addShippingLabel`,
 * `bulkAddShippingLabels` and `createPromotion` are NOT re-sent once they may have reached the
 * server. Order filters map to the documented query names (`createdAt[gt]`, ...; statuses deduplicated).
 *
 * Deliberately not here: gifting, streaming, donations (client-gifting.ts), webhook configuration
 * and the product feed (client.ts).
 */
import { FourthwallGiftingOperations, type PageQuery } from './client-gifting.js';
import type { Query } from './client-request.js';
import * as S from './schemas.js';

export type OrderStatus =
  | 'CONFIRMED'
  | 'PARTIALLY_IN_PRODUCTION'
  | 'IN_PRODUCTION'
  | 'PARTIALLY_SHIPPED'
  | 'SHIPPED'
  | 'PARTIALLY_DELIVERED'
  | 'DELIVERED'
  | 'CANCELLED'
  | 'COMPLETED';

export interface OrderFilters extends PageQuery {
  email?: string;
  /** `createdAt[gt]` */
  createdAfter?: string | Date;
  /** `createdAt[lt]` */
  createdBefore?: string | Date;
  /** `updatedAt[gt]` */
  updatedAfter?: string | Date;
  /** `updatedAt[lt]` */
  updatedBefore?: string | Date;
  status?: OrderStatus[];
}

export interface CreateFulfillmentInput {
  orderId: string;
  items: { variantId: string; quantity: number }[];
  shippingLabel: { trackingNumber: string; trackingCompany: string };
}

export interface AddShippingLabelInput {
  trackingCompany: string;
  trackingService?: string;
  trackingNumber?: string;
  labelUrl?: string;
  items: { offerVariantId: string; quantity: number }[];
}

/** The gifting operations plus the commerce operations (see the module header). */
export class FourthwallCommerceOperations extends FourthwallGiftingOperations {
  // -------------------------------------------------------------------------------------------
  // Orders
  // -------------------------------------------------------------------------------------------
  /** `GET /order` with the documented filters. */
  listOrders(filters: OrderFilters = {}): Promise<S.Page<S.Order>> {
    const query: Query = {
      page: filters.page,
      size: filters.size,
      email: filters.email,
      'createdAt[gt]': filters.createdAfter,
      'createdAt[lt]': filters.createdBefore,
      'updatedAt[gt]': filters.updatedAfter,
      'updatedAt[lt]': filters.updatedBefore,
      status: filters.status ? [...new Set(filters.status)] : undefined,
    };
    return this.json('listOrders', { query }, S.OrderPageSchema);
  }

  /** `GET /order/{orderId}` */
  getOrder(orderId: string): Promise<S.Order> {
    return this.json('getOrder', { params: { orderId } }, S.OrderSchema);
  }

  /** `GET /order/by-friendly-id/{friendlyId}` */
  getOrderByFriendlyId(friendlyId: string): Promise<S.Order> {
    return this.json('getOrderByFriendlyId', { params: { friendlyId } }, S.OrderSchema);
  }

  // -------------------------------------------------------------------------------------------
  // Products
  // -------------------------------------------------------------------------------------------
  /** `PUT /products/{productId}/availability` */
  updateProductAvailability(productId: string, available: boolean): Promise<S.Product> {
    return this.json('updateProductAvailability', { params: { productId }, body: { available } }, S.ProductSchema);
  }

  /** `GET /products` (size at most 100). */
  listProducts(q: PageQuery & { search?: string } = {}): Promise<S.Page<S.Product>> {
    return this.json('listProducts', { query: { page: q.page, size: q.size, search: q.search } }, S.ProductPageSchema);
  }

  /** Every product, paging through `GET /products` (stops at `maxPages`, default 50). */
  async listAllProducts(q: { search?: string; pageSize?: number; maxPages?: number } = {}): Promise<S.Product[]> {
    const size = q.pageSize ?? 100;
    const out: S.Product[] = [];
    for (let page = 0; page < (q.maxPages ?? 50); page++) {
      const p = await this.listProducts({ page, size, search: q.search });
      out.push(...p.results);
      const lastPage = typeof p.totalPages === 'number' ? page + 1 >= p.totalPages : p.results.length < size;
      if (lastPage || p.results.length === 0) break;
    }
    return out;
  }

  /** `GET /products/{productId}` */
  getProduct(productId: string): Promise<S.Product> {
    return this.json('getProduct', { params: { productId } }, S.ProductSchema);
  }

  // -------------------------------------------------------------------------------------------
  // Shop
  // -------------------------------------------------------------------------------------------
  /** `GET /shops/current` */
  getCurrentShop(): Promise<S.Shop> {
    return this.json('getCurrentShop', {}, S.ShopSchema);
  }

  /** `GET /shops/current/contact-info` */
  getShopContactInfo(): Promise<S.ShopContactInfo> {
    return this.json('getShopContactInfo', {}, S.ShopContactInfoSchema);
  }

  // -------------------------------------------------------------------------------------------
  // Fulfillment (BETA)
  // -------------------------------------------------------------------------------------------
  /** `POST /fulfillments` (201) - NOT retried once it may have been sent. */
  createFulfillment(input: CreateFulfillmentInput): Promise<S.FulfillmentCreated> {
    return this.json('createFulfillment', { body: input }, S.FulfillmentCreatedSchema);
  }

  /** Add a shipping label (201). Path unverified. NOT retried once it may have been sent. */
  addShippingLabel(fulfillmentId: string, input: AddShippingLabelInput): Promise<S.Fulfillment> {
    return this.json('addShippingLabel', { params: { fulfillmentId }, body: input }, S.FulfillmentSchema);
  }

  /** Find fulfillment ids by friendly ids and fulfillment service. Path unverified. */
  findFulfillmentIds(input: { friendlyIds: string[]; fulfillmentService: string }): Promise<S.FulfillmentIdMatches> {
    return this.json('findFulfillmentIds', { body: input }, S.FulfillmentIdMatchesSchema);
  }

  /**
   * Bulk add shipping labels (201). The spec sends the request object as query parameters and
   * does not show its fields; pass them flat. Path unverified. NOT retried once it may have been sent.
   */
  bulkAddShippingLabels(
    request: Record<string, string | number | boolean | string[]>,
  ): Promise<S.BulkShippingLabelsResult> {
    return this.json('bulkAddShippingLabels', { query: request }, S.BulkShippingLabelsResultSchema);
  }

  // -------------------------------------------------------------------------------------------
  // Promotions (BETA)
  // -------------------------------------------------------------------------------------------
  /** `GET /promotions` */
  listPromotions(q: PageQuery & { codes?: string[] } = {}): Promise<S.Page<S.Promotion>> {
    return this.json(
      'listPromotions',
      { query: { page: q.page, size: q.size, codes: q.codes } },
      S.PromotionPageSchema,
    );
  }

  /** `POST /promotions` (body: one of the promotion variants, each with `type`). NOT retried once sent. */
  createPromotion(input: { type: string } & Record<string, unknown>): Promise<S.Promotion> {
    return this.json('createPromotion', { body: input }, S.PromotionSchema);
  }
}
