/**
 * Wire shapes the Fourthwall sandbox stores and answers with, mirroring the published OpenAPI
 * document (Fourthwall's field names, ids and enums). These are the sandbox's own types: the
 * typed client in src/fourthwall/ keeps its own schemas, so the two can check each other.
 * No behaviour lives here.
 */

export interface Money {
  value: number;
  currency: string;
}

export interface Image {
  id: string;
  url: string;
  width: number;
  height: number;
  transformedUrl: string;
}

export interface VariantAttributes {
  description: string;
  color?: { name: string; swatch: string };
  size?: { name: string };
}

export type Stock = { type: 'LIMITED'; inStock: number } | { type: 'UNLIMITED' };

export interface Variant {
  id: string;
  name: string;
  sku: string;
  unitPrice: Money;
  attributes: VariantAttributes;
  stock: Stock;
  weight: { value: number; unit: string };
  dimensions: { length: number; width: number; height: number; unit: string };
  images: Image[];
}

export interface Product {
  id: string;
  name: string;
  slug: string;
  description: string;
  type: 'STANDARD' | 'GIFT_CARD' | 'UNKNOWN';
  state: { type: 'AVAILABLE' | 'SOLD_OUT' };
  access: { type: 'PUBLIC' | 'HIDDEN' | 'ARCHIVED' };
  thumbnailImage?: Image;
  images: Image[];
  variants: Variant[];
  createdAt: string;
  updatedAt: string;
}

export interface OfferSummary {
  id: string;
  name: string;
  slug: string;
  description: string;
  primaryImage?: Image;
}

export interface Shop {
  id: string;
  name: string;
  domain: string;
  publicDomain: string;
}

export interface ContactInfo {
  shopEmail: string;
  contactEmail: string;
  transactionalEmail: string;
  customerSupportEmail: string;
  phone: string;
  shopName: string;
  domain: string;
  location: {
    name: string;
    address1: string;
    address2: string;
    city: string;
    state: string;
    zip: string;
    country: string;
  };
}

export interface Donation {
  id: string;
  shopId: string;
  status: 'OPEN' | 'COMPLETED' | 'ABANDONED' | 'CANCELLED' | 'FAILED';
  email: string;
  username?: string;
  message?: string;
  amounts: { total: Money };
  createdAt: string;
  updatedAt: string;
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

export const ORDER_STATUSES: readonly OrderStatus[] = [
  'CONFIRMED',
  'PARTIALLY_IN_PRODUCTION',
  'IN_PRODUCTION',
  'PARTIALLY_SHIPPED',
  'SHIPPED',
  'PARTIALLY_DELIVERED',
  'DELIVERED',
  'CANCELLED',
  'COMPLETED',
];

export interface Address {
  name: string;
  address1: string;
  address2?: string;
  city: string;
  state: string;
  country: string;
  zip?: string;
  phone?: string;
}

export interface OrderOffer extends OfferSummary {
  variant: Omit<Variant, 'stock' | 'images'> & { quantity: number; price: Money };
}

export interface Order {
  id: string;
  shopId: string;
  friendlyId: string;
  checkoutId: string;
  promotionId?: string;
  status: OrderStatus;
  email: string;
  emailMarketingOptIn: boolean;
  username?: string;
  message: string;
  amounts: {
    subtotal: Money;
    shipping: Money;
    tax: Money;
    donation: Money;
    discount: Money;
    giftCards: unknown[];
    total: Money;
  };
  billing: { address: Address };
  shipping: { address: Address };
  offers: OrderOffer[];
  source: { type: string; giftId?: string; giftPurchaseId?: string };
  createdAt: string;
  updatedAt: string;
}

export interface ThankYou {
  id: string;
  mediaUrl: string;
  contribution: {
    type: 'ORDER' | 'DONATION' | 'GIFT_PURCHASE' | 'MEMBERSHIP_PAYMENT_CHARGE';
    id: string;
    shopId: string;
    supporter: { email: string; username?: string; message?: string };
  };
}

export interface Promotion {
  type: string;
  id: string;
  title?: string;
  code: string;
  discount: Record<string, unknown> & { type: string };
  status: 'Live' | 'Ended' | 'Archived' | 'AllUsed';
  requirements: { minimumOrderValue?: Money };
  usageCount: number;
  limits: { maximumUsesNumber?: number; oneUsePerCustomer?: boolean };
  appliesTo: { type: string; products?: string[] };
}

export interface ShippingLabel {
  trackingCompany: string;
  trackingService?: string;
  trackingNumber?: string;
  labelUrl?: string;
  items: { offerVariantId: string; quantity: number }[];
}

export interface Fulfillment {
  id: string;
  shopId: string;
  orderId: string;
  status: string;
  fulfillmentService: string;
  items: { variantId: string; quantity: number }[];
  createdAt: string;
  updatedAt: string;
  shippingLabels: ShippingLabel[];
  orderShipmentId: string;
  fulfillmentServiceShopConfigId: number;
}

export interface GiftWinner {
  selectedAt: string;
  redeemUri: string;
  username?: string;
  email?: string;
  /** Sandbox bookkeeping: the Twitch user id the winner was chosen as (not on the wire). */
  userId: string;
}

export type GiftStatus = 'AVAILABLE' | 'CANCELLED' | 'CHANGED_TO_GIFT_CARD' | 'CHANGED_TO_PROMOTION' | 'REDEEMED';

export interface Gift {
  id: string;
  status: GiftStatus;
  winner?: GiftWinner;
  orderId?: string;
  orderFriendlyId?: string;
}

export interface GiftPurchase {
  id: string;
  friendlyId: string;
  shopId: string;
  offer: OfferSummary;
  amounts: { subtotal: Money; tax: Money; total: Money; profit: Money; prepaidShipping: Money };
  email: string;
  username?: string;
  message?: string;
  quantity: number;
  gifts: Gift[];
  createdAt: string;
}

/** A draw as the sandbox keeps it (the wire form is built from it and its purchase). */
export interface DrawState {
  id: string;
  type: 'INITIAL' | 'REDO';
  giveawayId: string;
  /** Gift ids this draw gives away (the purchase's gifts still without a winner when it opened). */
  giftIds: string[];
  durationSeconds: number;
  createdAt: string;
  createdAtMs: number;
  status: 'OPEN' | 'FINISHED' | 'EXPIRED';
  finishedAt?: string;
}

export interface GiveawayLink {
  status: 'AVAILABLE' | 'CANCELLED' | 'REDEEMED';
  id: string;
  link: string;
  productId: string;
  createdAt: string;
  cancelledAt?: string;
  redeemedAt?: string;
}

export interface GiveawayPackage {
  packageId: string;
  createdAt: string;
  giveawayLinks: GiveawayLink[];
}

export interface StreamingService {
  type: 'TWITCH';
  status: 'ONLINE' | 'OFFLINE';
  broadcasterId?: string;
  broadcasterLogin?: string;
  thumbnailUrl?: string;
}

export interface WebhookConfiguration {
  id: string;
  url: string;
  allowedTypes: string[];
  apiVersion: 'V1';
}

export interface GiftingConfig {
  enabled: boolean;
  entryTimeLimitSeconds: number;
  shipping: Record<string, unknown>;
  products: Record<string, unknown>;
  platform: 'TWITCH' | 'STREAMELEMENTS' | 'OPEN_API' | 'NOT_SELECTED';
}

/** The 16 event types of the spec plus the newer ones of the published document. */
export const WEBHOOK_EVENT_TYPES: readonly string[] = [
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
  'PLATFORM_APP_DISCONNECTED',
  'MEMBERSHIP_POST_UPSERTED',
  'MEMBERSHIP_SERIES_UPSERTED',
  'MEMBERSHIP_SERIES_DELETED',
  'MEMBERSHIP_TAG_CREATED',
  'MEMBERSHIP_TIER_UPSERTED',
  'MEMBERSHIP_TIER_DELETED',
  'COLLECTION_UPDATED',
  'CART_ABANDONED_1H',
  'CART_ABANDONED_24H',
  'CART_ABANDONED_72H',
];
