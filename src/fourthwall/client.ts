/**
 * FourthwallClient: one typed method per operation of the operations table, over undici.
 *
 * Contract:
 * - Every request (API calls, token refreshes, the product feed) passes the client's one
 *   sliding-window limiter (rate-limit.ts); callers beyond the budget wait, they do not fail.
 * - Each call has a deadline (`deadlineMs`, covering queueing, attempts and backoff) and each
 *   attempt a timeout (`timeoutMs`).
 * - Retries: network errors, 5xx and 429 (honouring `Retry-After` seconds or HTTP date), with
 *   exponential backoff and jitter, within the deadline and `retry.maxAttempts`. Idempotent
 *   operations retry freely. A NON-idempotent operation (finishDraw, createGiveawayLinks, ...) is
 *   never re-sent once it may have reached the server (timeout, reset, 5xx): the call throws
 *   FourthwallOutcomeUnknownError. Only failures that certainly did not reach the server
 *   (connection refused, DNS, 429, a failed token refresh) are retried for those.
 * - A 401 with an OAuth token refreshes the token once (shared with concurrent callers) and
 *   re-sends once; another 401/403 throws FourthwallAuthError.
 * - Responses are checked with the zod wire schemas; a mismatch throws FourthwallSchemaError.
 * - Logs method, path (no query), status, attempt and duration at debug. Never headers, bodies,
 *   query strings or credentials.
 *
 * Deliberately not here: mapping to the domain's ShopPort / ShopError (an adapter does that),
 * webhook verification (webhooks.ts).
 */
import type { Dispatcher } from 'undici';
import { undici, type Undici } from './undici.js';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { systemClock, type Clock, type TimerHandle } from '../shared/clock.js';
import { cryptoRandom, type RandomSource } from '../shared/random.js';
import { createAuthProvider, jsonOrUndefined, type AuthConfig, type AuthHeader, type AuthProvider, type TokenTransport } from './auth.js';
import {
  FourthwallApiError,
  FourthwallAuthError,
  FourthwallError,
  FourthwallNetworkError,
  FourthwallOutcomeUnknownError,
  FourthwallSchemaError,
  FourthwallTimeoutError,
  FourthwallTokenError,
  errorContext,
  type FourthwallCallInfo,
} from './errors.js';
import { parseProductFeed, type ProductFeed } from './feed.js';
import { OPERATIONS, buildPath, type OperationKey } from './operations.js';
import { DEFAULT_RATE_LIMIT, SlidingWindowLimiter, type RateLimit } from './rate-limit.js';
import * as S from './schemas.js';

/** Default API root. */
export const DEFAULT_API_URL = 'https://api.fourthwall.com/open-api/v1.0';

export interface RetryOptions {
  /** Attempts per call, including the first (default 4). */
  maxAttempts?: number;
  /** First backoff delay (default 250 ms); doubles each retry. */
  baseDelayMs?: number;
  /** Cap of one backoff delay (default 5000 ms). `Retry-After` may ask for longer. */
  maxDelayMs?: number;
}

export interface FourthwallClientOptions {
  /** API root, e.g. `https://api.fourthwall.com/open-api/v1.0`. */
  apiUrl: string;
  /** Credentials, or a ready AuthProvider. */
  auth: AuthConfig | AuthProvider;
  /** Client-side budget (default 100 per 10 s). */
  rateLimit?: RateLimit;
  logger?: Logger;
  /** Per attempt (default 10 000 ms). */
  timeoutMs?: number;
  /** Per call, including queueing and retries (default 60 000 ms). */
  deadlineMs?: number;
  retry?: RetryOptions;
  userAgent?: string;
  clock?: Clock;
  /** Jitter source (default crypto). */
  random?: RandomSource;
  /** undici dispatcher to use (default: the client's own Agent, closed by `close()`). */
  dispatcher?: Dispatcher;
  /** Largest response body read (default 5 MiB). */
  maxResponseBytes?: number;
}

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

export interface WebhookConfigInput {
  url: string;
  allowedTypes: string[];
}

type QueryValue = string | number | boolean | Date | readonly (string | number)[] | undefined | null;
type Query = Record<string, QueryValue>;

interface CallRequest {
  params?: Record<string, string>;
  query?: Query;
  body?: unknown;
  /** Absolute base instead of the API root (the product feed). */
  baseUrl?: string;
}

type Attempt =
  | { kind: 'ok'; status: number; text: string }
  | { kind: 'retry'; error: FourthwallError; reached: boolean; delayMs?: number }
  | { kind: 'unauthorized'; error: FourthwallApiError; header: AuthHeader }
  | { kind: 'fail'; error: Error };

/** Connection-phase error codes: the request certainly never reached the server. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function errCode(e: unknown): string | undefined {
  for (let cur: unknown = e, i = 0; cur && i < 4; cur = (cur as { cause?: unknown }).cause, i++) {
    const c = (cur as { code?: unknown }).code;
    if (typeof c === 'string') return c;
  }
  return undefined;
}

function formatQueryValue(v: string | number | boolean | Date): string {
  return v instanceof Date ? v.toISOString() : String(v);
}

function queryString(query: Query | undefined): string {
  if (!query) return '';
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const item of v) qs.append(k, formatQueryValue(item as string | number));
    else qs.append(k, formatQueryValue(v as string | number | boolean | Date));
  }
  const s = qs.toString();
  return s ? `?${s}` : '';
}

/**
 * Parses `Retry-After` (delta seconds or HTTP date) into ms from `now`; undefined when absent or
 * unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  const s = v.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Math.round(Number(s) * 1000);
  const at = Date.parse(s);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function normaliseBase(url: string, what: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `https://${url}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new TypeError(`${what} is not a valid URL`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new TypeError(`${what} must be http(s)`);
  if (u.username || u.password) throw new TypeError(`${what} must not contain credentials`);
  u.search = '';
  u.hash = '';
  return u.toString().replace(/\/+$/, '');
}

/** The typed Fourthwall Open API client (see the module header). */
export class FourthwallClient {
  private readonly apiUrl: string;
  private readonly auth: AuthProvider;
  private readonly limiter: SlidingWindowLimiter;
  private readonly log: Logger | undefined;
  private readonly clock: Clock;
  private readonly random: RandomSource;
  /** Created with undici on the first request unless one was given. */
  private dispatcher: Dispatcher | undefined;
  private readonly ownsDispatcher: boolean;
  private readonly timeoutMs: number;
  private readonly deadlineMs: number;
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly userAgent: string;
  private readonly maxResponseBytes: number;

  constructor(options: FourthwallClientOptions) {
    this.apiUrl = normaliseBase(options.apiUrl, 'apiUrl');
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? cryptoRandom;
    this.log = options.logger?.child({ module: 'fourthwall' });
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.deadlineMs = options.deadlineMs ?? 60_000;
    this.maxAttempts = Math.max(1, options.retry?.maxAttempts ?? 4);
    this.baseDelayMs = options.retry?.baseDelayMs ?? 250;
    this.maxDelayMs = options.retry?.maxDelayMs ?? 5_000;
    this.userAgent = options.userAgent ?? 'giftdrop/0.1';
    this.maxResponseBytes = options.maxResponseBytes ?? 5 * 1024 * 1024;
    this.limiter = new SlidingWindowLimiter(options.rateLimit ?? DEFAULT_RATE_LIMIT, this.clock);
    this.ownsDispatcher = !options.dispatcher;
    this.dispatcher = options.dispatcher;
    const isProvider = typeof (options.auth as AuthProvider).headerFor === 'function';
    this.auth = isProvider
      ? (options.auth as AuthProvider)
      : createAuthProvider(options.auth as AuthConfig, {
          clock: this.clock,
          transport: this.tokenTransport(),
          defaultTokenUrl: `${this.apiUrl}/platform/token`,
          logger: this.log,
        });
  }

  /** Secret values of the configured credentials (for `createLogger({ secrets })`). */
  secrets(): string[] {
    return this.auth.secrets();
  }

  /** Requests waiting for the rate limiter right now. */
  get queued(): number {
    return this.limiter.waiting;
  }

  /** Closes the client's own connection pool. */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher?.close();
  }

  /** undici's `request` and the dispatcher, loading undici on the first call. */
  private async transport(): Promise<{ request: Undici['request']; dispatcher: Dispatcher }> {
    const u = await undici();
    this.dispatcher ??= new u.Agent({ keepAliveTimeout: 4_000, connect: { timeout: Math.min(this.timeoutMs, 10_000) } });
    return { request: u.request, dispatcher: this.dispatcher };
  }

  /** Keeps `util.inspect` / `console.log` of a client short and secret-free. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `FourthwallClient<${this.apiUrl}>`;
  }

  toJSON(): Record<string, unknown> {
    return { apiUrl: this.apiUrl, auth: this.auth.describe() };
  }

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
    const participants = input.participants.map((p) => ({ service: p.service ?? 'TWITCH', userId: p.userId, userName: p.userName }));
    return this.json('finishDraw', { params: { id }, body: { participants } }, S.DrawSchema);
  }

  /** `GET /gifting/draw/{id}` */
  getDraw(id: string): Promise<S.Draw> {
    return this.json('getDraw', { params: { id } }, S.DrawSchema);
  }

  /** `POST /giveaway-links` - NOT retried once it may have been sent. */
  createGiveawayLinks(input: { productId: string; number: number }): Promise<S.GiveawayPackage> {
    return this.json('createGiveawayLinks', { body: { productId: input.productId, number: input.number } }, S.GiveawayPackageSchema);
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
  bulkAddShippingLabels(request: Record<string, string | number | boolean | string[]>): Promise<S.BulkShippingLabelsResult> {
    return this.json('bulkAddShippingLabels', { query: request }, S.BulkShippingLabelsResultSchema);
  }

  // -------------------------------------------------------------------------------------------
  // Promotions (BETA)
  // -------------------------------------------------------------------------------------------
  /** `GET /promotions` */
  listPromotions(q: PageQuery & { codes?: string[] } = {}): Promise<S.Page<S.Promotion>> {
    return this.json('listPromotions', { query: { page: q.page, size: q.size, codes: q.codes } }, S.PromotionPageSchema);
  }

  /** `POST /promotions` (body: one of the promotion variants, each with `type`). NOT retried once sent. */
  createPromotion(input: { type: string } & Record<string, unknown>): Promise<S.Promotion> {
    return this.json('createPromotion', { body: input }, S.PromotionSchema);
  }

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
    return this.json('createWebhook', { body: { url: input.url, allowedTypes: input.allowedTypes } }, S.WebhookConfigSchema);
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
    return this.json('listWebhookEvents', { query: { page: q.page, size: q.size, type: q.type } }, S.WebhookEventPageSchema);
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

  // -------------------------------------------------------------------------------------------
  // Transport
  // -------------------------------------------------------------------------------------------
  private async json<T extends z.ZodType>(key: OperationKey, req: CallRequest, schema: T): Promise<z.infer<T>> {
    const { text, call } = await this.execute(key, req);
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw new FourthwallSchemaError('', ['<root>: response body is not JSON'], call);
    }
    return S.parseWire(schema, data, call);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.clock.setTimeout(resolve, ms));
  }

  private backoff(retryNo: number): number {
    const cap = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (retryNo - 1));
    const u = this.random.bytes(4).readUInt32BE(0) / 0x1_0000_0000;
    return Math.round(cap * (0.5 + 0.5 * u));
  }

  /** Runs one call: limiter, auth, attempts, retries (see the module header). */
  private async execute(key: OperationKey, req: CallRequest): Promise<{ status: number; text: string; call: FourthwallCallInfo }> {
    const spec = OPERATIONS[key];
    const path = buildPath(spec.path, req.params);
    const call: FourthwallCallInfo = { operation: key, method: spec.method, path };
    const url = `${req.baseUrl ?? this.apiUrl}${path}${queryString(req.query)}`;
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const deadline = this.clock.now() + this.deadlineMs;
    let failures = 0;
    let refreshed = false;

    for (let attemptNo = 1; ; attemptNo++) {
      const result = await this.attempt(spec.auth, call, url, body, deadline, attemptNo);
      if (result.kind === 'ok') return { status: result.status, text: result.text, call };
      if (result.kind === 'fail') {
        // e.g. a 2xx body too large to read: the server did the work.
        if (!spec.idempotent && result.error instanceof FourthwallNetworkError && result.error.reachedServer)
          throw new FourthwallOutcomeUnknownError(call, { cause: result.error });
        throw result.error;
      }
      if (result.kind === 'unauthorized') {
        if (refreshed) throw new FourthwallAuthError(401, result.error.apiCode, result.error.context, call);
        refreshed = true;
        let retry = false;
        try {
          retry = await this.auth.onUnauthorized(result.header);
        } catch (e) {
          throw this.tokenFailure(e, call);
        }
        if (!retry) throw new FourthwallAuthError(401, result.error.apiCode, result.error.context, call);
        continue;
      }
      // retry
      if (result.reached && !spec.idempotent) throw new FourthwallOutcomeUnknownError(call, { cause: result.error });
      failures++;
      if (failures >= this.maxAttempts) throw result.error;
      const delay = result.delayMs ?? this.backoff(failures);
      if (this.clock.now() + delay >= deadline) throw result.error;
      this.log?.debug(
        { op: key, method: spec.method, path, attempt: attemptNo, retryInMs: delay, error: result.error.code },
        'fourthwall call will be retried',
      );
      await this.sleep(delay);
    }
  }

  /** Token endpoint failure -> auth error (rejected) or a not-sent network error (transient). */
  private tokenFailure(e: unknown, call: FourthwallCallInfo): Error {
    if (e instanceof FourthwallTokenError && e.status !== undefined && e.status >= 400 && e.status < 500) {
      return new FourthwallAuthError(401, 'OAUTH_REFRESH_FAILED', e.oauthError ? { oauthError: e.oauthError } : {}, call, { cause: e });
    }
    return new FourthwallNetworkError('TOKEN_ENDPOINT', false, call, { cause: e });
  }

  private async attempt(
    requirement: 'A' | 'B' | 'none',
    call: FourthwallCallInfo,
    url: string,
    body: string | undefined,
    deadline: number,
    attemptNo: number,
  ): Promise<Attempt> {
    let header: AuthHeader | undefined;
    try {
      header = await this.auth.headerFor(requirement);
    } catch (e) {
      const err = this.tokenFailure(e, call);
      return err instanceof FourthwallAuthError ? { kind: 'fail', error: err } : { kind: 'retry', error: err as FourthwallError, reached: false };
    }

    const queueAbort = new AbortController();
    const queueTimer = this.clock.setTimeout(() => queueAbort.abort(), Math.max(0, deadline - this.clock.now()));
    let permit;
    try {
      permit = await this.limiter.acquire(queueAbort.signal);
    } catch {
      return { kind: 'fail', error: new FourthwallTimeoutError('queued', this.deadlineMs, call) };
    } finally {
      queueTimer.cancel();
    }

    const started = this.clock.now();
    const budget = Math.min(this.timeoutMs, deadline - started);
    const ac = new AbortController();
    let timer: TimerHandle | undefined;
    const headers: Record<string, string> = { accept: call.operation === 'fetchProductFeed' ? 'application/rss+xml, application/xml, text/xml' : 'application/json', 'user-agent': this.userAgent };
    if (header) headers.authorization = header.value;
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      if (budget <= 0) return { kind: 'fail', error: new FourthwallTimeoutError('request', this.deadlineMs, call) };
      timer = this.clock.setTimeout(() => ac.abort(), budget);
      let status: number;
      let text: string;
      let retryAfter: string | string[] | undefined;
      try {
        const { request, dispatcher } = await this.transport();
        const res = await request(url, {
          method: call.method as Dispatcher.HttpMethod,
          headers,
          body,
          dispatcher,
          signal: ac.signal,
          headersTimeout: budget,
          bodyTimeout: budget,
        });
        // The request has reached the server by now: its slot's cooldown may start.
        permit.release();
        status = res.statusCode;
        retryAfter = res.headers['retry-after'];
        text = await this.readBody(res.body, status >= 200 && status < 300 ? this.maxResponseBytes : 64 * 1024, call);
      } catch (e) {
        permit.release();
        const ms = this.clock.now() - started;
        const code = errCode(e);
        const timedOut = ac.signal.aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
        this.log?.debug({ op: call.operation, method: call.method, path: call.path, attempt: attemptNo, ms, error: timedOut ? 'timeout' : code ?? 'network' }, 'fourthwall call failed');
        if (e instanceof FourthwallError) return { kind: 'fail', error: e };
        if (timedOut) return { kind: 'retry', error: new FourthwallTimeoutError('request', ms, call, { cause: e }), reached: true };
        const notSent = code !== undefined && NOT_SENT_CODES.has(code);
        return { kind: 'retry', error: new FourthwallNetworkError(code, !notSent, call, { cause: e }), reached: !notSent };
      }
      const ms = this.clock.now() - started;
      this.log?.debug({ op: call.operation, method: call.method, path: call.path, status, attempt: attemptNo, ms }, 'fourthwall call');
      if (status >= 200 && status < 300) return { kind: 'ok', status, text };
      return this.classifyStatus(status, text, retryAfter, call, header);
    } finally {
      timer?.cancel();
      permit.release();
    }
  }

  private classifyStatus(
    status: number,
    text: string,
    retryAfterHeader: string | string[] | undefined,
    call: FourthwallCallInfo,
    header: AuthHeader | undefined,
  ): Attempt {
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    const errBody = S.ErrorBodySchema.safeParse(parsed);
    const apiCode = errBody.success ? errBody.data.code.slice(0, 120) : undefined;
    const context = errorContext(parsed);
    const retryAfterMs = parseRetryAfter(retryAfterHeader, this.clock.now());
    if (status === 401) {
      const error = new FourthwallAuthError(status, apiCode, context, call);
      return header ? { kind: 'unauthorized', error, header } : { kind: 'fail', error };
    }
    if (status === 403) return { kind: 'fail', error: new FourthwallAuthError(status, apiCode, context, call) };
    const error = new FourthwallApiError(status, apiCode, context, call, { retryAfterMs });
    if (status === 429) return { kind: 'retry', error, reached: false, delayMs: retryAfterMs };
    if (status >= 500) return { kind: 'retry', error, reached: true, delayMs: retryAfterMs };
    return { kind: 'fail', error };
  }

  private async readBody(body: Dispatcher.ResponseData['body'], limit: number, call: FourthwallCallInfo): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > limit) {
        body.destroy();
        throw new FourthwallNetworkError('RESPONSE_TOO_LARGE', true, call);
      }
      chunks.push(buf);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  /** Token requests through the same limiter and timeouts as API calls. */
  private tokenTransport(): TokenTransport {
    return (url, form) =>
      this.limiter.schedule(async () => {
        const ac = new AbortController();
        const timer = this.clock.setTimeout(() => ac.abort(), this.timeoutMs);
        try {
          const { request, dispatcher } = await this.transport();
          const res = await request(url, {
            method: 'POST',
            dispatcher,
            headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'user-agent': this.userAgent },
            body: form.toString(),
            signal: ac.signal,
            headersTimeout: this.timeoutMs,
            bodyTimeout: this.timeoutMs,
          });
          const text = await this.readBody(res.body, 64 * 1024, { operation: 'oauthToken', method: 'POST', path: '<token url>' });
          this.log?.debug({ op: 'oauthToken', method: 'POST', status: res.statusCode }, 'fourthwall token endpoint');
          return { status: res.statusCode, body: jsonOrUndefined(text) };
        } finally {
          timer.cancel();
        }
      });
  }
}
