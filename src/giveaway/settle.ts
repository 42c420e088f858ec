/**
 * The effects of a draw's terminal transitions (draw-machine.ts): settled with winners, settled
 * with nobody eligible, handed back (a gift draw short of winners), failed, cancelled; and
 * bringing a settled draw's winners in line with the ones the shop reports (mapped by the flow).
 *
 * Contract: the runner has already moved the session's phase. Each function changes the record
 * and moves the session out of the active set synchronously, before its first await; then it
 * persists the record, tells chat / the operator and emits the matching events (`winners`,
 * `draw-finished`, `draw-failed`, `draw-cancelled`). Links are delivered through the announcer
 * only (never logged). Does not: pick winners, call the shop, or schedule timers.
 */
import { gifterOf } from './announcer.js';
import { isoNow, persistQuietly, type FlowContext } from './context.js';
import type { DrawRecord, Winner } from './model.js';
import { redrawVoice } from './redraws.js';
import { snapshot, type DrawSession } from './session.js';
import { plural } from '../shared/plural.js';

/**
 * The winners have their prizes: finished, announced, links delivered. Winners the shop confirmed
 * (`confirmed`: a gift draw's, carrying Fourthwall's redeem links, mapped by its flow) replace the
 * recorded ones, and the seed is revealed with them.
 */
export async function settleWinners(c: FlowContext, s: DrawSession, confirmed?: Winner[]): Promise<void> {
  const r = s.record;
  if (confirmed) r.winners = confirmed;
  r.status = 'finished';
  r.closedAt = isoNow(c.clock);
  r.finishInFlight = false;
  delete r.failure;
  if (confirmed && s.frozen) s.reveal();
  c.draws.retire(s);
  c.logger.info({ drawId: s.id, winners: r.winners.map((w) => w.login) }, 'draw finished');
  await persistQuietly(c, s);
  c.announce.winners(s);
  c.announce.deliverLinks(s, r.winners);
  c.events.emit(
    'winners',
    snapshot(r),
    r.winners.map((w) => ({ ...w })),
  );
  c.events.emit('draw-finished', snapshot(r));
}

/**
 * Nobody eligible entered a link giveaway or a gift purchase's window: finished without winners.
 * (A gift draw short of winners, none included, is handed back instead: handBack.)
 */
export async function settleEmpty(c: FlowContext, s: DrawSession): Promise<void> {
  const r = s.record;
  r.status = 'finished';
  r.closedAt = isoNow(c.clock);
  c.draws.retire(s);
  c.logger.info({ drawId: s.id, entrants: s.entrants.size }, 'nobody eligible entered');
  c.announce.say('noEntrants', { product: r.offer.name, gifter: gifterOf(r), entrants: s.entrants.size }, 'normal');
  await persistQuietly(c, s);
  c.events.emit('winners', snapshot(r), []);
  c.events.emit('draw-finished', snapshot(r));
}

/**
 * `no eligible entrant`, `only 1 eligible entrant`, `only 2 eligible entrants`; when the account
 * rules decided it (`rules.account` of the close), why, so the round's one line says it all:
 * `only 1 entrant checked with Twitch in time`, `only 2 eligible entrants (3 set aside by the
 * account rules)`.
 */
function eligibleText(n: number, r: DrawRecord): string {
  const account = r.rules?.['account'] as { unfilledWhy?: string; setAside?: number } | undefined;
  if (account?.unfilledWhy === 'time')
    return n === 0
      ? 'no entrant checked with Twitch in time'
      : `only ${plural(n, 'entrant')} checked with Twitch in time`;
  const base = n === 0 ? 'no eligible entrant' : `only ${plural(n, 'eligible entrant')}`;
  const aside = account?.setAside ?? 0;
  return aside > 0 ? `${base} (${aside} set aside by the account rules)` : base;
}

/**
 * A gift draw with fewer eligible winners than gifts (none included): Fourthwall accepts a finish only with one
 * participant per available gift (GIVEAWAY_DRAW_FINISHED_DATA_MISMATCH otherwise), so nothing is
 * sent; Fourthwall closes the draw at its deadline and reopens it (a REDO draw) with every gift,
 * which the bot runs like any draw. Recorded as failed with that reason (no winners: nobody got
 * a gift from this draw), told to the operator and said in chat in one line, as loud as the round
 * is (redraws.ts): the first round's `tooFewEntrants`, the first redraw's `redrawsContinue`, and
 * nothing for a quiet redraw nobody entered.
 */
export async function handBack(c: FlowContext, s: DrawSession): Promise<void> {
  const r = s.record;
  const eligible = r.winners.length;
  const voice = s.quiet ? 'quiet' : redrawVoice(c.draws, s);
  s.clearTimers();
  r.status = 'failed';
  const reason = `${eligibleText(eligible, r)} for ${plural(r.gifts, 'gift')}; Fourthwall takes one winner per gift, so no winners were sent and it reopens the draw with the same gifts after its deadline`;
  r.failure = { reason, at: isoNow(c.clock) };
  r.closedAt = isoNow(c.clock);
  r.winners = [];
  delete r.setAside; // no pick stands (the record then verifies as a draw without picks); rules.account keeps the counts
  r.finishInFlight = false;
  if (s.frozen) s.reveal();
  c.draws.retire(s);
  c.logger.info(
    { drawId: s.id, eligible, gifts: r.gifts },
    'fewer eligible entrants than gifts: draw handed back to Fourthwall',
  );
  const values = {
    product: r.offer.name,
    gifter: gifterOf(r),
    entrants: eligible,
    eligible: eligibleText(eligible, r),
    count: r.gifts,
    gifts: plural(r.gifts, 'gift'),
    seconds: Math.max(0, Math.ceil((s.fourthwallDeadlineMs - c.clock.now()) / 1000)),
    cycle: Math.max(0, Math.round((s.fourthwallDeadlineMs - Date.parse(r.openedAt)) / 1000)),
    enter: c.settings.commands.enter,
  };
  if (voice === 'redraw') c.announce.say('redrawsContinue', values, 'normal');
  else if (voice === 'first' || s.entrants.size > 0) c.announce.say('tooFewEntrants', values, 'normal');
  c.operator.notify(`Draw ${r.id} (${r.offer.name}): ${reason}.`);
  await persistQuietly(c, s);
  c.events.emit('winners', snapshot(r), []);
  c.events.emit('draw-failed', snapshot(r));
}

/** Marks the draw failed with `reason` (told to chat and the operator, with any winners kept). */
export async function recordFailure(c: FlowContext, s: DrawSession, reason: string, cause?: unknown): Promise<void> {
  const r = s.record;
  s.clearTimers();
  r.status = 'failed';
  r.failure = { reason, at: isoNow(c.clock) };
  r.closedAt = isoNow(c.clock);
  r.finishInFlight = false;
  if (s.frozen) s.reveal();
  c.draws.retire(s);
  c.logger.error({ drawId: s.id, reason, err: cause }, 'draw failed');
  const winners = r.winners.length ? ` Winners: ${r.winners.map((w) => `@${w.login}`).join(', ')}.` : '';
  c.operator.notify(`Draw ${r.id} (${r.offer.name}) failed: ${reason}.${winners}`);
  c.announce.say('failed', { product: r.offer.name, reason }, 'high');
  await persistQuietly(c, s);
  c.events.emit('draw-failed', snapshot(r));
}

/** `!giveaway cancel` of a link giveaway: no links are created; the seed is revealed. */
export async function recordCancel(c: FlowContext, s: DrawSession): Promise<void> {
  s.clearTimers();
  const r = s.record;
  r.status = 'cancelled';
  r.closedAt = isoNow(c.clock);
  s.reveal();
  c.draws.retire(s);
  c.logger.info({ drawId: s.id }, 'link giveaway cancelled');
  c.announce.say('cancelled', { product: r.offer.name }, 'normal');
  c.events.emit('draw-cancelled', snapshot(r));
  await persistQuietly(c, s);
}

/** A settled draw whose winners the shop reports again: winners and links brought in line (new links delivered). */
export async function reconcileWinners(c: FlowContext, s: DrawSession, reported: Winner[]): Promise<void> {
  const r = s.record;
  const before = JSON.stringify(r.winners);
  r.winners = reported;
  if (JSON.stringify(r.winners) === before) return;
  c.logger.info({ drawId: r.id }, 'draw record reconciled with Fourthwall');
  await persistQuietly(c, s);
  const added = r.winners.filter((w) => w.redeemUrl && !before.includes(w.redeemUrl));
  c.announce.deliverLinks(s, added);
}
