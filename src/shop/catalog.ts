/**
 * The shop's catalog as chat sees it: a cached product list for `!merch` (from the public product
 * feed when the shop URL is known, else from `GET /products`), refreshed in the background, and
 * the moderators' availability toggle (`PUT /products/{productId}/availability`).
 *
 * Contract: `merchLine()` answers from the cache and never waits on the network (before the
 * first refresh it names only the shop link); a failed refresh keeps the previous list and is
 * logged; `setAvailable` looks the product up fresh (id, slug or exact name first, then a unique
 * partial match), changes it, refreshes the cache and answers a chat line either way (an API
 * failure is retried by the client within its deadline, then reported, never thrown).
 * Product names are cleaned before they reach chat.
 */
import type { FourthwallClient, Product } from '../fourthwall/index.js';
import type { Logger } from '../logging/index.js';
import type { Clock, TimerHandle } from '../shared/clock.js';
import { cleanText, formatMoney } from './alerts.js';

type CatalogApi = Pick<FourthwallClient, 'listAllProducts' | 'updateProductAvailability' | 'fetchProductFeed'>;

export interface CatalogItem {
  name: string;
  available: boolean;
  price?: { value: number; currency: string };
}

export interface CatalogOptions {
  api: CatalogApi;
  /** The shop's public address (FOURTHWALL_SHOP_URL), if set. */
  shopUrl?: string;
  /** Resolves the shop's public domain from the API when no shop URL is set. */
  shopDomain(): Promise<string>;
  refreshMs: number;
  clock: Clock;
  logger: Logger;
}

export class Catalog {
  private items: CatalogItem[] = [];
  private link: string | undefined;
  private timer: TimerHandle | undefined;
  private stopped = false;
  private refreshing: Promise<void> | undefined;
  private readonly log: Logger;

  constructor(private readonly o: CatalogOptions) {
    this.log = o.logger.child({ module: 'catalog' });
    this.link = o.shopUrl?.replace(/\/+$/, '');
  }

  /** First refresh in the background, then every `refreshMs`. */
  start(): void {
    void this.refresh();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** The cached list (copies). */
  list(): CatalogItem[] {
    return this.items.map((i) => ({ ...i }));
  }

  /** Reloads the list now (one refresh at a time); resolves when done, never rejects. */
  refresh(): Promise<void> {
    this.refreshing ??= this.load().finally(() => {
      this.refreshing = undefined;
      if (!this.stopped) {
        this.timer?.cancel();
        this.timer = this.o.clock.setTimeout(() => void this.refresh(), this.o.refreshMs);
      }
    });
    return this.refreshing;
  }

  private async load(): Promise<void> {
    try {
      if (!this.link) this.link = `https://${await this.o.shopDomain()}`;
    } catch (err) {
      this.log.warn({ reason: (err as Error).message }, 'shop address not available yet');
    }
    if (this.o.shopUrl) {
      try {
        const feed = await this.o.api.fetchProductFeed(this.o.shopUrl);
        this.items = feed.items.flatMap((i) => {
          const name = cleanText(i.title, 80);
          if (!name) return [];
          const price = i.salePrice ?? i.price;
          return [
            {
              name,
              available: i.availability === undefined || i.availability === 'in_stock',
              ...(price ? { price } : {}),
            },
          ];
        });
        return;
      } catch (err) {
        this.log.warn({ reason: (err as Error).message }, 'product feed not available; reading products from the API');
      }
    }
    try {
      this.items = (await this.o.api.listAllProducts({ maxPages: 5 })).flatMap((p) => {
        const name = cleanText(p.name, 80);
        if (!name || (p.access?.type && p.access.type !== 'PUBLIC')) return [];
        const price = p.variants?.[0]?.unitPrice ?? undefined;
        return [{ name, available: isAvailable(p), ...(price ? { price } : {}) }];
      });
    } catch (err) {
      this.log.warn({ reason: (err as Error).message }, 'product list refresh failed; keeping the previous list');
    }
  }

  /** The `!merch` line: the shop link and up to `count` products, available ones first. */
  merchLine(count: number): string {
    const shown = [...this.items.filter((i) => i.available), ...this.items.filter((i) => !i.available)]
      .slice(0, count)
      .map((i) => `${i.name}${i.available ? (i.price ? ` (${formatMoney(i.price)})` : '') : ' (sold out)'}`);
    const link = this.link ?? 'the shop';
    return shown.length ? `🛍️ Merch: ${link} · ${shown.join(' · ')}` : `🛍️ Merch: ${link}`;
  }

  /** `!merch soldout|restock <product>`: answers the chat line to say. */
  async setAvailable(query: string, available: boolean): Promise<string> {
    const q = query.trim();
    if (!q) return `Usage: !merch ${available ? 'restock' : 'soldout'} <product id, slug or name>`;
    let products: Product[];
    try {
      products = await this.o.api.listAllProducts({ maxPages: 5 });
    } catch (err) {
      this.log.warn({ reason: (err as Error).message }, 'product look-up failed');
      return 'The shop could not be reached to look the product up; try again.';
    }
    const match = findProduct(products, q);
    if (!match.ok) {
      return match.candidates.length
        ? `Several products match "${cleanText(q, 40)}": ${match.candidates.map((p) => `${cleanText(p.name, 40)} (${p.slug ?? p.id})`).join(', ')}. Use the slug.`
        : `No product matches "${cleanText(q, 40)}".`;
    }
    const name = cleanText(match.product.name, 80) ?? match.product.id;
    try {
      const updated = await this.o.api.updateProductAvailability(match.product.id, available);
      this.log.info({ productId: updated.id, available }, 'product availability changed');
    } catch (err) {
      this.log.warn({ reason: (err as Error).message, productId: match.product.id }, 'availability change failed');
      return `Could not change ${name}: Fourthwall did not accept it (${(err as Error).message}).`;
    }
    await this.refresh();
    return available ? `✅ ${name} is back in stock.` : `⛔ ${name} is now marked sold out.`;
  }
}

function isAvailable(p: Product): boolean {
  const state = p.state?.type;
  return state === undefined || state === null || state === 'AVAILABLE';
}

/** id, slug or exact name first; then a unique partial match of name or slug. */
export function findProduct(
  products: readonly Product[],
  query: string,
): { ok: true; product: Product } | { ok: false; candidates: Product[] } {
  const q = query.trim().toLowerCase();
  for (const pick of [
    (p: Product) => p.id.toLowerCase() === q,
    (p: Product) => (p.slug ?? '').toLowerCase() === q,
    (p: Product) => p.name.trim().toLowerCase() === q,
  ]) {
    const hits = products.filter(pick);
    if (hits.length === 1) return { ok: true, product: hits[0]! };
    if (hits.length > 1) return { ok: false, candidates: hits.slice(0, 5) };
  }
  const partial = products.filter((p) => p.name.toLowerCase().includes(q) || (p.slug ?? '').toLowerCase().includes(q));
  if (partial.length === 1) return { ok: true, product: partial[0]! };
  return { ok: false, candidates: partial.slice(0, 5) };
}
