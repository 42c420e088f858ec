/**
 * The terminal transitions of a draw: finished with winners (gift draw, purchase, link giveaway),
 * finished with nobody eligible, and failed.
 *
 * Contract: each method moves the session to `done` and out of the active set synchronously,
 * before its first await; then it persists the record, tells chat / the operator and emits the
 * matching events (`winners`, `draw-finished`, `draw-failed`). `fail` is a no-op for a draw that
 * is already done unless its record still says drawing (a retry in progress). Links are delivered
 * through the announcer only (never logged). Does not: pick winners, call the shop, or schedule
 * timers.
 */
import { gifterOf } from './announcer.js';
import { snapshot } from './context.js';
import { isoNow, persistQuietly, type Engine } from './engine.js';
import { mapFourthwallWinners } from './gift-draw.js';
import type { GiftDrawInfo } from './ports.js';
import type { DrawSession } from './session.js';

export class Settler {
  constructor(private readonly e: Engine) {}

  /** Marks a gift draw finished with Fourthwall's winners (and their redeem links). */
  async applyFourthwall(s: DrawSession, draw: GiftDrawInfo, announce: boolean): Promise<void> {
    const { ctx } = this.e;
    const r = s.record;
    r.winners = mapFourthwallWinners(r.winners, draw, s.entrants);
    r.status = 'finished';
    r.closedAt = isoNow(ctx.clock);
    r.finishInFlight = false;
    delete r.failure;
    if (s.frozen) s.reveal();
    s.phase = 'done';
    this.e.draws.retire(s);
    ctx.logger.info({ drawId: s.id, winners: r.winners.map((w) => w.login) }, 'draw finished');
    await persistQuietly(this.e, s);
    if (announce) this.e.announce.winners(s);
    this.e.announce.deliverLinks(s, r.winners);
    ctx.events.emit('winners', snapshot(r), r.winners.map((w) => ({ ...w })));
    ctx.events.emit('draw-finished', snapshot(r));
  }

  /** A purchase or link giveaway whose winners all have links: finished, announced, delivered. */
  async complete(s: DrawSession): Promise<void> {
    const { ctx } = this.e;
    const r = s.record;
    r.status = 'finished';
    r.closedAt = isoNow(ctx.clock);
    r.finishInFlight = false;
    delete r.failure;
    s.phase = 'done';
    this.e.draws.retire(s);
    ctx.logger.info({ drawId: s.id, winners: r.winners.map((w) => w.login) }, 'draw finished');
    await persistQuietly(this.e, s);
    this.e.announce.winners(s);
    this.e.announce.deliverLinks(s, r.winners);
    ctx.events.emit('winners', snapshot(r), r.winners.map((w) => ({ ...w })));
    ctx.events.emit('draw-finished', snapshot(r));
  }

  /** Nobody eligible entered: finished without winners (a gift draw's gift can be drawn again). */
  async finishEmpty(s: DrawSession): Promise<void> {
    const { ctx } = this.e;
    const r = s.record;
    s.phase = 'done';
    r.status = 'finished';
    r.closedAt = isoNow(ctx.clock);
    this.e.draws.retire(s);
    ctx.logger.info({ drawId: s.id, entrants: s.entrants.size }, 'nobody eligible entered');
    this.e.announce.say('noEntrants', {
      product: r.offer.name,
      gifter: gifterOf(r),
      entrants: s.entrants.size,
    }, 'normal');
    if (r.kind === 'gift-draw') {
      ctx.operator.notify(
        `Nobody eligible entered draw ${r.id} (${r.offer.name}); Fourthwall closes it after its deadline and the gift can be drawn again.`,
      );
    }
    await persistQuietly(this.e, s);
    ctx.events.emit('winners', snapshot(r), []);
    ctx.events.emit('draw-finished', snapshot(r));
  }

  /**
   * A gift draw with fewer eligible winners than gifts: Fourthwall accepts a finish only with one
   * participant per available gift (GIVEAWAY_DRAW_FINISHED_DATA_MISMATCH otherwise), so nothing is
   * sent; Fourthwall closes the draw at its deadline and reopens it (a REDO draw) with every gift,
   * which the bot runs like any draw. Recorded as failed with that reason (no winners: nobody got
   * a gift from this draw), said in chat and to the operator.
   */
  async handBack(s: DrawSession): Promise<void> {
    const { ctx } = this.e;
    const r = s.record;
    const eligible = r.winners.length;
    s.phase = 'done';
    s.clearTimers();
    r.status = 'failed';
    const reason = `only ${eligible} eligible entrant(s) for ${r.gifts} gifts; Fourthwall takes one winner per gift, so no winners were sent and it reopens the draw with all ${r.gifts} gifts after its deadline`;
    r.failure = { reason, at: isoNow(ctx.clock) };
    r.closedAt = isoNow(ctx.clock);
    r.winners = [];
    delete r.setAside; // no pick stands (the record then verifies as a draw without picks); rules.account keeps the counts
    r.finishInFlight = false;
    if (s.frozen) s.reveal();
    this.e.draws.retire(s);
    ctx.logger.info({ drawId: s.id, eligible, gifts: r.gifts }, 'fewer eligible entrants than gifts: draw handed back to Fourthwall');
    this.e.announce.say('tooFewEntrants', {
      product: r.offer.name,
      gifter: gifterOf(r),
      entrants: eligible,
      count: r.gifts,
      seconds: Math.max(0, Math.ceil((s.fourthwallDeadlineMs - ctx.clock.now()) / 1000)),
      enter: this.e.ctx.settings.commands.enter,
    }, 'normal');
    ctx.operator.notify(`Draw ${r.id} (${r.offer.name}): ${reason}.`);
    await persistQuietly(this.e, s);
    ctx.events.emit('winners', snapshot(r), []);
    ctx.events.emit('draw-failed', snapshot(r));
  }

  /** Marks the draw failed with `reason` (told to chat and the operator, with any winners kept). */
  async fail(s: DrawSession, reason: string, cause?: unknown): Promise<void> {
    const { ctx } = this.e;
    const r = s.record;
    if (s.phase === 'done' && r.status !== 'drawing') return;
    s.phase = 'done';
    s.clearTimers();
    r.status = 'failed';
    r.failure = { reason, at: isoNow(ctx.clock) };
    r.closedAt = isoNow(ctx.clock);
    r.finishInFlight = false;
    if (s.frozen) s.reveal();
    this.e.draws.retire(s);
    ctx.logger.error({ drawId: s.id, reason, err: cause }, 'draw failed');
    const winners = r.winners.length ? ` Winners: ${r.winners.map((w) => `@${w.login}`).join(', ')}.` : '';
    ctx.operator.notify(`Draw ${r.id} (${r.offer.name}) failed: ${reason}.${winners}`);
    this.e.announce.say('failed', { product: r.offer.name, reason }, 'high');
    await persistQuietly(this.e, s);
    ctx.events.emit('draw-failed', snapshot(r));
  }
}
