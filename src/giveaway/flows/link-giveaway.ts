/**
 * The link-giveaway flow: a moderator starts a giveaway of a product (`!giveaway start`), chat
 * enters, and each winner gets a Fourthwall giveaway link created for the draw. Phases: open,
 * closing, awaiting-beacon, picking, [claim-window], finishing, then settled, failed (links not
 * created: `!giveaway retry`) or cancelled (`!giveaway cancel`, before any link exists).
 *
 * Contract: at most one link giveaway runs at a time; a second start while one is open or still
 * being looked up is refused (the guard is set synchronously before the first await). Winners and
 * seconds are checked against the link settings before the shop is asked. `resolveProduct`
 * matches a query against product id, slug and name, case-insensitively; an exact match wins over
 * partial ones, several candidates are reported (up to 5). Before creating links the record is
 * saved with `finishInFlight`; `createLinks` retries an unavailable shop until its deadline and
 * never retries a call whose outcome is unknown (that could create a second package). A retry
 * first reuses a package the earlier, unconfirmed attempt created (`findEarlierPackage`: created
 * since the first attempt allowing for clock skew, not used by another draw, exactly the missing
 * number of links of the product); when the packages cannot be read it creates nothing. A restart
 * in the middle of creating links fails the draw with a pointer to the dashboard. Every refusal is
 * a reply for chat (`ActionResult`), never an exception. Does not: announce, settle, log links,
 * or check who may run the commands (commands/ does).
 */
import type { ChatMessage } from '../../shared/chat.js';
import type { FlowContext } from '../context.js';
import type { Trigger } from '../draw-machine.js';
import { render } from '../messages.js';
import { openDraw } from '../opening.js';
import type { GiveawayLinkInfo, ProductInfo } from '../model.js';
import { ShopError, type ShopPort } from '../ports.js';
import type { DrawSession } from '../session.js';
import { SHOP_BACKOFF, type DrawFlow } from './flow.js';
import { backoffDelay } from '../../shared/retry.js';

/** Result of a moderator action; `message` is the reply to give when it did not happen. */
export type ActionResult = { ok: true; id?: string } | { ok: false; message: string };

/** How long a link giveaway waits for Fourthwall after its first failure. */
const MIN_LINK_DEADLINE_MS = 1_000;

export const linkGiveawayFlow: DrawFlow = {
  kind: 'link-giveaway',
  phases: [
    'open',
    'closing',
    'awaiting-beacon',
    'picking',
    'claim-window',
    'finishing',
    'settled',
    'failed',
    'cancelled',
  ],
  claimWindowFits: () => true,
  deliver: giveawayLinks,
  resumeDelivery: (c, s) => {
    if (!s.record.finishInFlight) return giveawayLinks(c, s);
    c.logger.info({ drawId: s.id }, 'restored draw had a finish in flight: reconciling');
    return Promise.resolve({
      name: 'failed',
      reason:
        'the bot stopped while creating the links; check the giveaway packages in the Fourthwall dashboard before !giveaway retry',
    });
  },
};

/** The moderator commands of link giveaways: `!giveaway start`, `cancel` and `retry`. */
export class LinkGiveawayCommands {
  private starting = false;

  constructor(private readonly c: FlowContext) {}

  /** `!giveaway start`: a link giveaway of the product `query` names (id, slug or name). */
  async start(by: ChatMessage, query: string, winners?: number, seconds?: number): Promise<ActionResult> {
    const { c } = this;
    const links = c.settings.links;
    const running = c.draws.activeSessions().find((s) => s.record.kind === 'link-giveaway');
    if (running || this.starting) {
      return {
        ok: false,
        message: `A link giveaway is already running${running ? ` (${running.record.offer.name})` : ''}.`,
      };
    }
    const count = winners ?? links.defaultWinners;
    const secs = seconds ?? links.defaultSeconds;
    if (!Number.isInteger(count) || count < 1 || count > links.maxWinners) {
      return { ok: false, message: `Winners must be a whole number from 1 to ${links.maxWinners}.` };
    }
    if (!Number.isInteger(secs) || secs < 5 || secs > links.maxSeconds) {
      return { ok: false, message: `Seconds must be a whole number from 5 to ${links.maxSeconds}.` };
    }
    if (!query.trim()) return { ok: false, message: 'Say which product: a product id, slug or name.' };
    this.starting = true;
    try {
      const match = await c.work.track(resolveProduct(c.shop, query));
      if (!match.ok) {
        const q = query.trim();
        if (match.reason === 'ambiguous') {
          const names = match.candidates.map((p) => `${p.name} (${p.slug})`).join(', ');
          return { ok: false, message: render('Several products match "{q}": {names}. Use the slug.', { q, names }) };
        }
        if (match.reason === 'unavailable') {
          return { ok: false, message: 'The shop could not be reached to look the product up; try again.' };
        }
        return { ok: false, message: render('No product matches "{q}".', { q }) };
      }
      const product = match.product;
      const id = `lnk_${c.random.bytes(8).toString('hex')}`;
      // A failed save was logged and told to the operator; the reply below says it did not open.
      await openDraw(c, id, { windowMs: secs * 1000 }, () => ({
        kind: 'link-giveaway',
        source: {},
        offer: { id: product.id, name: product.name },
        gifts: count,
        startedBy: { userId: by.userId, login: by.login },
      })).catch(() => undefined);
      return c.draws.active.has(id) ? { ok: true, id } : { ok: false, message: 'The giveaway could not be opened.' };
    } finally {
      this.starting = false;
    }
  }

  /** `!giveaway cancel`: cancels the open link giveaway (no links are created for it). */
  async cancel(): Promise<ActionResult> {
    const s = this.c.draws.activeSessions().find((x) => x.record.kind === 'link-giveaway');
    if (!s) return { ok: false, message: 'No link giveaway is open.' };
    const done = this.c.fire(s, { name: 'cancel' });
    if (!done) return { ok: false, message: 'Too late to cancel: the links are being created.' };
    await done;
    return { ok: true, id: s.id };
  }

  /** `!giveaway retry`: delivers the links of the latest giveaway whose links failed. */
  async retry(): Promise<ActionResult> {
    const s = await this.c.work.track(this.c.draws.findUndelivered());
    if (!s) return { ok: false, message: 'No giveaway is waiting for links.' };
    const done = this.c.fire(s, { name: 'retry' });
    if (!done) return { ok: false, message: 'The links are being created right now.' };
    await done;
    return s.record.status === 'finished'
      ? { ok: true, id: s.id }
      : { ok: false, message: 'The links could not be created yet.' };
  }
}

/** Creates the links of the winners still without one (see the module contract). */
async function giveawayLinks(c: FlowContext, s: DrawSession): Promise<Trigger | undefined> {
  const r = s.record;
  const missing = r.winners.filter((w) => !w.redeemUrl);
  if (!missing.length) return { name: 'delivered' };
  r.finishInFlight = true;
  const firstAttempt = r.linksRequestedAt === undefined;
  r.linksRequestedAt ??= new Date(c.clock.now()).toISOString();
  try {
    await s.persist(c.repo);
  } catch (err) {
    r.finishInFlight = false;
    if (firstAttempt) delete r.linksRequestedAt;
    return { name: 'failed', reason: 'the draw journal could not be written, so no links were created', cause: err };
  }
  const deadline = c.clock.now() + Math.max(MIN_LINK_DEADLINE_MS, c.settings.links.createDeadlineSeconds * 1000);
  const res = firstAttempt
    ? await createLinks(c, s.id, r.offer.id, missing.length, deadline)
    : await earlierOrNewLinks(c, s, missing.length, deadline);
  if (!res.ok) {
    if (res.stopped) return undefined;
    r.finishInFlight = false;
    return { name: 'failed', reason: `${res.reason}; the winners are kept, retry with !giveaway retry` };
  }
  r.source.packageId = res.packageId;
  missing.forEach((w, i) => {
    const link = res.links[i];
    if (!link) return;
    w.giftId = link.id;
    w.redeemUrl = link.link;
  });
  r.finishInFlight = false;
  if (missing.some((w) => !w.redeemUrl))
    return { name: 'failed', reason: 'Fourthwall returned fewer links than winners; retry with !giveaway retry' };
  return { name: 'delivered' };
}

/**
 * A retry (links were asked for before): a package the earlier, unconfirmed attempt created is
 * reused; only when Fourthwall's package list shows none are new links created.
 */
async function earlierOrNewLinks(
  c: FlowContext,
  s: DrawSession,
  count: number,
  deadline: number,
): Promise<LinksOutcome> {
  const r = s.record;
  const since = Date.parse(r.linksRequestedAt ?? '');
  // Every package a draw already holds (this one's included: its links are given), replacements' too.
  const used = new Set(
    (await c.repo.listDraws({ limit: 500 }))
      .flatMap((d) => [d.source.packageId, ...(d.source.extraPackageIds ?? [])])
      .filter((x): x is string => !!x),
  );
  const earlier = await findEarlierPackage(c, s.id, r.offer.id, count, Number.isFinite(since) ? since : 0, used);
  if (!earlier.ok) return { ok: false, reason: `${earlier.reason}, so nothing was created` };
  if (earlier.found) return { ok: true, ...earlier.found };
  return createLinks(c, s.id, r.offer.id, count, deadline);
}

/**
 * One new link for a replacement in link giveaway `s` (a reroll of a winner whose link had gone
 * out, giveaway/reroll.ts), created like the first ones (an unavailable shop retried until the
 * links' deadline, an unknown outcome never retried); its package is added to the record's
 * `source.extraPackageIds` by the caller once the link is given.
 */
export async function newLinkFor(
  c: FlowContext,
  s: DrawSession,
): Promise<{ ok: true; packageId: string; link: GiveawayLinkInfo } | { ok: false; reason: string }> {
  const deadline = c.clock.now() + Math.max(MIN_LINK_DEADLINE_MS, c.settings.links.createDeadlineSeconds * 1000);
  const res = await createLinks(c, s.id, s.record.offer.id, 1, deadline);
  if (!res.ok) return { ok: false, reason: res.reason };
  const link = res.links[0];
  return link ? { ok: true, packageId: res.packageId, link } : { ok: false, reason: 'Fourthwall returned no link' };
}

type ProductMatch =
  | { ok: true; product: ProductInfo }
  | { ok: false; reason: 'unknown' | 'ambiguous' | 'unavailable'; candidates: ProductInfo[] };

/** How many candidates an ambiguous match lists. */
const MAX_CANDIDATES = 5;

/** Finds the product `query` names (id, slug or name; exact beats partial). */
async function resolveProduct(shop: ShopPort, query: string): Promise<ProductMatch> {
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

type LinksOutcome =
  { ok: true; packageId: string; links: GiveawayLinkInfo[] } | { ok: false; reason: string; stopped?: boolean };

/** Creates `count` giveaway links for `productId`, retrying an unavailable shop until `deadlineMs`. */
async function createLinks(
  ctx: FlowContext,
  drawId: string,
  productId: string,
  count: number,
  deadlineMs: number,
): Promise<LinksOutcome> {
  for (let attempt = 0; ; attempt++) {
    if (ctx.work.isStopped()) return { ok: false, reason: 'the bot stopped', stopped: true };
    try {
      ctx.logger.info({ drawId, productId, count }, 'creating giveaway links');
      const res = await ctx.shop.createGiveawayLinks(productId, count);
      return { ok: true, packageId: res.packageId, links: res.links };
    } catch (err) {
      const kind = err instanceof ShopError ? err.kind : 'other';
      ctx.logger.warn({ drawId, err, kind }, 'creating giveaway links did not succeed');
      if (kind === 'unavailable') {
        const ms = backoffDelay(SHOP_BACKOFF, attempt + 1);
        if (ctx.clock.now() + ms < deadlineMs) {
          if (!(await ctx.work.sleep(ms))) return { ok: false, reason: 'the bot stopped', stopped: true };
          continue;
        }
        return { ok: false, reason: 'Fourthwall could not be reached in time to create the links' };
      }
      if (kind === 'outcome-unknown') {
        return {
          ok: false,
          reason: 'Fourthwall did not confirm the links (check the giveaway packages in the dashboard)',
        };
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

type EarlierPackage =
  { ok: true; found?: { packageId: string; links: GiveawayLinkInfo[] } } | { ok: false; reason: string };

/**
 * A package an earlier, unconfirmed link creation made for this giveaway: created at or after
 * `sinceMs - PACKAGE_SKEW_MS`, not in `used`, with exactly `count` links, all of `productId`.
 * The oldest such package wins.
 */
async function findEarlierPackage(
  ctx: FlowContext,
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
        ctx.logger.info(
          { drawId, packageId: pkg.packageId },
          'reusing the giveaway package an earlier unconfirmed attempt created',
        );
        return {
          ok: true,
          found: { packageId: pkg.packageId, links: pkg.links.map((l) => ({ id: l.id, link: l.link })) },
        };
      }
    }
    return { ok: true };
  } catch (err) {
    ctx.logger.warn({ drawId, err }, 'could not read the giveaway packages');
    return { ok: false, reason: 'Fourthwall could not be asked whether the earlier attempt created the links' };
  }
}
