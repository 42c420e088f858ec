/**
 * Finishing a Fourthwall gift draw exactly once, with the winners already recorded.
 *
 * Contract: `runFinish` sends the recorded winners with `shop.finishDraw` and, when the outcome is
 * unknown or the draw is reported as already finished, asks `shop.getDraw` what happened: winners
 * present -> that is the result; not finished and still before Fourthwall's deadline (duration +
 * 60 s) -> the SAME winners are sent again. Unavailable shops are retried with backoff until the
 * deadline. It never picks winners and never sends a different list. `mapFourthwallWinners` joins
 * Fourthwall's gifts (redeem links) to our winners. Does not persist, announce or log links.
 */
import type { EngineContext } from './context.js';
import { ShopError, type GiftDrawInfo, type Winner, type Entrant } from './ports.js';
import type { DrawSession } from './session.js';

export type FinishOutcome =
  | { kind: 'finished'; draw: GiftDrawInfo }
  | { kind: 'failed'; reason: string; cause?: unknown }
  | { kind: 'stopped' };

/** Backoff before retry `attempt` (0-based): 1 s, 2 s, 4 s ... capped at 15 s. */
export function backoffMs(attempt: number): number {
  return Math.min(15_000, 1000 * 2 ** attempt);
}

/** True when at least one gift of the draw has a winner. */
export function hasWinners(draw: GiftDrawInfo): boolean {
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
export async function runFinish(
  ctx: EngineContext,
  s: DrawSession,
  startWith: 'finish' | 'reconcile',
): Promise<FinishOutcome> {
  const log = ctx.logger;
  const drawId = s.record.source.drawId ?? s.id;
  const deadline = s.fourthwallDeadlineMs;
  const participants = s.record.winners.map((w) => ({ userId: w.userId, userName: w.login }));
  let step = startWith;
  let attempt = 0;
  let reportedFinished = false;
  let lastError: unknown;

  const wait = async (): Promise<'go' | 'stopped' | 'late'> => {
    const ms = backoffMs(attempt++);
    const limit = step === 'reconcile' ? deadline + 30_000 : deadline;
    if (ctx.clock.now() + ms >= limit) return 'late';
    return (await ctx.sleep(ms)) ? 'go' : 'stopped';
  };

  for (let round = 0; round < 50; round++) {
    if (ctx.isStopped()) return { kind: 'stopped' };
    if (step === 'finish') {
      if (ctx.clock.now() >= deadline) {
        return { kind: 'failed', reason: 'the Fourthwall deadline passed before the winners could be sent', cause: lastError };
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
export function mapFourthwallWinners(
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
