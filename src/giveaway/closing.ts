/**
 * Closing a draw: the effects between closing entries and the winners (draw-machine.ts phases `closing`,
 * `awaiting-beacon`, `picking`): freeze the eligible entrants, wait for the beacon round, take the
 * picks.
 *
 * Contract: `freezeEntrants` applies the chat rules (eligibility, winner cooldown) and freezes
 * the eligible entrants into `s.frozen`, with the list's digest and the rules on the record; a
 * draw restored after its list was announced keeps that list (it is never frozen a second time).
 * The freeze runs in slices that yield to I/O (freeze.ts), so a draw of any size never blocks the
 * event loop for long; the frozen list stays beside the record, never copied into events.
 * `awaitBeacon` returns the key of the pick sequence (beacon-step.ts). `takePicks` reveals the
 * seed and takes the first picks with the provably fair sequence; with Twitch account rules in
 * force each pick is checked and one that fails is set aside for the next (winner-picks.ts),
 * within one deadline set when entries closed (`s.picksUntil`). Each returns the trigger its
 * outcome feeds back. Does not: change the phase, talk to the shop, or deliver prizes.
 */
import { keyForPicks } from './beacon-step.js';
import { picksDeadline, takeCheckedPicks } from './winner-picks.js';
import { claimWindowFits } from './claim-window.js';
import { channelIdentity, type FlowContext } from './context.js';
import type { Trigger } from './draw-machine.js';
import { freezeEntrantTable } from './entrants/index.js';
import type { DrawSession } from './session.js';
import { recordChannelCounts } from './shared-chat-counts.js';

/** Freezes the eligible entrants (see the module contract); `frozen` when done. */
export async function freezeEntrants(c: FlowContext, s: DrawSession): Promise<Trigger> {
  const r = s.record;
  s.picksUntil ??= picksDeadline(s, c.clock.now());
  // A draw restored while it waited for its beacon round keeps the list it already announced
  // (digest and round are public): it is never frozen a second time.
  if (s.frozen && s.frozen.digest === r.fairness.entrantsDigest) return { name: 'frozen' };
  const hours = c.settings.eligibility.winnerCooldownHours;
  const recentWinners = hours > 0 ? await c.repo.recentWinnerIds(c.clock.now() - hours * 3_600_000) : new Set<string>();
  const result = await freezeEntrantTable(s.entrants, c.settings, channelIdentity(c.chat), recentWinners);
  r.rules = result.rules;
  // Tickets from channel points and bits (tickets.ts): already in the frozen weights; the totals say where they came from.
  if (s.tickets.size)
    r.rules.ticketsGranted = { channelPoints: s.tickets.granted.points, bits: s.tickets.granted.bits };
  s.frozen = result.frozen;
  r.fairness.entrantsDigest = result.frozen.digest;
  s.excluded = result.excluded;
  recordChannelCounts(r, s.entrants, c.chat, c.settings.sharedChat, c.channelDirectory);
  return { name: 'frozen' };
}

/** The pick sequence's key once the beacon round is in (or the seed alone); undefined when stopped. */
export async function awaitBeacon(c: FlowContext, s: DrawSession): Promise<Trigger | undefined> {
  const frozen = s.frozen!;
  const key = await keyForPicks(c, s, frozen.digest, frozen.length);
  return key ? { name: 'beacon-ready', key } : undefined;
}

/** Reveals the seed and takes the picks; `nobody-eligible`, `picked-for-claim` or `picked`. */
export async function takePicks(c: FlowContext, s: DrawSession, key: Buffer): Promise<Trigger> {
  const r = s.record;
  const frozen = s.frozen!;
  s.reveal();
  c.events.emit('entrants-frozen', r.id, frozen.digest, frozen.length);
  const gate = c.accounts?.active ? c.accounts : undefined;
  const until = s.picksUntil ?? picksDeadline(s, c.clock.now());
  const got = await takeCheckedPicks({
    key,
    frozen,
    from: 0,
    wanted: r.gifts,
    ...(gate ? { gate } : {}),
    until,
    now: () => c.clock.now(),
  });
  r.winners = got.picks.map(({ entrant, pick, accountCheck }) => ({
    userId: entrant.userId,
    login: entrant.login,
    displayName: s.displayNameOf(entrant.userId) ?? entrant.login,
    pick,
    ...(accountCheck ? { accountCheck } : {}),
  }));
  if (gate) {
    const unfilled = Math.max(0, r.gifts - r.winners.length);
    const outcome = {
      setAside: got.setAside,
      checked: got.checked,
      unchecked: got.unchecked,
      ...(got.problem ? { problem: got.problem } : {}),
      ...(unfilled > 0
        ? {
            unfilled: {
              count: unfilled,
              of: r.gifts,
              prize: r.offer.name,
              why: got.outOfTime ? ('time' as const) : ('exhausted' as const),
            },
          }
        : {}),
    };
    r.setAside = got.setAside;
    r.rules = { ...r.rules, account: gate.accountRecord(outcome) };
    // A gift draw short of winners is handed back: its one chat line (settle.ts) says so; the
    // check is kept for `!giveaway` and the history, not said apart.
    gate.report(r.id, outcome, { say: !(r.kind === 'gift-draw' && r.winners.length < r.gifts) });
    if (got.outOfTime)
      c.logger.warn(
        { drawId: s.id, unfilled },
        'account checks ran out of time: going on with the winners checked so far (a gift draw short of winners is handed back)',
      );
  }
  c.logger.info(
    {
      drawId: s.id,
      eligible: frozen.length,
      winners: r.winners.map((w) => w.login),
      excluded: s.excluded ?? {},
      setAside: got.setAside.length,
    },
    'winners picked',
  );
  // A gift draw short of winners (none included) is handed back to Fourthwall by its delivery
  // (flows/gift-draw.ts `too-few`): one story for 0, 1 or N-1 entrants, and no claim window first.
  if (r.kind === 'gift-draw' && r.winners.length < r.gifts) return { name: 'picked' };
  if (r.winners.length === 0) return { name: 'nobody-eligible' };
  return claimWindowFits(c, s) ? { name: 'picked-for-claim' } : { name: 'picked' };
}
