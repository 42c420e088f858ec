/**
 * FourthwallClient: one typed method per operation of the operations table, over undici.
 * Built in layers, each file owning one part: client-transport.ts (the core below: limiter,
 * deadline, attempts, retries, auth refresh, schema check; its header is the contract every call
 * keeps), client-request.ts (request/response helpers), client-gifting.ts (donations, gifting,
 * streaming, thank-yous, gift purchases), client-commerce.ts (orders, products, shop, fulfillment,
 * promotions) and this file (webhook configuration, the public product feed, and the client's
 * public names, re-exported from here).
 * Does not: map to the domain's ShopPort / ShopError (an adapter does), or verify webhooks
 * (webhooks.ts).
 */
import { FourthwallCommerceOperations } from './client-commerce.js';
import type { PageQuery } from './client-gifting.js';
import { normaliseBase } from './client-request.js';
import { parseProductFeed, type ProductFeed } from './feed.js';
import * as S from './schemas.js';

export { DEFAULT_API_URL, type RetryOptions, type FourthwallClientOptions } from './client-transport.js';
export { parseRetryAfter } from './client-request.js';
export type { DrawParticipant, StreamingStartService, PageQuery } from './client-gifting.js';
export type { OrderStatus, OrderFilters, CreateFulfillmentInput, AddShippingLabelInput } from './client-commerce.js';

export interface WebhookConfigInput {
  url: string;
  allowedTypes: string[];
}

/** The typed Fourthwall Open API client (see the module header). */
export class FourthwallClient extends FourthwallCommerceOperations {
  // -------------------------------------------------------------------------------------------
  // Webhooks (BETA)
  // -------------------------------------------------------------------------------------------
  /** `GET /webhooks` */
  listWebhooks(): Promise<S.Page<S.WebhookConfig>> {
    return this.json('listWebhooks', {}, S.WebhookConfigPageSchema);
  }

  /** `GET /webhooks/{webhookConfigurationId}` */
  getWebhook(webhookConfigurationId: string): Promise<S.WebhookConfig> {
    return this.json('getWebhook', { params: { webhookConfigurationId } }, S.WebhookConfigSchema);
  }

  /** `POST /webhooks` - NOT retried once it may have been sent. */
  createWebhook(input: WebhookConfigInput): Promise<S.WebhookConfig> {
    return this.json(
      'createWebhook',
      { body: { url: input.url, allowedTypes: input.allowedTypes } },
      S.WebhookConfigSchema,
    );
  }

  /** `PUT /webhooks/{webhookConfigurationId}` */
  updateWebhook(webhookConfigurationId: string, input: WebhookConfigInput): Promise<S.WebhookConfig> {
    return this.json(
      'updateWebhook',
      { params: { webhookConfigurationId }, body: { url: input.url, allowedTypes: input.allowedTypes } },
      S.WebhookConfigSchema,
    );
  }

  /** `DELETE /webhooks/{webhookConfigurationId}` (200, empty body). */
  async deleteWebhook(webhookConfigurationId: string): Promise<void> {
    await this.execute('deleteWebhook', { params: { webhookConfigurationId } });
  }

  /** The shop webhook secret. Path unverified (no published endpoint). */
  getWebhookSecret(): Promise<S.WebhookSecret> {
    return this.json('getWebhookSecret', {}, S.WebhookSecretSchema);
  }

  /** `GET /webhook-events` (newer API): past deliveries, optionally of one type. */
  listWebhookEvents(q: PageQuery & { type?: string } = {}): Promise<S.Page<S.WebhookEventRecord>> {
    return this.json(
      'listWebhookEvents',
      { query: { page: q.page, size: q.size, type: q.type } },
      S.WebhookEventPageSchema,
    );
  }

  // -------------------------------------------------------------------------------------------
  // Public product feed
  // -------------------------------------------------------------------------------------------
  /** `{shopUrl}/.well-known/merchant-center/rss.xml`, without credentials. */
  async fetchProductFeed(shopUrl: string): Promise<ProductFeed> {
    const baseUrl = normaliseBase(shopUrl, 'shopUrl');
    const { text, call } = await this.execute('fetchProductFeed', { baseUrl });
    return parseProductFeed(text, call);
  }
}
