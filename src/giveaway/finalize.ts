/**
 * Delivering the prizes of a draw whose winners are fixed: finishing a gift draw at Fourthwall,
 * building the gift links of a purchase, creating the links of a link giveaway; and bringing a
 * record in line when Fourthwall reports a gift draw ended (GIFT_DRAW_ENDED).
 *
 * Contract: the caller has already moved the session to `finalizing` (synchronously). Before any
 * shop call that could act twice (finishing a draw, creating links) the record is saved with
 * `finishInFlight`, so a restart reconciles instead of repeating it; if that save fails nothing is
 * sent. Gift draws are finished with the recorded winners only (gift-draw.ts), and only when there
 * is one per gift (fewer: handed back, settle.ts `handBack`); link creation is
 * never retried when its outcome is unknown (link-giveaway.ts), and a later `!giveaway retry`
 * first reuses a package that unconfirmed attempt created (no double prizes). Every path ends in settle.ts
 * (finished or failed), except a stop, which leaves the journal for the next start. Does not: pick
 * or replace winners, run claim windows, or announce anything itself.
 */
import { persistQuietly, type Engine } from './engine.js';
import { hasWinners, mapFourthwallWinners, runFinish } from './gift-draw.js';
import { createLinks, findEarlierPackage } from './link-giveaway.js';
import type { GiftDrawInfo } from './ports.js';
import type { DrawSession } from './session.js';
import type { Settler } from './settle.js';

/** How long a link giveaway waits for Fourthwall after its first failure. */
const MIN_LINK_DEADLINE_MS = 1_000;

export class Finalizer {
  constructor(
    private readonly e: Engine,
    private readonly settle: Settler,
  ) {}

  /** Delivers the prizes of a `finalizing` session; `reconcile` asks Fourthwall first (gift draws). */
  async finalize(s: DrawSession, startWith: 'finish' | 'reconcile' = 'finish'): Promise<void> {
    try {
      if (s.record.kind === 'gift-draw') await this.finalizeGiftDraw(s, startWith);
      else if (s.record.kind === 'gift-purchase') await this.finalizePurchase(s);
      else await this.finalizeLinks(s);
    } catch (err) {
      await this.settle.fail(s, 'an internal error while delivering the prizes', err);
    }
  }

  /** GIFT_DRAW_ENDED: settles an active draw, or reconciles a closed one's winners and links. */
  async reconcileEnded(draw: GiftDrawInfo): Promise<void> {
    const { ctx, draws } = this.e;
    const active = draws.active.get(draw.id);
    if (active) {
      if (active.phase === 'finalizing' || active.phase === 'picking') {
        ctx.logger.info({ drawId: draw.id }, 'draw ended at Fourthwall while being finished: the finish call settles it');
        return;
      }
      active.clearTimers();
      active.phase = 'finalizing';
      if (hasWinners(draw)) return this.settle.applyFourthwall(active, draw, true);
      return this.settle.fail(active, 'Fourthwall closed the draw before the winners were sent');
    }
    const s = draws.findRecent(draw.id) ?? (await draws.sessionFromRepo(draw.id));
    if (!s) {
      ctx.logger.info({ drawId: draw.id }, 'draw ended for a draw this bot does not know');
      return;
    }
    const r = s.record;
    if (!hasWinners(draw)) return;
    const wasFinished = r.status === 'finished';
    const before = JSON.stringify(r.winners);
    if (!wasFinished) {
      s.phase = 'finalizing';
      r.status = 'drawing';
      return this.settle.applyFourthwall(s, draw, true);
    }
    r.winners = mapFourthwallWinners(r.winners, draw, s.entrants);
    if (JSON.stringify(r.winners) !== before) {
      ctx.logger.info({ drawId: r.id }, 'draw record reconciled with Fourthwall');
      await persistQuietly(this.e, s);
      const added = r.winners.filter((w) => w.redeemUrl && !before.includes(w.redeemUrl));
      this.e.announce.deliverLinks(s, added);
    }
  }

  private async finalizeGiftDraw(s: DrawSession, startWith: 'finish' | 'reconcile'): Promise<void> {
    // Fourthwall takes exactly one participant per available gift: fewer is refused, so the draw
    // is handed back (reopened by Fourthwall with every gift) instead.
    if (startWith === 'finish' && s.record.winners.length < s.record.gifts) return this.settle.handBack(s);
    if (startWith === 'finish') {
      s.record.finishInFlight = true;
      try {
        await s.persist(this.e.ctx.repo);
      } catch (err) {
        s.record.finishInFlight = false;
        return this.settle.fail(s, 'the draw journal could not be written, so the winners were not sent', err);
      }
    }
    const outcome = await runFinish(this.e.ctx, s, startWith);
    if (outcome.kind === 'stopped' || s.phase !== 'finalizing') return;
    if (outcome.kind === 'failed') return this.settle.fail(s, outcome.reason, outcome.cause);
    await this.settle.applyFourthwall(s, outcome.draw, true);
  }

  private async finalizePurchase(s: DrawSession): Promise<void> {
    const { ctx } = this.e;
    const r = s.record;
    let domain: string | undefined;
    for (let attempt = 0; attempt < 4 && domain === undefined; attempt++) {
      try {
        domain = normaliseDomain(await ctx.shop.shopDomain());
      } catch (err) {
        ctx.logger.warn({ drawId: s.id, err }, 'could not read the shop domain');
        if (attempt === 3 || !(await ctx.sleep(1000 * 2 ** attempt))) break;
      }
    }
    if (ctx.isStopped() && domain === undefined) return;
    if (!domain) return this.settle.fail(s, 'the shop address for the gift links is unknown (retry with !giveaway retry)');
    const giftIds = r.giftIds ?? [];
    const taken = new Set(r.winners.map((w) => w.giftId).filter((x): x is string => !!x));
    const free = giftIds.filter((g) => !taken.has(g));
    for (const w of r.winners) {
      if (w.giftId) continue;
      const giftId = free.shift();
      if (giftId) w.giftId = giftId;
    }
    for (const w of r.winners) if (w.giftId && !w.redeemUrl) w.redeemUrl = `https://${domain}/gifts/${w.giftId}`;
    await this.settle.complete(s);
  }

  private async finalizeLinks(s: DrawSession): Promise<void> {
    const { ctx } = this.e;
    const r = s.record;
    const missing = r.winners.filter((w) => !w.redeemUrl);
    if (missing.length) {
      r.finishInFlight = true;
      const firstAttempt = r.linksRequestedAt === undefined;
      r.linksRequestedAt ??= new Date(ctx.clock.now()).toISOString();
      try {
        await s.persist(ctx.repo);
      } catch (err) {
        r.finishInFlight = false;
        if (firstAttempt) delete r.linksRequestedAt;
        return this.settle.fail(s, 'the draw journal could not be written, so no links were created', err);
      }
      const deadline = ctx.clock.now() + Math.max(MIN_LINK_DEADLINE_MS, ctx.settings.links.createDeadlineSeconds * 1000);
      const res = firstAttempt
        ? await createLinks(ctx, s.id, r.offer.id, missing.length, deadline)
        : await this.earlierOrNewLinks(s, missing.length, deadline);
      if (!res.ok) {
        if (res.stopped) return;
        r.finishInFlight = false;
        return this.settle.fail(s, `${res.reason}; the winners are kept, retry with !giveaway retry`);
      }
      r.source.packageId = res.packageId;
      missing.forEach((w, i) => {
        const link = res.links[i];
        if (!link) return;
        w.giftId = link.id;
        w.redeemUrl = link.link;
      });
      r.finishInFlight = false;
      if (missing.some((w) => !w.redeemUrl)) {
        return this.settle.fail(s, 'Fourthwall returned fewer links than winners; retry with !giveaway retry');
      }
    }
    await this.settle.complete(s);
  }

  /**
   * A retry (links were asked for before): a package the earlier, unconfirmed attempt created is
   * reused; only when Fourthwall's package list shows none are new links created.
   */
  private async earlierOrNewLinks(s: DrawSession, count: number, deadline: number): ReturnType<typeof createLinks> {
    const { ctx } = this.e;
    const r = s.record;
    const since = Date.parse(r.linksRequestedAt ?? '');
    const used = new Set(
      (await ctx.repo.listDraws({ limit: 500 }))
        .filter((d) => d.id !== r.id)
        .map((d) => d.source.packageId)
        .filter((x): x is string => !!x),
    );
    const earlier = await findEarlierPackage(ctx, s.id, r.offer.id, count, Number.isFinite(since) ? since : 0, used);
    if (!earlier.ok) return { ok: false, reason: `${earlier.reason}, so nothing was created` };
    if (earlier.found) return { ok: true, ...earlier.found };
    return createLinks(ctx, s.id, r.offer.id, count, deadline);
  }
}

/** `https://shop.example/` or `shop.example` -> `shop.example`. */
function normaliseDomain(value: string): string | undefined {
  const d = value.trim().replace(/^https?:\/\//i, '').replace(/\/+$/, '');
  return d || undefined;
}
