/**
 * The shop side of link giveaways: finding the product a moderator named, and creating exactly
 * one giveaway link per winner.
 *
 * Contract: `resolveProduct` matches a query against product id, slug and name, case-insensitively;
 * an exact match wins over partial ones, several candidates are reported (up to 5), and an unknown
 * query says so. `createLinks` retries an unavailable shop until its deadline and never retries a
 * call whose outcome is unknown (that could create a second package). `findEarlierPackage` is what
 * a retry asks first: a package created since the first attempt (allowing for clock skew), not
 * used by another draw, holding exactly the missing number of links of the product; when the
 * packages cannot be read it says so, and the caller creates nothing. Does not: hold giveaway
 * state, talk to chat, or log links.
 */
import type { EngineContext } from './context.js';
import { ShopError, type GiveawayLinkInfo, type ProductInfo, type ShopPort } from './ports.js';
import { backoffMs } from './gift-draw.js';

export type ProductMatch =
  | { ok: true; product: ProductInfo }
  | { ok: false; reason: 'unknown' | 'ambiguous' | 'unavailable'; candidates: ProductInfo[] };

/** How many candidates an ambiguous match lists. */
const MAX_CANDIDATES = 5;

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

/** Clock difference allowed between the bot and Fourthwall when comparing package times. */
const PACKAGE_SKEW_MS = 60_000;

export type EarlierPackage =
  | { ok: true; found?: { packageId: string; links: GiveawayLinkInfo[] } }
  | { ok: false; reason: string };

/**
 * A package an earlier, unconfirmed link creation made for this giveaway: created at or after
 * `sinceMs - PACKAGE_SKEW_MS`, not in `used`, with exactly `count` links, all of `productId`.
 * The oldest such package wins.
 */
export async function findEarlierPackage(
  ctx: EngineContext,
  drawId: string,
  productId: string,
  count: number,
  sinceMs: number,
  used: ReadonlySet<string>,
): Promise<EarlierPackage> {
  try {
    const all = await ctx.shop.listGiveawayPackages();
    const candidates = all
      .filter((p) => !used.has(p.packageId))
      .map((p) => ({ ...p, at: Date.parse(p.createdAt ?? '') }))
      .filter((p) => !Number.isFinite(p.at) || p.at >= sinceMs - PACKAGE_SKEW_MS)
      .sort((a, b) => (Number.isFinite(a.at) ? a.at : Infinity) - (Number.isFinite(b.at) ? b.at : Infinity));
    for (const c of candidates) {
      let pkg;
      try {
        pkg = await ctx.shop.getGiveawayPackage(c.packageId);
      } catch (err) {
        if (err instanceof ShopError && err.kind === 'not-found') continue;
        throw err;
      }
      if (pkg.links.length === count && pkg.links.every((l) => !l.productId || l.productId === productId)) {
        ctx.logger.info({ drawId, packageId: pkg.packageId }, 'reusing the giveaway package an earlier unconfirmed attempt created');
        return { ok: true, found: { packageId: pkg.packageId, links: pkg.links.map((l) => ({ id: l.id, link: l.link })) } };
      }
    }
    return { ok: true };
  } catch (err) {
    ctx.logger.warn({ drawId, err }, 'could not read the giveaway packages');
    return { ok: false, reason: 'Fourthwall could not be asked whether the earlier attempt created the links' };
  }
}
