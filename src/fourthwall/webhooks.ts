/**
 * Fourthwall webhook deliveries: signature verification over the raw bytes and envelope parsing.
 *
 * Contract:
 * - `verifyWebhookSignature` checks base64(HMAC-SHA256(key as UTF-8, raw body bytes)) from
 *   `X-Fourthwall-Hmac-SHA256` (shop webhook secret) or `X-Fourthwall-Hmac-Apps-SHA256` (platform
 *   app HMAC key). The comparison is constant-time over equal-length digests; a missing, short,
 *   long or non-base64 header is a rejection with a reason, never a throw. Verify BEFORE parsing.
 * - `parseWebhookEvent` parses the envelope `{testMode, id, webhookId, shopId, type, apiVersion,
 *   createdAt, data}` and types `data` for the known event types; unknown types are accepted as
 *   opaque `{ type, data: unknown }`. Bad JSON or a bad envelope / known payload throws
 *   WebhookPayloadError naming the field.
 *
 * Deliberately not here: HTTP routing, the 2 s answer budget, dedupe by event id (src/http/).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { GiftdropError } from '../shared/errors.js';
import {
  DonationSchema,
  DrawSchema,
  GiftPurchaseSchema,
  MoneySchema,
  OrderSchema,
  ProductSchema,
  PromotionSchema,
  ThankYouSchema,
  formatIssuePath,
  type Donation,
  type Draw,
  type GiftPurchase,
  type Order,
  type Product,
  type ThankYou,
} from './schemas.js';

/** Header carrying the shop-secret signature. */
export const SHOP_SIGNATURE_HEADER = 'x-fourthwall-hmac-sha256';
/** Header carrying the platform-app signature. */
export const APP_SIGNATURE_HEADER = 'x-fourthwall-hmac-apps-sha256';

export type WebhookVerification = { ok: true; scheme: 'shop' | 'app' } | { ok: false; reason: string };

/** Header bag as node:http gives it (case-insensitive lookup is done here). */
export type HeaderBag = Record<string, string | string[] | undefined> | Headers;

const SHA256_BYTES = 32;
const BASE64_RE = /^[A-Za-z0-9+/]+={0,2}$/;

/** base64(HMAC-SHA256(secret UTF-8, raw)) - what Fourthwall puts in the signature header. */
export function signWebhookBody(raw: Buffer | string, secret: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw)
    .digest('base64');
}

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  let v = bag[name];
  if (v === undefined) {
    const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
    v = key === undefined ? undefined : bag[key];
  }
  return Array.isArray(v) ? v[0] : v;
}

/** Constant-time check of one header against one key; returns a reason on failure. */
function check(raw: Buffer, given: string | undefined, key: string): string | undefined {
  if (given === undefined || given.trim() === '') return 'missing signature header';
  const text = given.trim();
  if (!BASE64_RE.test(text) || text.length % 4 !== 0) return 'signature header is not base64';
  const provided = Buffer.from(text, 'base64');
  if (provided.length !== SHA256_BYTES) return 'signature has the wrong length';
  const expected = createHmac('sha256', Buffer.from(key, 'utf8')).update(raw).digest();
  return timingSafeEqual(provided, expected) ? undefined : 'signature mismatch';
}

/**
 * The cheap check before a body is read: the request carries, for a configured secret or key, a
 * signature header that COULD be one (base64 of 32 bytes). A request without one is refused
 * without reading its body; one with it still has its body verified (verifyWebhookSignature).
 */
export function hasSignatureShape(headers: HeaderBag, keys: { webhookSecret?: string; appHmacKey?: string }): boolean {
  const shaped = (name: string) => {
    const text = (header(headers, name) ?? '').trim();
    return BASE64_RE.test(text) && text.length % 4 === 0 && Buffer.from(text, 'base64').length === SHA256_BYTES;
  };
  return (!!keys.webhookSecret && shaped(SHOP_SIGNATURE_HEADER)) || (!!keys.appHmacKey && shaped(APP_SIGNATURE_HEADER));
}

/**
 * Verifies a delivery's signature over its raw body. Tries the shop secret (shop header) and the
 * app key (app header), whichever are configured; `ok` when one matches.
 */
export function verifyWebhookSignature(
  rawBody: Buffer,
  headers: HeaderBag,
  keys: { webhookSecret?: string; appHmacKey?: string },
): WebhookVerification {
  if (!keys.webhookSecret && !keys.appHmacKey)
    return { ok: false, reason: 'no webhook secret or app HMAC key configured' };
  const reasons: string[] = [];
  if (keys.webhookSecret) {
    const r = check(rawBody, header(headers, SHOP_SIGNATURE_HEADER), keys.webhookSecret);
    if (r === undefined) return { ok: true, scheme: 'shop' };
    reasons.push(`shop: ${r}`);
  }
  if (keys.appHmacKey) {
    const r = check(rawBody, header(headers, APP_SIGNATURE_HEADER), keys.appHmacKey);
    if (r === undefined) return { ok: true, scheme: 'app' };
    reasons.push(`app: ${r}`);
  }
  return { ok: false, reason: reasons.join('; ') };
}

// ---------------------------------------------------------------------------------------------
// Envelope
// ---------------------------------------------------------------------------------------------
/** Every event type of the user's spec. Newer types are accepted as unknown. */
export const KNOWN_EVENT_TYPES = [
  'ORDER_PLACED',
  'ORDER_UPDATED',
  'GIFT_PURCHASE',
  'PRODUCT_CREATED',
  'PRODUCT_UPDATED',
  'DONATION',
  'SUBSCRIPTION_PURCHASED',
  'SUBSCRIPTION_EXPIRED',
  'SUBSCRIPTION_CHANGED',
  'NEWSLETTER_SUBSCRIBED',
  'THANK_YOU_SENT',
  'GIFT_DRAW_STARTED',
  'GIFT_DRAW_ENDED',
  'PROMOTION_CREATED',
  'PROMOTION_UPDATED',
  'PROMOTION_STATUS_CHANGED',
] as const;
export type KnownEventType = (typeof KNOWN_EVENT_TYPES)[number];

export const WebhookEnvelopeSchema = z.looseObject({
  /** Untyped in the published document: any value is accepted; only `true` / "true" mark a test event. */
  testMode: z.unknown(),
  id: z.string().min(1),
  webhookId: z.string().nullish(),
  shopId: z.string().nullish(),
  type: z.string().min(1),
  apiVersion: z.string().nullish(),
  createdAt: z.string().nullish(),
  data: z.unknown(),
});

// Event types the bot does not act on accept everything the published document allows (checked
// against the document with a schema validator): OrderUpdatedV1 requires nothing, OfferUpdatedV1
// is `{product: <page of offers>}`, and PromotionV1 requires only `type`.
const OrderUpdatedSchema = z.looseObject({
  order: OrderSchema.nullish(),
  update: z.looseObject({ type: z.string().nullish() }).nullish(),
});
const ProductUpdatedSchema = z.looseObject({ product: z.unknown().optional() });
const PromotionEventSchema = PromotionSchema.extend({ id: z.string().nullish() });
/** MembershipSupporterV1 (its `subscription` is ACTIVE/CANCELLED/SUSPENDED with a tier variant, or NONE). */
const SubscriptionSchema = z.looseObject({
  id: z.string().nullish(),
  email: z.string().nullish(),
  nickname: z.string().nullish(),
  subscription: z
    .looseObject({
      type: z.string().nullish(),
      variant: z.looseObject({ interval: z.string().nullish(), amount: MoneySchema.nullish() }).nullish(),
    })
    .nullish(),
});
const NewsletterSchema = z.looseObject({ email: z.string().nullish() });

const DATA_SCHEMAS: Record<KnownEventType, z.ZodType> = {
  GIFT_DRAW_STARTED: DrawSchema,
  GIFT_DRAW_ENDED: DrawSchema,
  GIFT_PURCHASE: GiftPurchaseSchema,
  ORDER_PLACED: OrderSchema,
  ORDER_UPDATED: OrderUpdatedSchema,
  DONATION: DonationSchema,
  THANK_YOU_SENT: ThankYouSchema,
  PRODUCT_CREATED: ProductSchema,
  PRODUCT_UPDATED: ProductUpdatedSchema,
  PROMOTION_CREATED: PromotionEventSchema,
  PROMOTION_UPDATED: PromotionEventSchema,
  PROMOTION_STATUS_CHANGED: PromotionEventSchema,
  SUBSCRIPTION_PURCHASED: SubscriptionSchema,
  SUBSCRIPTION_EXPIRED: SubscriptionSchema,
  SUBSCRIPTION_CHANGED: SubscriptionSchema,
  NEWSLETTER_SUBSCRIBED: NewsletterSchema,
};

export type OrderUpdatedData = z.infer<typeof OrderUpdatedSchema>;
export type ProductUpdatedData = z.infer<typeof ProductUpdatedSchema>;
export type PromotionEventData = z.infer<typeof PromotionEventSchema>;
export type SubscriptionData = z.infer<typeof SubscriptionSchema>;
export type NewsletterData = z.infer<typeof NewsletterSchema>;

/** Fields every envelope shares. */
export interface WebhookEnvelopeBase {
  testMode: boolean;
  id: string;
  webhookId?: string;
  shopId?: string;
  apiVersion?: string;
  createdAt?: string;
}

type Typed<T extends string, D> = WebhookEnvelopeBase & { type: T; known: true; data: D };

/** A parsed delivery: `known` narrows `type` and types `data`. */
export type WebhookEvent =
  | Typed<'GIFT_DRAW_STARTED' | 'GIFT_DRAW_ENDED', Draw>
  | Typed<'GIFT_PURCHASE', GiftPurchase>
  | Typed<'ORDER_PLACED', Order>
  | Typed<'ORDER_UPDATED', OrderUpdatedData>
  | Typed<'DONATION', Donation>
  | Typed<'THANK_YOU_SENT', ThankYou>
  | Typed<'PRODUCT_CREATED', Product>
  | Typed<'PRODUCT_UPDATED', ProductUpdatedData>
  | Typed<'PROMOTION_CREATED' | 'PROMOTION_UPDATED' | 'PROMOTION_STATUS_CHANGED', PromotionEventData>
  | Typed<'SUBSCRIPTION_PURCHASED' | 'SUBSCRIPTION_EXPIRED' | 'SUBSCRIPTION_CHANGED', SubscriptionData>
  | Typed<'NEWSLETTER_SUBSCRIBED', NewsletterData>
  | (WebhookEnvelopeBase & { type: string; known: false; data: unknown });

/** A delivery that is not valid JSON or not a valid envelope / payload. `field` names the spot. */
export class WebhookPayloadError extends GiftdropError {
  readonly field: string;
  constructor(field: string, message: string) {
    super('FOURTHWALL_WEBHOOK_PAYLOAD', message);
    this.field = field;
  }
}

function isKnown(type: string): type is KnownEventType {
  return (KNOWN_EVENT_TYPES as readonly string[]).includes(type);
}

/** Parses a (verified) raw delivery body; see the module header. */
export function parseWebhookEvent(raw: Buffer | string): WebhookEvent {
  let json: unknown;
  try {
    json = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
  } catch {
    throw new WebhookPayloadError('', 'webhook body is not valid JSON');
  }
  const env = WebhookEnvelopeSchema.safeParse(json);
  if (!env.success) {
    const issue = env.error.issues[0];
    const field = formatIssuePath(issue?.path ?? []);
    throw new WebhookPayloadError(
      field,
      `webhook envelope invalid at ${field || '<root>'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  const e = env.data;
  if (!('data' in (json as object))) throw new WebhookPayloadError('data', 'webhook envelope invalid at data: missing');
  const base: WebhookEnvelopeBase = {
    testMode: e.testMode === true || e.testMode === 'true',
    id: e.id,
    webhookId: e.webhookId ?? undefined,
    shopId: e.shopId ?? undefined,
    apiVersion: e.apiVersion ?? undefined,
    createdAt: e.createdAt ?? undefined,
  };
  if (!isKnown(e.type)) return { ...base, type: e.type, known: false, data: e.data };
  const d = DATA_SCHEMAS[e.type].safeParse(e.data);
  if (!d.success) {
    const issue = d.error.issues[0];
    const field = formatIssuePath(['data', ...(issue?.path ?? [])]);
    throw new WebhookPayloadError(field, `${e.type} payload invalid at ${field}: ${issue?.message ?? 'invalid'}`);
  }
  return { ...base, type: e.type, known: true, data: d.data } as WebhookEvent;
}
