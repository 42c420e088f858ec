/**
 * `!giveaway reroll <login>`: a moderator replaces one winner by the next pick of the provably
 * fair sequence among the other eligible entrants (checked with Twitch like the first picks when
 * account rules are in force: checked-picks.ts).
 *
 * Contract: the winner is looked up among active, recent and stored draws (newest first). Refused
 * where the machine says so (draw-machine.ts `rerollRefusal`: while the winners are being picked
 * or confirmed, for a gift draw settled at Fourthwall, for a cancelled giveaway). During a claim
 * window the replacement is asked to claim (the machine's `rerolled-in-claim`); after it, an
 * existing link is delivered to the replacement and, for a finished draw, the new winners are
 * emitted. The reroll is recorded in the draw's reroll log and saved. Does not: create links or
 * finish draws at Fourthwall.
 */
import type { ChatMessage } from '../shared/chat.js';
import { replaceWinnerChecked } from './checked-picks.js';
import { announceReroll } from './claim-window.js';
import { isoNow, persistQuietly, type FlowContext } from './context.js';
import { rerollRefusal } from './draw-machine.js';
import type { ActionResult } from './flows/link-giveaway.js';
import { render } from './messages.js';
import { snapshot } from './session.js';

const REFUSALS = {
  busy: 'The winners are being confirmed right now; try again in a moment.',
  'settled-at-fourthwall': 'That gift draw is already settled at Fourthwall; its winners cannot change.',
  cancelled: 'That giveaway was cancelled.',
} as const;

/** Replaces the winner `login` (with or without `@`, any case) on behalf of `by`. */
export async function reroll(c: FlowContext, login: string, by: ChatMessage): Promise<ActionResult> {
  const name = login.trim().replace(/^@/, '').toLowerCase();
  if (!name) return { ok: false, message: 'Say whose win to reroll: !giveaway reroll <login>.' };
  const s = await c.work.track(c.draws.findByWinner(name));
  if (!s) return { ok: false, message: render('{name} is not a winner of a recent giveaway.', { name }) };
  const r = s.record;
  const refusal = rerollRefusal(s.phase, r.kind);
  if (refusal) return { ok: false, message: REFUSALS[refusal] };
  const old = r.winners.find((w) => w.login.toLowerCase() === name)!;
  const phase = s.phase;
  const inClaim = phase === 'claim-window';
  const swap = await c.work.track(
    replaceWinnerChecked(s, old.userId, {
      gate: c.accounts,
      now: () => c.clock.now(),
      still: () => s.phase === phase,
      meta: { at: isoNow(c.clock), reason: 'command', byUserId: by.userId, displayNameOf: (id) => s.displayNameOf(id), claimPending: inClaim },
    }),
  );
  if (!swap) {
    c.announce.say('rerollExhausted', { old: `@${old.login}`, product: r.offer.name }, 'normal');
    return { ok: false, message: render('Nobody is left to replace {name}.', { name }) };
  }
  const reason = by.roles.broadcaster ? 'rerolled by the broadcaster' : 'rerolled by a moderator';
  // Saved before it is said in chat: a power cut after the announcement keeps the new winner
  // (test/storage-power-cut.test.ts).
  await c.work.track(persistQuietly(c, s));
  announceReroll(c, s, swap.old, swap.winner, reason);
  if (inClaim) {
    void c.fire(s, { name: 'rerolled-in-claim', winner: swap.winner });
    await c.work.track(persistQuietly(c, s));
    return { ok: true, id: s.id };
  }
  if (swap.winner.redeemUrl) c.announce.deliverPassedOnLink(s, swap.old, swap.winner);
  if (r.status === 'finished') c.events.emit('winners', snapshot(r), r.winners.map((w) => ({ ...w })));
  return { ok: true, id: s.id };
}
