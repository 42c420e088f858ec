/**
 * zod 4 wire schemas for every Fourthwall response and webhook payload the client handles, and
 * their inferred TypeScript types.
 *
 * Contract: objects are loose (unknown fields are kept, never rejected) and only what the bot
 * relies on is required (draw id/type/offer{id,name}/gifts[{id,status}]/createdAt/durationSeconds,
 * giveaway links packageId + giveawayLinks[{id,status}], streaming services, shop id/name/domain,
 * webhook config id/url/allowedTypes, page `results`). Optional fields accept `null` as well,
 * because JSON APIs send either. `parseWire` turns a mismatch into FourthwallSchemaError naming the
 * operation and the first bad field path (e.g. `gifts[0].id`).
 *
 * Deliberately not here: domain types (src/giveaway/ports.ts) - adapters map wire to domain.
 */
import { z } from 'zod';
import { FourthwallSchemaError, type FourthwallCallInfo } from './errors.js';

const str = z.string();
const optStr = z.string().nullish();
const optNum = z.number().nullish();

export const MoneySchema = z.looseObject({ value: z.number(), currency: z.string() });
const optMoney = MoneySchema.nullish();
export const ImageSchema = z.looseObject({ id: optStr, url: optStr, width: optNum, height: optNum });

/** OfferSummary / OfferGiftPurchaseV1. */
export const OfferSummarySchema = z.looseObject({
  id: str,
  name: str,
  slug: optStr,
  description: optStr,
  primaryImage: ImageSchema.nullish(),
});

// ---------------------------------------------------------------------------------------------
// Gifting
// ---------------------------------------------------------------------------------------------
export const DrawWinnerSchema = z.looseObject({
  selectedAt: optStr,
  /** Bearer secret: the winner's redeem link. */
  redeemUri: optStr,
  username: optStr,
  email: optStr,
});

export const DrawGiftSchema = z.looseObject({
  id: str,
  status: str,
  winner: DrawWinnerSchema.nullish(),
  giftCardId: optStr,
  promotionId: optStr,
  orderId: optStr,
  orderFriendlyId: optStr,
});

/** GiftDraftV1: GET draw, finish draw, GIFT_DRAW_STARTED / GIFT_DRAW_ENDED data. */
export const DrawSchema = z.looseObject({
  id: str,
  type: str,
  giveawayId: optStr,
  giveawayFriendlyId: optStr,
  shopId: optStr,
  offer: OfferSummarySchema,
  amounts: z.looseObject({ subtotal: MoneySchema.nullish(), total: MoneySchema.nullish() }).nullish(),
  email: optStr,
  username: optStr,
  message: optStr,
  gifts: z.array(DrawGiftSchema),
  createdAt: str,
  /** int64 with no minimum in the published document: any number is accepted; the domain clamps it. */
  durationSeconds: z.number(),
});

export const GiftPurchaseGiftSchema = z.looseObject({
  id: str,
  status: str,
  winner: z.looseObject({ selectedAt: optStr, username: optStr, email: optStr }).nullish(),
  promotionId: optStr,
  orderId: optStr,
  orderFriendlyId: optStr,
});

/** GiftPurchaseV1: GET gift purchase, GIFT_PURCHASE data. */
export const GiftPurchaseSchema = z.looseObject({
  id: str,
  friendlyId: optStr,
  shopId: optStr,
  offer: OfferSummarySchema,
  amounts: z
    .looseObject({ subtotal: optMoney, tax: optMoney, total: optMoney, profit: optMoney, prepaidShipping: optMoney })
    .nullish(),
  email: optStr,
  username: optStr,
  message: optStr,
  quantity: z.number().int().nullish(),
  gifts: z.array(GiftPurchaseGiftSchema),
  createdAt: str,
});

export const GiveawayLinkSchema = z.looseObject({
  id: str,
  /** Bearer secret. */
  link: optStr,
  status: str,
  productId: optStr,
  createdAt: optStr,
  cancelledAt: optStr,
  redeemedAt: optStr,
});

/** GiveawayLinksV1: create giveaway links, get package. */
export const GiveawayPackageSchema = z.looseObject({
  packageId: str,
  giveawayLinks: z.array(GiveawayLinkSchema),
});

export const GiveawayPackagesSchema = z.looseObject({
  packages: z.array(z.looseObject({ packageId: str, createdAt: optStr })),
});

export const GiftingConfigSchema = z.looseObject({
  enabled: z.boolean().nullish(),
  entryTimeLimitSeconds: z.number().int().nullish(),
  platform: optStr,
  shipping: z.unknown().optional(),
  products: z.unknown().optional(),
});

// ---------------------------------------------------------------------------------------------
// Streaming, shop
// ---------------------------------------------------------------------------------------------
export const StreamingServiceSchema = z.looseObject({
  type: str,
  status: str,
  broadcasterId: optStr,
  broadcasterLogin: optStr,
  thumbnailUrl: optStr,
});

export const StreamingStatusSchema = z.looseObject({
  shopId: optStr,
  services: z.array(StreamingServiceSchema),
});

export const ShopSchema = z.looseObject({ id: str, name: str, domain: str, publicDomain: optStr });

export const ShopContactInfoSchema = z.looseObject({
  shopEmail: optStr,
  contactEmail: optStr,
  transactionalEmail: optStr,
  phone: optStr,
  shopName: optStr,
  domain: optStr,
  location: z.looseObject({}).nullish(),
});

// ---------------------------------------------------------------------------------------------
// Donations, orders, products, thank-yous
// ---------------------------------------------------------------------------------------------
export const DonationSchema = z.looseObject({
  id: str,
  shopId: optStr,
  status: optStr,
  email: optStr,
  username: optStr,
  message: optStr,
  amounts: z.looseObject({ total: MoneySchema.nullish() }).nullish(),
  createdAt: optStr,
  updatedAt: optStr,
});

export const OrderSchema = z.looseObject({
  id: str,
  shopId: optStr,
  friendlyId: optStr,
  status: str,
  email: optStr,
  username: optStr,
  message: optStr,
  amounts: z
    .looseObject({
      subtotal: optMoney,
      shipping: optMoney,
      tax: optMoney,
      donation: optMoney,
      discount: optMoney,
      total: optMoney,
      giftCards: z.array(z.looseObject({ code: optStr, amountUsed: optMoney })).nullish(),
    })
    .nullish(),
  offers: z.array(z.looseObject({ id: optStr, name: optStr })).nullish(),
  source: z.looseObject({ type: optStr, giftId: optStr }).nullish(),
  createdAt: optStr,
  updatedAt: optStr,
});

export const ProductVariantSchema = z.looseObject({
  id: str,
  name: optStr,
  sku: optStr,
  unitPrice: MoneySchema.nullish(),
  stock: z.looseObject({ type: optStr, inStock: optNum }).nullish(),
});

export const ProductSchema = z.looseObject({
  id: str,
  name: str,
  slug: optStr,
  description: optStr,
  state: z.looseObject({ type: optStr }).nullish(),
  access: z.looseObject({ type: optStr }).nullish(),
  images: z.array(ImageSchema).nullish(),
  variants: z.array(ProductVariantSchema).nullish(),
  createdAt: optStr,
  updatedAt: optStr,
});

export const ThankYouSchema = z.looseObject({
  id: str,
  mediaUrl: optStr,
  contribution: z
    .looseObject({
      type: optStr,
      id: optStr,
      shopId: optStr,
      supporter: z.looseObject({ email: optStr, username: optStr, message: optStr }).nullish(),
    })
    .nullish(),
});

// ---------------------------------------------------------------------------------------------
// Fulfillments, promotions
// ---------------------------------------------------------------------------------------------
export const FulfillmentCreatedSchema = z.looseObject({ fulfillmentId: str });

export const FulfillmentSchema = z.looseObject({
  id: str,
  shopId: optStr,
  orderId: optStr,
  status: optStr,
  fulfillmentService: optStr,
  items: z.array(z.looseObject({ variantId: optStr, quantity: optNum })).nullish(),
  shippingLabels: z.array(z.looseObject({})).nullish(),
  createdAt: optStr,
  updatedAt: optStr,
});

export const FulfillmentIdMatchesSchema = z.array(
  z.looseObject({ friendlyId: str, fulfillmentService: optStr, fulfillmentId: str }),
);

export const BulkShippingLabelsResultSchema = z.looseObject({ result: z.array(FulfillmentSchema) });

/**
 * PromotionV1: the published document requires only `type` (its variants add `id`, `code` or
 * `codes[]`, `status` Live/Ended/Archived/AllUsed, `discount`, ...), so webhook data with no id
 * is accepted.
 */
export const PromotionSchema = z.looseObject({
  type: str,
  id: optStr,
  title: optStr,
  code: optStr,
  codes: z.array(z.looseObject({ id: optStr, code: optStr, status: optStr, usageCount: optNum })).nullish(),
  status: optStr,
  usageCount: optNum,
  discount: z.looseObject({ type: optStr, percentage: optNum, money: optMoney }).nullish(),
});

// ---------------------------------------------------------------------------------------------
// Webhooks
// ---------------------------------------------------------------------------------------------
export const WebhookConfigSchema = z.looseObject({
  id: str,
  url: str,
  allowedTypes: z.array(str),
  apiVersion: optStr,
});

export const WebhookSecretSchema = z.looseObject({ secret: str });

/** A past delivery from `GET /webhook-events` (its `body` is the JSON envelope as a string). */
export const WebhookEventRecordSchema = z.looseObject({
  id: str,
  type: str,
  apiVersion: optStr,
  createdAt: optStr,
  updatedAt: optStr,
  body: optStr,
  testMode: z.boolean().nullish(),
  state: optStr,
  error: optStr,
  url: optStr,
});

// ---------------------------------------------------------------------------------------------
// Pages, errors, tokens
// ---------------------------------------------------------------------------------------------
/** A list page: only `results` is required. */
export function pageSchema<T extends z.ZodType>(item: T) {
  return z.looseObject({
    results: z.array(item),
    total: optNum,
    page: optNum,
    size: optNum,
    totalPages: optNum,
  });
}

export const DonationPageSchema = pageSchema(DonationSchema);
export const OrderPageSchema = pageSchema(OrderSchema);
export const ProductPageSchema = pageSchema(ProductSchema);
export const PromotionPageSchema = pageSchema(PromotionSchema);
export const WebhookConfigPageSchema = pageSchema(WebhookConfigSchema);
export const WebhookEventPageSchema = pageSchema(WebhookEventRecordSchema);

/** Error bodies: `{ code, ...context }`. */
export const ErrorBodySchema = z.looseObject({ code: str });

/** OAuth token endpoint answer. */
export const TokenResponseSchema = z.looseObject({
  access_token: z.string().min(1),
  refresh_token: optStr,
  expires_in: optNum,
  refresh_expires_in: optNum,
  token_type: optStr,
  scope: optStr,
});

export type Money = z.infer<typeof MoneySchema>;
export type OfferSummary = z.infer<typeof OfferSummarySchema>;
export type DrawWinner = z.infer<typeof DrawWinnerSchema>;
export type DrawGift = z.infer<typeof DrawGiftSchema>;
export type Draw = z.infer<typeof DrawSchema>;
export type GiftPurchase = z.infer<typeof GiftPurchaseSchema>;
export type GiveawayLink = z.infer<typeof GiveawayLinkSchema>;
export type GiveawayPackage = z.infer<typeof GiveawayPackageSchema>;
export type GiveawayPackages = z.infer<typeof GiveawayPackagesSchema>;
export type GiftingConfig = z.infer<typeof GiftingConfigSchema>;
export type StreamingService = z.infer<typeof StreamingServiceSchema>;
export type StreamingStatus = z.infer<typeof StreamingStatusSchema>;
export type Shop = z.infer<typeof ShopSchema>;
export type ShopContactInfo = z.infer<typeof ShopContactInfoSchema>;
export type Donation = z.infer<typeof DonationSchema>;
export type Order = z.infer<typeof OrderSchema>;
export type Product = z.infer<typeof ProductSchema>;
export type ThankYou = z.infer<typeof ThankYouSchema>;
export type FulfillmentCreated = z.infer<typeof FulfillmentCreatedSchema>;
export type Fulfillment = z.infer<typeof FulfillmentSchema>;
export type FulfillmentIdMatches = z.infer<typeof FulfillmentIdMatchesSchema>;
export type BulkShippingLabelsResult = z.infer<typeof BulkShippingLabelsResultSchema>;
export type Promotion = z.infer<typeof PromotionSchema>;
export type WebhookConfig = z.infer<typeof WebhookConfigSchema>;
export type WebhookSecret = z.infer<typeof WebhookSecretSchema>;
export type WebhookEventRecord = z.infer<typeof WebhookEventRecordSchema>;
export type ErrorBody = z.infer<typeof ErrorBodySchema>;
export type TokenResponse = z.infer<typeof TokenResponseSchema>;
/** A list page of `T`. */
export interface Page<T> {
  results: T[];
  total?: number | null;
  page?: number | null;
  size?: number | null;
  totalPages?: number | null;
  [k: string]: unknown;
}

/** Formats a zod issue path the way a JS reader writes it: `gifts[0].winner.redeemUri`. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out ? `.${String(seg)}` : String(seg);
  }
  return out;
}

/**
 * Parses `data` with `schema`; on mismatch throws FourthwallSchemaError naming the call and the
 * first bad field. Messages never include the offending value.
 */
export function parseWire<T extends z.ZodType>(schema: T, data: unknown, call: FourthwallCallInfo): z.infer<T> {
  const r = schema.safeParse(data);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => `${formatIssuePath(i.path) || '<root>'}: ${i.message}`);
  throw new FourthwallSchemaError(formatIssuePath(r.error.issues[0]?.path ?? []), issues, call);
}
