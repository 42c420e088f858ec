/**
 * The recent-orders feed for the dashboard: the latest orders and donations, in memory, newest
 * first, filled in from `GET /order` and `GET /donations` at start and kept current from the
 * webhooks.
 *
 * Contract: an entry holds only the supporter's chosen username (or "someone"), product names,
 * the amount and the time (never an email, address or order id; entries are built by the same
 * privacy-by-construction helpers as the alerts). Duplicates (the same order from the API and a
 * webhook) are merged by an internal key that is a one-way hash, never shown. At most `max`
 * entries. `recent()` is the read-only port the dashboard uses.
 */
import { createHash } from 'node:crypto';
import type { Donation, FourthwallClient, Order } from '../fourthwall/index.js';
import type { Logger } from '../logging/index.js';
import { isRedemption, toDonationAlert, toOrderAlert, type AlertView } from './alerts.js';

export type FeedEntry = Pick<AlertView, 'kind' | 'user' | 'products' | 'amount' | 'at'>;

/** What the dashboard reads. */
interface OrderFeedPort {
  recent(limit?: number): FeedEntry[];
}

export type OrderFeedApi = Pick<FourthwallClient, 'listOrders' | 'listDonations'>;

const key = (kind: string, id: string) => createHash('sha256').update(`${kind}:${id}`).digest('base64url').slice(0, 16);

export class OrderFeed implements OrderFeedPort {
  private entries: (FeedEntry & { key: string; sortAt: number })[] = [];
  private readonly log: Logger;

  constructor(private readonly o: { api: OrderFeedApi; max?: number; logger: Logger }) {
    this.log = o.logger.child({ module: 'order-feed' });
  }

  private get max(): number {
    return this.o.max ?? 50;
  }

  /** Fills the feed from the API (a failure is logged; webhooks still fill it). */
  async load(): Promise<void> {
    try {
      const orders = await this.o.api.listOrders({ size: this.max });
      for (const o of orders.results) this.addOrder(o);
    } catch (err) {
      this.log.warn(
        { reason: (err as Error).message },
        "recent orders could not be read; the feed fills from the next orders' webhooks",
      );
    }
    try {
      const donations = await this.o.api.listDonations({ size: this.max });
      for (const d of donations.results) if (!d.status || d.status === 'COMPLETED') this.addDonation(d);
    } catch (err) {
      this.log.warn(
        { reason: (err as Error).message },
        "recent donations could not be read; the feed fills from the next donations' webhooks",
      );
    }
  }

  addOrder(o: Order): void {
    if (isRedemption(o)) return;
    const at = o.createdAt ?? new Date().toISOString();
    this.add(key('order', o.id), toOrderAlert(o, true, at));
  }

  addDonation(d: Donation): void {
    const at = d.createdAt ?? new Date().toISOString();
    this.add(key('donation', d.id), toDonationAlert(d, true, at));
  }

  private add(k: string, v: AlertView): void {
    if (this.entries.some((e) => e.key === k)) return;
    const sortAt = Date.parse(v.at.replace(' ', 'T'));
    const entry = {
      key: k,
      sortAt: Number.isFinite(sortAt) ? sortAt : 0,
      kind: v.kind,
      user: v.user,
      products: [...v.products],
      at: v.at,
      ...(v.amount ? { amount: v.amount } : {}),
    };
    this.entries.push(entry);
    this.entries.sort((a, b) => b.sortAt - a.sortAt);
    if (this.entries.length > this.max) this.entries.length = this.max;
  }

  recent(limit = this.max): FeedEntry[] {
    return this.entries.slice(0, limit).map((e) => ({
      kind: e.kind,
      user: e.user,
      products: [...e.products],
      at: e.at,
      ...(e.amount ? { amount: { ...e.amount } } : {}),
    }));
  }
}
