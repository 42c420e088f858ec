/**
 * The shop side of link giveaways: finding the product a moderator named, and creating exactly
 * one giveaway link per winner.
 *
 * Contract: `resolveProduct` matches a query against product id, slug and name, case-insensitively;
 * an exact match wins over partial ones, several candidates are reported (up to 5), and an unknown
 * query says so. `createLinks` retries an unavailable shop until its deadline and never retries a
 * call whose outcome is unknown (that could create a second package). Does not: hold giveaway
 * state, talk to chat, or log links.
 */
import type { EngineContext } from './context.js';
import { ShopError, type GiveawayLinkInfo, type ProductInfo, type ShopPort } from './ports.js';
import { backoffMs } from './gift-draw.js';

export type ProductMatch =
  | { ok: true; product: ProductInfo }
  | { ok: false; reason: 'unknown' | 'ambiguous' | 'unavailable'; candidates: ProductInfo[] };

/** How many candidates an ambiguous match lists. */
export const MAX_CANDIDATES = 5;

/** Finds the product `query` names (id, slug or name; exact beats partial). */
export async function resolveProduct(shop: ShopPort, query: string): Promise<ProductMatch> {
  const q = query.trim().toLowerCase();
  if (!q) return { ok: false, reason: 'unknown', candidates: [] };
  let products: ProductInfo[];
  try {
    products = await shop.listProducts();
  } catch {
    return lookUpById(shop, query.trim(), 'unavailable');
  }
  const byId = products.filter((p) => p.id.toLowerCase() === q);
  if (byId.length === 1) return { ok: true, product: byId[0]! };
  const bySlug = products.filter((p) => p.slug.toLowerCase() === q);
  if (bySlug.length === 1) return { ok: true, product: bySlug[0]! };
  const byName = products.filter((p) => p.name.trim().toLowerCase() === q);
  if (byName.length === 1) return { ok: true, product: byName[0]! };
  if (byName.length > 1) return { ok: false, reason: 'ambiguous', candidates: byName.slice(0, MAX_CANDIDATES) };
  const partial = products.filter((p) => p.name.toLowerCase().includes(q) || p.slug.toLowerCase().includes(q));
  const available = partial.filter((p) => p.available !== false);
  const pool = available.length ? available : partial;
  if (pool.length === 1) return { ok: true, product: pool[0]! };
  if (pool.length > 1) return { ok: false, reason: 'ambiguous', candidates: pool.slice(0, MAX_CANDIDATES) };
  return lookUpById(shop, query.trim(), 'unknown');
}

async function lookUpById(shop: ShopPort, id: string, otherwise: 'unknown' | 'unavailable'): Promise<ProductMatch> {
  if (!/^[A-Za-z0-9_-]{8,}$/.test(id)) return { ok: false, reason: otherwise, candidates: [] };
  try {
    return { ok: true, product: await shop.getProduct(id) };
  } catch (err) {
    const notFound = err instanceof ShopError && (err.kind === 'not-found' || err.kind === 'rejected');
    return { ok: false, reason: notFound ? 'unknown' : otherwise, candidates: [] };
  }
}

export type LinksOutcome =
  | { ok: true; packageId: string; links: GiveawayLinkInfo[] }
  | { ok: false; reason: string; stopped?: boolean };

/** Creates `count` giveaway links for `productId`, retrying an unavailable shop until `deadlineMs`. */
export async function createLinks(
  ctx: EngineContext,
  drawId: string,
  productId: string,
  count: number,
  deadlineMs: number,
): Promise<LinksOutcome> {
  for (let attempt = 0; ; attempt++) {
    if (ctx.isStopped()) return { ok: false, reason: 'the bot stopped', stopped: true };
    try {
      ctx.logger.info({ drawId, productId, count }, 'creating giveaway links');
      const res = await ctx.shop.createGiveawayLinks(productId, count);
      return { ok: true, packageId: res.packageId, links: res.links };
    } catch (err) {
      const kind = err instanceof ShopError ? err.kind : 'other';
      ctx.logger.warn({ drawId, err, kind }, 'creating giveaway links did not succeed');
      if (kind === 'unavailable') {
        const ms = backoffMs(attempt);
        if (ctx.clock.now() + ms < deadlineMs) {
          if (!(await ctx.sleep(ms))) return { ok: false, reason: 'the bot stopped', stopped: true };
          continue;
        }
        return { ok: false, reason: 'Fourthwall could not be reached in time to create the links' };
      }
      if (kind === 'outcome-unknown') {
        return { ok: false, reason: 'Fourthwall did not confirm the links (check the giveaway packages in the dashboard)' };
      }
      if (kind === 'rejected' || kind === 'not-found') {
        return { ok: false, reason: 'Fourthwall refused to create links for this product' };
      }
      if (kind === 'auth') return { ok: false, reason: 'the bot is not allowed to create giveaway links' };
      return { ok: false, reason: 'an unexpected error while creating the links' };
    }
  }
}
