/**
 * The settings-file sections of the shop-on-stream features (part of the one config module;
 * ./schema.ts includes them): `alerts` (supporter alerts in chat), `merchTrain` (a link giveaway
 * every Nth order), `merch` (`!merch` and the product cache) and `promo` (`!promo` and the
 * automatic announcement of a promotion that goes live). Pure data and defaults, no I/O.
 *
 * Template placeholders: `{user}` (the supporter's chosen username, or "someone"), `{products}`
 * (product names), `{amount}` (" ($25.00)" with a leading space when `alerts.showAmounts` is on,
 * otherwise empty), `{tier}` (subscriptions: "monthly"/"annual"), `{count}`, `{noun}`, `{window}`
 * and `{users}` in the burst line.
 */
import { z } from 'zod';

const template = (def: string) => z.string().trim().min(1).max(400).default(def);

const alertKind = (enabled: boolean, def: string) =>
  z.strictObject({ enabled: z.boolean().default(enabled), template: template(def) }).prefault({});

export const alertsSchema = z
  .strictObject({
    order: alertKind(true, '🛍️ {user} just bought {products}{amount}. Thank you!'),
    donation: alertKind(true, '💜 {user} just donated{amount}. Thank you!'),
    subscription: alertKind(false, '⭐ {user} just became a {tier} member{amount}. Welcome!'),
    thankYou: alertKind(false, '💌 A thank-you was just sent to {user}.'),
    /** Off by default: the gift draw a purchase opens is announced in chat already. */
    giftPurchase: alertKind(false, '🎁 {user} just gifted {products}{amount} to chat!'),
    /** Show the amount (`{amount}`) in chat and on the overlay. */
    showAmounts: z.boolean().default(false),
    /** Alerts of one kind within this window after the first are coalesced into one line. */
    burstWindowSeconds: z.number().int().min(1).max(3600).default(60),
    burstTemplate: template('{count} new {noun} in the last {window}. Thank you {users}!'),
  })
  .prefault({});

export const merchTrainSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** Every Nth qualifying order opens the train's giveaway. */
    everyOrders: z.number().int().min(1).max(10_000).default(10),
    /** When set, every order whose total is at least this much (shop currency) opens it instead. */
    minOrderTotal: z.number().positive().optional(),
    /** The reward: a product id, slug or name (looked up like `!giveaway start`). */
    product: z.string().trim().min(1).max(200).optional(),
    winners: z.number().int().min(1).max(100).default(1),
    seconds: z.number().int().min(5).max(3600).default(60),
    /** Count only orders placed while the shop's stream is marked live. */
    onlyWhileLive: z.boolean().default(true),
    announcement: template('🚂 All aboard the merch train! Order #{count} unlocked a giveaway of {product}.'),
  })
  .prefault({})
  .refine((t) => !t.enabled || t.product !== undefined, {
    message: 'merchTrain.product is required when merchTrain.enabled is true (a product id, slug or name)',
    path: ['product'],
  });

export const merchSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    /** How many products `!merch` names. */
    products: z.number().int().min(0).max(10).default(3),
    /** `!merch` for viewers: once per this many seconds in the channel. */
    cooldownSeconds: z.number().int().min(0).max(3600).default(30),
    /** The product list is refreshed in the background this often. */
    refreshMinutes: z.number().int().min(1).max(1440).default(10),
  })
  .prefault({});

export const promoSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    /** Announce a promotion when Fourthwall says it went live (PROMOTION_STATUS_CHANGED). */
    autoAnnounce: z.boolean().default(false),
    template: template('🏷️ Use code {code} in the shop: {title}'),
  })
  .prefault({});

export type AlertsSettings = z.infer<typeof alertsSchema>;
export type MerchTrainSettings = z.infer<typeof merchTrainSchema>;
export type PromoSettings = z.infer<typeof promoSchema>;
