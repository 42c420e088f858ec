/**
 * `!giveaway reroll <login>`: a moderator replaces one winner by the next pick of the provably
 * fair sequence among the other eligible entrants (checked with Twitch like the first picks when
 * account rules are in force: checked-picks.ts).
 *
 * Contract: the winner is looked up among active, recent and stored draws (newest first). Refused
 * while the winners are being confirmed (`picking`, `finalizing`), for a gift draw already settled
 * at Fourthwall, and for a cancelled giveaway. During a claim window the replacement is asked to
 * claim (claim-window.ts); after it, an existing link is delivered to the replacement and, for a
 * finished draw, the new winners are emitted. The reroll is recorded in the draw's reroll log and
 * saved. Does not: create links or finish draws at Fourthwall.
 */
import type { ChatMessage } from '../shared/chat.js';
import type { ClaimWindow } from './claim-window.js';
import { snapshot } from './context.js';
import { isoNow, persistQuietly, type Engine } from './engine.js';
import type { ActionResult } from './link-flow.js';
import { render } from './messages.js';
import { replaceWinnerChecked } from './checked-picks.js';

export class Reroller {
  constructor(
    private readonly e: Engine,
    private readonly claims: ClaimWindow,
  ) {}

  /** Replaces the winner `login` (with or without `@`, any case) on behalf of `by`. */
  async reroll(login: string, by: ChatMessage): Promise<ActionResult> {
    const { ctx, draws, runtime } = this.e;
    const name = login.trim().replace(/^@/, '').toLowerCase();
    if (!name) return { ok: false, message: 'Say whose win to reroll: !giveaway reroll <login>.' };
    const s = await runtime.track(draws.findByWinner(name));
    if (!s) return { ok: false, message: render('{name} is not a winner of a recent giveaway.', { name }) };
    const r = s.record;
    if (s.phase === 'picking' || s.phase === 'finalizing') {
      return { ok: false, message: 'The winners are being confirmed right now; try again in a moment.' };
    }
    if (s.phase === 'done' && r.kind === 'gift-draw') {
      return { ok: false, message: 'That gift draw is already settled at Fourthwall; its winners cannot change.' };
    }
    if (s.phase === 'done' && r.status === 'cancelled') return { ok: false, message: 'That giveaway was cancelled.' };
    const old = r.winners.find((w) => w.login.toLowerCase() === name)!;
    const inClaim = s.phase === 'claim';
    const phase = s.phase;
    const swap = await runtime.track(
      replaceWinnerChecked(s, old.userId, {
        gate: ctx.accounts,
        now: () => ctx.clock.now(),
        still: () => s.phase === phase,
        meta: { at: isoNow(ctx.clock), reason: 'command', byUserId: by.userId, displayNameOf: (id) => s.displayNameOf(id), claimPending: inClaim },
      }),
    );
    if (!swap) {
      this.e.announce.say('rerollExhausted', { old: `@${old.login}`, product: r.offer.name }, 'normal');
      return { ok: false, message: render('Nobody is left to replace {name}.', { name }) };
    }
    this.claims.announceReroll(s, swap.old, swap.winner, by.roles.broadcaster ? 'rerolled by the broadcaster' : 'rerolled by a moderator');
    if (inClaim) {
      this.claims.askReplacement(s, swap.winner);
      await runtime.track(persistQuietly(this.e, s));
      return { ok: true, id: s.id };
    }
    if (swap.winner.redeemUrl) this.e.announce.deliverPassedOnLink(s, swap.old, swap.winner);
    if (r.status === 'finished') ctx.events.emit('winners', snapshot(r), r.winners.map((w) => ({ ...w })));
    await runtime.track(persistQuietly(this.e, s));
    return { ok: true, id: s.id };
  }
}
