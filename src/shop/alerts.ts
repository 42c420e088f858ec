/**
 * Supporter alerts: turns verified Fourthwall events (ORDER_PLACED, DONATION,
 * SUBSCRIPTION_PURCHASED, THANK_YOU_SENT, GIFT_PURCHASE) into a safe view model, says it in chat
 * at low priority and emits it as an `alert` event (for the overlay).
 *
 * Contract:
 * - privacy by construction: `toAlert*` builders copy ONLY the supporter's chosen username (or
 *   "someone"), product names and the amount; emails, addresses, order ids, messages and every
 *   other field never enter the view model, so they cannot reach chat, logs or the overlay.
 *   Viewer-supplied strings are cleaned (control characters removed, whitespace collapsed, length
 *   capped), the supporter's name passes the shared link scrubber (src/shared/plain-text.ts
 *   `linkFreeText`: never a link in chat) and the chat line is neutralised (no leading `/` or `.`
 *   command);
 * - each kind is on/off with its own template (settings `alerts`);
 * - bursts are coalesced per kind: the first alert of a window is said at once, the others of the
 *   same window become one line ("3 new orders in the last minute ...") when the window ends;
 *   every alert is still emitted as an event;
 * - orders that are gift or giveaway-link redemptions (free to the winner) are not alerted.
 * Does not: decide which events are duplicates (the bot's webhook path does) or count orders
 * (merch-train.ts).
 */
import { EventEmitter } from 'node:events';
import type { AlertsSettings } from '../config/shop.js';
import type { Donation, GiftPurchase, Order, SubscriptionData, ThankYou } from '../fourthwall/index.js';
import type { ChatPort } from '../giveaway/ports.js';
import { render } from '../giveaway/messages.js';
import type { Logger } from '../logging/index.js';
import type { Clock, TimerHandle } from '../shared/clock.js';
import { linkFreeText, plainText } from '../shared/plain-text.js';

export type AlertKind = 'order' | 'donation' | 'subscription' | 'thankYou' | 'giftPurchase';

/** What an alert may show. Nothing else about the supporter is ever kept. */
export interface AlertView {
  kind: AlertKind;
  /** The supporter's chosen username, or "someone". */
  user: string;
  /** Product names (orders and gift purchases). */
  products: string[];
  /** Present only when the streamer enabled amounts. */
  amount?: { value: number; currency: string };
  /** Membership interval (subscriptions). */
  tier?: string;
  /** ISO time the bot saw it. */
  at: string;
}

const NOUNS: Record<AlertKind, [string, string]> = {
  order: ['order', 'orders'],
  donation: ['donation', 'donations'],
  subscription: ['membership', 'memberships'],
  thankYou: ['thank-you', 'thank-yous'],
  giftPurchase: ['gift purchase', 'gift purchases'],
};

/**
 * Cleans a viewer- or shop-supplied string for display (the shared cleaner, src/shared/plain-text.ts,
 * hidden characters read as a space); undefined for a missing or empty string.
 */
export function cleanText(s: string | null | undefined, max: number): string | undefined {
  return typeof s === 'string' ? plainText(s, max, ' ') || undefined : undefined;
}

/** A supporter's name as chat shows it: cleaned, and never a link (a moderator's link passes Twitch's filter). */
const user = (s: string | null | undefined) => (typeof s === 'string' ? linkFreeText(s, 40, ' ') : '') || 'someone';
const productNames = (names: (string | null | undefined)[]) =>
  names
    .map((n) => cleanText(n, 80))
    .filter((n): n is string => n !== undefined)
    .slice(0, 10);

type Money = { value: number; currency: string } | null | undefined;
const money = (m: Money, show: boolean) =>
  show && m && Number.isFinite(m.value) ? { value: m.value, currency: cleanText(m.currency, 8) ?? '' } : undefined;

/** True for orders that redeem a gift or a giveaway link (the winner paid nothing). */
export function isRedemption(o: Pick<Order, 'source'>): boolean {
  const t = o.source?.type;
  return t === 'GIVEAWAY_LINKS' || t === 'TWITCH_GIFT_REDEMPTION';
}

export function toOrderAlert(o: Order, showAmounts: boolean, at: string): AlertView {
  const view: AlertView = {
    kind: 'order',
    user: user(o.username),
    products: productNames((o.offers ?? []).map((x) => x.name)),
    at,
  };
  const amount = money(o.amounts?.total, showAmounts);
  return amount ? { ...view, amount } : view;
}

export function toDonationAlert(d: Donation, showAmounts: boolean, at: string): AlertView {
  const view: AlertView = { kind: 'donation', user: user(d.username), products: [], at };
  const amount = money(d.amounts?.total, showAmounts);
  return amount ? { ...view, amount } : view;
}

export function toGiftPurchaseAlert(p: GiftPurchase, showAmounts: boolean, at: string): AlertView {
  const qty = typeof p.quantity === 'number' && p.quantity > 1 ? `${p.quantity}× ` : '';
  const view: AlertView = {
    kind: 'giftPurchase',
    user: user(p.username),
    products: productNames([`${qty}${p.offer.name}`]),
    at,
  };
  const amount = money(p.amounts?.total, showAmounts);
  return amount ? { ...view, amount } : view;
}

export function toSubscriptionAlert(s: SubscriptionData, showAmounts: boolean, at: string): AlertView {
  const sub = s.subscription;
  const interval = cleanText(sub?.variant?.interval, 10)?.toLowerCase();
  const view: AlertView = { kind: 'subscription', user: user(s.nickname), products: [], at, tier: interval ?? 'new' };
  const amount = money(sub?.variant?.amount, showAmounts);
  return amount ? { ...view, amount } : view;
}

export function toThankYouAlert(t: ThankYou, at: string): AlertView {
  return { kind: 'thankYou', user: user(t.contribution?.supporter?.username), products: [], at };
}

/** `$25.00`, `25.00 EUR`. */
export function formatMoney(m: { value: number; currency: string }): string {
  const v = m.value.toFixed(2);
  return m.currency === 'USD' ? `$${v}` : `${v} ${m.currency}`.trim();
}

function listNames(names: readonly string[], max = 5): string {
  if (names.length === 0) return '';
  const shown = names.slice(0, max);
  const more = names.length - shown.length;
  if (more > 0) return `${shown.join(', ')} and ${more} more`;
  if (shown.length === 1) return shown[0]!;
  return `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`;
}

/** The chat line of one alert. */
export function renderAlert(template: string, a: AlertView): string {
  return render(template, {
    user: a.user,
    products: listNames(a.products, 4) || 'something',
    amount: a.amount ? ` (${formatMoney(a.amount)})` : '',
    tier: a.tier ?? '',
  });
}

function windowText(seconds: number): string {
  if (seconds === 60) return 'minute';
  if (seconds % 60 === 0) return `${seconds / 60} minutes`;
  return seconds === 1 ? 'second' : `${seconds} seconds`;
}

export interface AlertsOptions {
  settings: AlertsSettings;
  chat: Pick<ChatPort, 'say'>;
  clock: Clock;
  logger: Logger;
}

/** Events: `alert` (view: AlertView). */
export class SupporterAlerts extends EventEmitter {
  private readonly windows = new Map<AlertKind, { timer: TimerHandle; pending: AlertView[] }>();
  private readonly log: Logger;
  private closed = false;

  constructor(private readonly o: AlertsOptions) {
    super();
    this.log = o.logger.child({ module: 'alerts' });
  }

  get showAmounts(): boolean {
    return this.o.settings.showAmounts;
  }

  /** True when `kind` is switched on in the settings. */
  enabled(kind: AlertKind): boolean {
    return this.o.settings[kind].enabled;
  }

  /** Announces one alert (see the module header). */
  publish(view: AlertView): void {
    if (this.closed || !this.enabled(view.kind)) return;
    this.emit('alert', view);
    this.log.info({ kind: view.kind }, 'supporter alert');
    const w = this.windows.get(view.kind);
    if (w) {
      w.pending.push(view);
      return;
    }
    this.say(renderAlert(this.o.settings[view.kind].template, view));
    this.openWindow(view.kind);
  }

  private openWindow(kind: AlertKind): void {
    const seconds = this.o.settings.burstWindowSeconds;
    const timer = this.o.clock.setTimeout(() => this.closeWindow(kind), seconds * 1000);
    this.windows.set(kind, { timer, pending: [] });
  }

  private closeWindow(kind: AlertKind): void {
    const w = this.windows.get(kind);
    this.windows.delete(kind);
    if (!w || this.closed || w.pending.length === 0) return;
    if (w.pending.length === 1) {
      this.say(renderAlert(this.o.settings[kind].template, w.pending[0]!));
    } else {
      const users = [...new Set(w.pending.map((a) => a.user))];
      this.say(
        render(this.o.settings.burstTemplate, {
          count: w.pending.length,
          noun: NOUNS[kind][1],
          window: windowText(this.o.settings.burstWindowSeconds),
          users: listNames(users),
        }),
      );
    }
    this.openWindow(kind);
  }

  private say(text: string): void {
    this.o.chat.say(text, { priority: 'low' });
  }

  /** Stops the windows (lines not said yet are dropped: alerts are not worth a slow shutdown). */
  close(): void {
    this.closed = true;
    for (const w of this.windows.values()) w.timer.cancel();
    this.windows.clear();
  }
}
