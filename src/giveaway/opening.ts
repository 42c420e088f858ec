/**
 * Opening draws: turning a Fourthwall gift draw, a gift purchase or a moderator's link giveaway
 * into a journaled, announced, scheduled draw, exactly once per id.
 *
 * Contract: an id that is active, being opened (a synchronous guard, set before the first await)
 * or already in storage is ignored. A new draw gets a fresh seed whose commitment is stored before
 * the draw is announced; it is saved before it becomes active, and a failed save opens nothing:
 * the operator is told and the returned promise rejects, so the caller (the event intake) leaves
 * the event unprocessed and retries it. A Fourthwall draw's `durationSeconds` is clamped to
 * 0..MAX_DRAW_SECONDS (the published document sets no bounds); a draw whose window is already
 * over (a late retry or catch-up) opens and closes at once. A draw with no available gifts is not opened. The gift flows
 * (`giftFlow` 'draw' or 'purchase') ignore the other flow's events. Does not: collect entries,
 * close or pick (entries.ts, drawing.ts), or validate moderator input (link-flow.ts).
 */
import { snapshot } from './context.js';
import type { Engine } from './engine.js';
import type { Entries } from './entries.js';
import { FAIRNESS_ALGORITHM, newSeed } from '../fairness/index.js';
import type { DrawRecord, GiftDrawInfo, GiftPurchaseInfo } from './ports.js';
import { DrawSession } from './session.js';

/** The parts of a new record that depend on what opened it. */
export type DrawSeed = Pick<DrawRecord, 'kind' | 'source' | 'offer' | 'gifts'> & Partial<DrawRecord>;

/** The longest entry window a Fourthwall draw gets (its durationSeconds is clamped to this). */
const MAX_DRAW_SECONDS = 3600;

/** A draw's entry window in seconds: finite, 0..MAX_DRAW_SECONDS (NaN, negatives -> 0). */
function clampDrawSeconds(value: number): number {
  if (!Number.isFinite(value)) return value === Infinity ? MAX_DRAW_SECONDS : 0;
  return Math.min(MAX_DRAW_SECONDS, Math.max(0, Math.floor(value)));
}

export class Opener {
  constructor(
    private readonly e: Engine,
    private readonly entries: Entries,
  ) {}

  /** GIFT_DRAW_STARTED: opens the draw for entries until its Fourthwall duration ends. */
  giftDrawStarted(draw: GiftDrawInfo, eventId?: string): Promise<void> {
    const { ctx } = this.e;
    if (ctx.settings.giftFlow !== 'draw') {
      ctx.logger.info({ drawId: draw.id }, 'gift draw ignored: the bot runs the purchase flow');
      return Promise.resolve();
    }
    const now = ctx.clock.now();
    const created = Date.parse(draw.createdAt);
    const startMs = Number.isFinite(created) ? created : now;
    const seconds = clampDrawSeconds(draw.durationSeconds);
    if (seconds !== draw.durationSeconds) ctx.logger.info({ drawId: draw.id, durationSeconds: draw.durationSeconds, seconds }, 'draw duration clamped');
    const closesAtMs = startMs + seconds * 1000;
    const available = draw.gifts.filter((g) => g.status === 'AVAILABLE');
    return this.open(draw.id, closesAtMs, () => ({
      kind: 'gift-draw',
      source: {
        drawId: draw.id,
        ...(draw.giveawayId ? { giveawayId: draw.giveawayId } : {}),
        ...(eventId ? { eventId } : {}),
      },
      offer: { id: draw.offer.id, name: draw.offer.name },
      gifts: available.length,
      giftIds: available.map((g) => g.id),
      supporter: { username: draw.username, message: draw.message },
    }));
  }

  /** GIFT_PURCHASE: one entry window (the shop's, else the configured one) for its gifts. */
  async giftPurchase(purchase: GiftPurchaseInfo, eventId?: string): Promise<void> {
    const { ctx } = this.e;
    if (ctx.settings.giftFlow !== 'purchase') {
      ctx.logger.info({ giftPurchaseId: purchase.id }, 'gift purchase ignored: the bot runs the draw flow');
      return;
    }
    if (this.e.draws.isKnownLive(purchase.id)) return;
    let seconds = ctx.settings.purchaseEntrySeconds;
    if (ctx.shop.giftingEntrySeconds) {
      try {
        const fromShop = await ctx.shop.giftingEntrySeconds();
        if (fromShop !== undefined && Number.isFinite(fromShop) && fromShop > 0) seconds = Math.round(fromShop);
      } catch (err) {
        ctx.logger.warn({ err }, 'could not read the gifting entry window; using the configured one');
      }
    }
    const available = purchase.gifts.filter((g) => g.status === 'AVAILABLE' || !g.status);
    await this.open(purchase.id, { windowMs: seconds * 1000 }, () => ({
      kind: 'gift-purchase',
      source: { giftPurchaseId: purchase.id, giveawayId: purchase.id, ...(eventId ? { eventId } : {}) },
      offer: { id: purchase.offer.id, name: purchase.offer.name },
      gifts: available.length,
      giftIds: available.map((g) => g.id),
      supporter: { username: purchase.username, message: purchase.message },
    }));
  }

  /**
   * Opens draw `id` with the record parts `build` returns; once per id. It closes at an absolute
   * time (Fourthwall's draws), or a full window after the moment it opens (purchases, link giveaways).
   */
  open(id: string, closes: number | { windowMs: number }, build: () => DrawSeed): Promise<void> {
    const { ctx, draws } = this.e;
    if (this.e.runtime.isStopped() || draws.isKnownLive(id)) return Promise.resolve();
    draws.opening.add(id);
    return this.e.runtime.track(
      (async () => {
        try {
          if (await ctx.repo.getDraw(id)) {
            ctx.logger.info({ drawId: id }, 'draw already known: ignored');
            return;
          }
          const { seed, commitment } = newSeed(ctx.random);
          const now = ctx.clock.now();
          const record: DrawRecord = {
            id,
            status: 'open',
            openedAt: new Date(now).toISOString(),
            closesAt: new Date(typeof closes === 'number' ? Math.max(now, closes) : now + closes.windowMs).toISOString(),
            entrants: 0,
            winners: [],
            fairness: { commitment, algorithm: FAIRNESS_ALGORITHM },
            pendingSeed: seed.toString('hex'),
            ...build(),
          };
          if (record.gifts < 1) {
            ctx.logger.warn({ drawId: id }, 'nothing to give away (no available gifts): not opened');
            ctx.operator.notify(`Draw ${id} (${record.offer.name}) has no available gifts; not opened.`);
            return;
          }
          const s = new DrawSession(record, seed);
          await s.persist(ctx.repo);
          if (this.e.runtime.isStopped()) return;
          draws.active.set(id, s);
          ctx.logger.info({ drawId: id, kind: record.kind, gifts: record.gifts }, 'draw opened');
          this.e.announce.opened(s);
          ctx.events.emit('draw-opened', snapshot(record));
          this.entries.scheduleOpen(s);
        } catch (err) {
          ctx.logger.error({ drawId: id, err }, 'could not open the draw');
          ctx.operator.notify(`Could not open draw ${id}: the draw journal could not be written.`);
          throw err;
        } finally {
          draws.opening.delete(id);
        }
      })(),
    );
  }
}
