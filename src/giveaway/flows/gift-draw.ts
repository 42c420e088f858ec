/**
 * The gift-draw flow: a supporter's gift at Fourthwall starts a draw (GIFT_DRAW_STARTED), chat
 * enters, the bot picks one winner per gift and finishes the draw at Fourthwall exactly once,
 * before Fourthwall's deadline (the entry window + 60 s); Fourthwall's answer carries the redeem
 * links. Phases: open, closing, awaiting-beacon, picking, [claim-window], finishing, then settled
 * or failed (fewer eligible winners than gifts: handed back, Fourthwall reopens the draw).
 *
 * Contract: `giftDrawStarted` opens the draw once per id with `durationSeconds` clamped to
 * 0..MAX_DRAW_SECONDS (the published document sets no bounds); a window already over opens and
 * closes at once. `deliver` first saves the record with `finishInFlight`, then `runFinish` sends
 * the recorded winners with `shop.finishDraw` and, when the outcome is unknown or the draw is
 * reported as already finished, asks `shop.getDraw` what happened: winners present -> that is the
 * result; not finished and still before the deadline -> the SAME winners are sent again.
 * Unavailable shops are retried with backoff until the deadline. It never picks winners and never
 * sends a different list; after a restart it starts by asking (`resumeDelivery`).
 * `giftDrawEnded` (GIFT_DRAW_ENDED) brings the record in line with Fourthwall's winners. Both hand
 * the settle effects our winners with Fourthwall's gifts joined (`mapFourthwallWinners`: gift ids
 * and redeem links). Does not announce, settle or log links.
 */
import type { FlowContext } from '../context.js';
import type { Trigger } from '../draw-machine.js';
import { openDraw } from '../opening.js';
import type { GiftDrawInfo, Winner, Entrant } from '../model.js';
import { ShopError } from '../ports.js';
import type { DrawSession } from '../session.js';
import { FINISH_RESERVE_MS, SHOP_BACKOFF, type DrawFlow } from './flow.js';
import { backoffDelay } from '../../shared/retry.js';

/** The longest entry window a Fourthwall draw gets (its durationSeconds is clamped to this). */
const MAX_DRAW_SECONDS = 3600;

/** A draw's entry window in seconds: finite, 0..MAX_DRAW_SECONDS (NaN, negatives -> 0). */
function clampDrawSeconds(value: number): number {
  if (!Number.isFinite(value)) return value === Infinity ? MAX_DRAW_SECONDS : 0;
  return Math.min(MAX_DRAW_SECONDS, Math.max(0, Math.floor(value)));
}

/** GIFT_DRAW_STARTED: opens the draw for entries until its Fourthwall duration ends. */
export function giftDrawStarted(c: FlowContext, draw: GiftDrawInfo, eventId?: string): Promise<void> {
  if (c.settings.giftFlow !== 'draw') {
    c.logger.info({ drawId: draw.id }, 'gift draw ignored: the bot runs the purchase flow');
    return Promise.resolve();
  }
  const now = c.clock.now();
  const created = Date.parse(draw.createdAt);
  const startMs = Number.isFinite(created) ? created : now;
  const seconds = clampDrawSeconds(draw.durationSeconds);
  if (seconds !== draw.durationSeconds)
    c.logger.info({ drawId: draw.id, durationSeconds: draw.durationSeconds, seconds }, 'draw duration clamped');
  const closesAtMs = startMs + seconds * 1000;
  const available = draw.gifts.filter((g) => g.status === 'AVAILABLE');
  return openDraw(c, draw.id, closesAtMs, () => ({
    kind: 'gift-draw',
    source: {
      drawId: draw.id,
      ...(draw.giveawayId ? { giveawayId: draw.giveawayId } : {}),
      ...(eventId ? { eventId } : {}),
      ...(draw.type === 'REDO' ? { redo: true } : {}),
    },
    offer: { id: draw.offer.id, name: draw.offer.name },
    gifts: available.length,
    giftIds: available.map((g) => g.id),
    supporter: { username: draw.username, message: draw.message },
  }));
}

/**
 * GIFT_DRAW_ENDED: brings the record in line with Fourthwall's winners, announcing nothing twice. A
 * draw still open (or in its claim window) settles with them, or fails when Fourthwall closed it
 * without winners; a draw being finished is left to its finish call; a settled one is reconciled.
 */
export async function giftDrawEnded(c: FlowContext, draw: GiftDrawInfo): Promise<void> {
  const ended = (s: DrawSession): Trigger => ({
    name: 'ended-at-fourthwall',
    winners: mapFourthwallWinners(s.record.winners, draw, s.entrants),
  });
  const active = c.draws.active.get(draw.id);
  if (active) {
    if (active.phase === 'open' || active.phase === 'claim-window') {
      await (hasWinners(draw)
        ? c.fire(active, ended(active))
        : c.fire(active, { name: 'failed', reason: 'Fourthwall closed the draw before the winners were sent' }));
    } else
      c.logger.info({ drawId: draw.id }, 'draw ended at Fourthwall while being finished: the finish call settles it');
    return;
  }
  const s = c.draws.findRecent(draw.id) ?? (await c.draws.sessionFromRepo(draw.id));
  if (!s) {
    c.logger.info({ drawId: draw.id }, 'draw ended for a draw this bot does not know');
    return;
  }
  if (hasWinners(draw)) await c.fire(s, ended(s));
}

export const giftDrawFlow: DrawFlow = {
  kind: 'gift-draw',
  phases: ['open', 'closing', 'awaiting-beacon', 'picking', 'claim-window', 'finishing', 'settled', 'failed'],
  claimWindowFits: (s, ms, now) => now + ms + FINISH_RESERVE_MS <= s.fourthwallDeadlineMs,
  deliver: (c, s) => finishAtFourthwall(c, s, 'finish'),
  resumeDelivery: (c, s) => {
    if (!s.record.finishInFlight) return finishAtFourthwall(c, s, 'finish');
    c.logger.info({ drawId: s.id }, 'restored draw had a finish in flight: reconciling');
    return finishAtFourthwall(c, s, 'reconcile');
  },
};

/**
 * Sends the winners to Fourthwall (saved with `finishInFlight` first), or starts by asking
 * (`reconcile`, after a restart). Fewer winners than gifts: Fourthwall takes exactly one participant
 * per available gift and refuses fewer, so the draw is handed back instead (`too-few`).
 */
async function finishAtFourthwall(
  c: FlowContext,
  s: DrawSession,
  startWith: 'finish' | 'reconcile',
): Promise<Trigger | undefined> {
  if (startWith === 'finish' && s.record.winners.length < s.record.gifts) return { name: 'too-few' };
  if (startWith === 'finish') {
    s.record.finishInFlight = true;
    try {
      await s.persist(c.repo);
    } catch (err) {
      s.record.finishInFlight = false;
      return {
        name: 'failed',
        reason: 'the draw journal could not be written, so the winners were not sent',
        cause: err,
      };
    }
  }
  const outcome = await runFinish(c, s, startWith);
  if (outcome.kind === 'stopped') return undefined;
  if (outcome.kind === 'failed')
    return { name: 'failed', reason: outcome.reason, ...(outcome.cause !== undefined ? { cause: outcome.cause } : {}) };
  return { name: 'delivered', winners: mapFourthwallWinners(s.record.winners, outcome.draw, s.entrants) };
}

type FinishOutcome =
  { kind: 'finished'; draw: GiftDrawInfo } | { kind: 'failed'; reason: string; cause?: unknown } | { kind: 'stopped' };

/** True when at least one gift of the draw has a winner. */
function hasWinners(draw: GiftDrawInfo): boolean {
  return draw.gifts.some((g) => g.winner !== undefined && g.winner !== null);
}

function kindOf(err: unknown): ShopError['kind'] | 'other' {
  return err instanceof ShopError ? err.kind : 'other';
}

/** A short reason for chat and the operator (never the raw error text). */
function describeShopFailure(err: unknown): string {
  switch (kindOf(err)) {
    case 'rejected':
      return 'Fourthwall refused the winners';
    case 'not-found':
      return 'Fourthwall does not know this draw';
    case 'auth':
      return 'the bot is not allowed to finish draws (check the Fourthwall credentials)';
    case 'unavailable':
      return 'Fourthwall could not be reached in time';
    default:
      return 'an unexpected error while finishing the draw';
  }
}

/**
 * Sends the session's recorded winners to Fourthwall (or starts by asking, when `startWith` is
 * 'reconcile') until the draw has a known result or the deadline passes.
 */
async function runFinish(ctx: FlowContext, s: DrawSession, startWith: 'finish' | 'reconcile'): Promise<FinishOutcome> {
  const log = ctx.logger;
  const drawId = s.record.source.drawId ?? s.id;
  const deadline = s.fourthwallDeadlineMs;
  const participants = s.record.winners.map((w) => ({ userId: w.userId, userName: w.login }));
  let step = startWith;
  let attempt = 0;
  let reportedFinished = false;
  let lastError: unknown;

  const wait = async (): Promise<'go' | 'stopped' | 'late'> => {
    const ms = backoffDelay(SHOP_BACKOFF, ++attempt);
    const limit = step === 'reconcile' ? deadline + 30_000 : deadline;
    if (ctx.clock.now() + ms >= limit) return 'late';
    return (await ctx.work.sleep(ms)) ? 'go' : 'stopped';
  };

  for (let round = 0; round < 50; round++) {
    if (ctx.work.isStopped()) return { kind: 'stopped' };
    if (step === 'finish') {
      if (ctx.clock.now() >= deadline) {
        // (a backoff with jitter may end just past the deadline: the last failure is the reason then)
        const reason =
          kindOf(lastError) === 'unavailable'
            ? describeShopFailure(lastError)
            : 'the Fourthwall deadline passed before the winners could be sent';
        return { kind: 'failed', reason, cause: lastError };
      }
      try {
        log.info({ drawId, winners: participants.length }, 'sending winners to Fourthwall');
        const draw = await ctx.shop.finishDraw(drawId, participants);
        return { kind: 'finished', draw };
      } catch (err) {
        lastError = err;
        const kind = kindOf(err);
        log.warn({ drawId, err, kind }, 'finishing the draw did not succeed');
        if (kind === 'outcome-unknown' || kind === 'already-finished' || kind === 'other') {
          reportedFinished = kind === 'already-finished';
          step = 'reconcile';
          continue;
        }
        if (kind === 'unavailable') {
          const w = await wait();
          if (w === 'stopped') return { kind: 'stopped' };
          if (w === 'late') return { kind: 'failed', reason: describeShopFailure(err), cause: err };
          continue;
        }
        return { kind: 'failed', reason: describeShopFailure(err), cause: err };
      }
    }
    try {
      const draw = await ctx.shop.getDraw(drawId);
      if (hasWinners(draw)) {
        log.info({ drawId }, 'Fourthwall already has the winners of this draw');
        return { kind: 'finished', draw };
      }
      if (reportedFinished) {
        return { kind: 'failed', reason: 'Fourthwall closed the draw without winners' };
      }
      if (ctx.clock.now() >= deadline) {
        return { kind: 'failed', reason: 'Fourthwall closed the draw before the winners could be sent' };
      }
      log.info({ drawId }, 'draw not finished at Fourthwall yet: sending the same winners again');
      step = 'finish';
    } catch (err) {
      lastError = err;
      const kind = kindOf(err);
      log.warn({ drawId, err, kind }, 'could not read the draw back from Fourthwall');
      if (kind === 'not-found' || kind === 'auth' || kind === 'rejected') {
        return { kind: 'failed', reason: describeShopFailure(err), cause: err };
      }
      const w = await wait();
      if (w === 'stopped') return { kind: 'stopped' };
      if (w === 'late') {
        return { kind: 'failed', reason: 'could not confirm the result with Fourthwall', cause: err };
      }
    }
  }
  return { kind: 'failed', reason: 'too many attempts to finish the draw', cause: lastError };
}

/**
 * Our winners, with each one's gift id and redeem link from Fourthwall's answer. Gifts are matched
 * by username (case-insensitive), then gifts without a username to our remaining winners in order.
 * A Fourthwall winner we did not send (someone else finished the draw) is recorded with pick -1.
 */
function mapFourthwallWinners(
  ours: readonly Winner[],
  draw: GiftDrawInfo,
  entrants: { findByLogin(login: string): Entrant | undefined },
): Winner[] {
  const withWinner = draw.gifts.filter((g) => g.winner);
  const used = new Set<number>();
  const out: Winner[] = [];
  const leftover: typeof withWinner = [];
  const withGift = (w: Winner, gift: (typeof withWinner)[number]): Winner => ({
    ...w,
    giftId: gift.id,
    ...(gift.winner?.redeemUri ? { redeemUrl: gift.winner.redeemUri } : {}),
  });
  for (const g of withWinner) {
    const name = g.winner?.username?.toLowerCase();
    const idx = name ? ours.findIndex((w, i) => !used.has(i) && w.login.toLowerCase() === name) : -1;
    if (idx >= 0) {
      used.add(idx);
      out.push(withGift(ours[idx]!, g));
    } else {
      leftover.push(g);
    }
  }
  for (const g of leftover) {
    const name = g.winner?.username;
    if (!name) {
      const idx = ours.findIndex((_, i) => !used.has(i));
      if (idx >= 0) {
        used.add(idx);
        out.push(withGift(ours[idx]!, g));
      }
      continue;
    }
    const entrant = entrants.findByLogin(name);
    out.push(
      withGift(
        {
          userId: entrant?.userId ?? `fourthwall:${name.toLowerCase()}`,
          login: name.toLowerCase(),
          displayName: entrant?.displayName ?? name,
          pick: -1,
        },
        g,
      ),
    );
  }
  out.sort((a, b) => (a.pick < 0 ? 1 : b.pick < 0 ? -1 : a.pick - b.pick));
  return out;
}
