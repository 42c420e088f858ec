/**
 * Which Fourthwall webhook event types the shop-on-stream features need, from the settings file:
 * the bot subscribes to the giveaway types plus these, and no more. Pure; no I/O.
 */
import type { FileSettings } from '../config/index.js';

export function shopWebhookTypes(s: Pick<FileSettings, 'alerts' | 'merchTrain' | 'promo'>): string[] {
  const types = new Set<string>();
  if (s.alerts.order.enabled || s.merchTrain.enabled) types.add('ORDER_PLACED');
  if (s.alerts.donation.enabled) types.add('DONATION');
  if (s.alerts.subscription.enabled) types.add('SUBSCRIPTION_PURCHASED');
  if (s.alerts.thankYou.enabled) types.add('THANK_YOU_SENT');
  if (s.alerts.giftPurchase.enabled) types.add('GIFT_PURCHASE');
  if (s.promo.enabled && s.promo.autoAnnounce) types.add('PROMOTION_STATUS_CHANGED');
  return [...types];
}

/** The giveaway types first, then what the enabled shop features add (no duplicates). */
export function webhookTypesFor(
  base: readonly string[],
  s: Pick<FileSettings, 'alerts' | 'merchTrain' | 'promo'>,
): string[] {
  return [...new Set([...base, ...shopWebhookTypes(s)])];
}
