/**
 * `!giveaway reroll <login>`: a moderator replaces one winner by the next pick of the provably
 * fair sequence among the other eligible entrants (checked with Twitch like the first picks when
 * account rules are in force: winner-picks.ts).
 *
 * Contract: the winner is looked up in draw `drawId` when given (the dashboard's button names its
 * draw), else among active, recent and stored draws (newest first, a draw where they were replaced
 * included). Refused where the machine says so (draw-machine.ts `rerollRefusal`: while the winners
 * are being picked or confirmed, for a gift draw settled at Fourthwall, for a cancelled giveaway,
 * for a winner replaced already, for a prize Fourthwall says was redeemed, cancelled or changed
 * to a promotion or a gift card: the delivery state's `closedAs`, and for a gift whose link has
 * gone out: `gift-out`); `winnerRefusal` is the same answer for the dashboard, so it offers Reroll
 * only where this accepts it. During a claim window (no link exists yet) the replacement is asked
 * to claim (the machine's `rerolled-in-claim`).
 *
 * A link someone has seen stays theirs (issue 46). A link exists only once it has gone out: the
 * console and the dashboard show it the moment it exists, and a whisper, the claim page or chat
 * may have shown it to the winner. So it is never passed on: a link giveaway's replacement gets a
 * NEW link (flows/link-giveaway.ts `newLinkFor`, made before the swap; when it cannot be made the
 * reroll is refused with the reason and nothing changes), the reroll record keeps the replaced
 * winner's link as theirs (`kept`: its redemption is theirs, src/delivery), and the new link goes to
 * the console and, with the new winners, to delivery; a gift's link cannot be issued again, so that
 * reroll is refused (`gift-out`). Without a link (a link giveaway whose links failed) the
 * replacement simply takes the place. The reroll is recorded in the draw's reroll log and saved.
 * A crash between making the new link and saving the reroll leaves that one link unused (nobody
 * was told it); the reroll did not happen and can be asked again. Does not: finish draws at
 * Fourthwall.
 */
import type { ChatMessage } from '../shared/chat.js';
import { hasNextPick, replaceWinnerChecked } from './winner-picks.js';
import { announceReroll } from './claim-window.js';
import { isoNow, persistQuietly, type FlowContext } from './context.js';
import { rerollRefusal, type DrawPhase, type RerollRefusal } from './draw-machine.js';
import { newLinkFor, type ActionResult } from './flows/link-giveaway.js';
import { PRIZE_CLOSURE_WORDS, type Delivery, type DrawRecord, type GiveawayLinkInfo } from './model.js';
import { render } from './messages.js';
import type { DrawRepository } from './ports.js';
import { wonBy } from './registry.js';
import { snapshot, type DrawSession } from './session.js';

const REFUSALS: Record<RerollRefusal, string> = {
  busy: 'The winners are being confirmed right now; try again in a moment.',
  'settled-at-fourthwall': 'That gift draw is already settled at Fourthwall; its winners cannot change.',
  cancelled: 'That giveaway was cancelled.',
  replaced: '{name} was already replaced in that giveaway; a winner is rerolled once.',
  redeemed: '{name} already redeemed the prize: nothing is left to pass on.',
  'not-redeemable':
    "{name}'s prize can no longer be redeemed (Fourthwall says it was {closure}): nothing is left to pass on.",
  'gift-out':
    "{name}'s gift link has already gone out ({where}), so it stays {name}'s: Fourthwall cannot issue that gift again, and passing the same link on would hand over a link someone has seen.",
};

/** Where a link that exists has been shown (the console and the dashboard always). */
function whereShown(delivery: Delivery | undefined): string {
  const seen = ['the console', 'the dashboard'];
  if (delivery?.whisperedAt) seen.push('a whisper');
  if (delivery?.claimPageOpenedAt) seen.push('the claim page');
  return seen.join(', ');
}

/** The delivery state of winner `login` (lower case) of `record`, when that winner is tracked. */
function deliveryOf(
  repo: Pick<DrawRepository, 'deliveryOf'>,
  record: Readonly<DrawRecord>,
  login: string,
): Delivery | undefined {
  const w = record.winners.find((x) => x.login.toLowerCase() === login);
  return w && (repo.deliveryOf(record.id, w.userId) ?? w.delivery);
}

/** Why winner `login` (lower case) of draw `record` in `phase` may not be replaced now, or undefined. */
export function winnerRefusal(
  repo: Pick<DrawRepository, 'deliveryOf'>,
  phase: DrawPhase,
  record: Readonly<DrawRecord>,
  login: string,
): RerollRefusal | undefined {
  const isWinner = record.winners.some((x) => x.login.toLowerCase() === login);
  const replaced = !isWinner && (record.rerolls ?? []).some((x) => x.replacedLogin.toLowerCase() === login);
  const delivery = deliveryOf(repo, record, login);
  const linkOut = !!record.winners.find((x) => x.login.toLowerCase() === login)?.redeemUrl;
  return rerollRefusal(phase, record.kind, {
    replaced,
    redeemed: !!delivery?.redeemedAt,
    closed: !!delivery?.closedAt,
    linkOut,
  });
}

/** The session of draw `drawId` (in memory or stored), or the latest one `name` won. */
function findDraw(c: FlowContext, name: string, drawId: string | undefined): Promise<DrawSession | undefined> {
  return drawId ? c.draws.sessionFromRepo(drawId) : c.draws.findByWinner(name);
}

/** Replaces the winner `login` (with or without `@`, any case) of draw `drawId` (default: their latest) on behalf of `by`. */
export async function reroll(c: FlowContext, login: string, by: ChatMessage, drawId?: string): Promise<ActionResult> {
  const name = login.trim().replace(/^@/, '').toLowerCase();
  if (!name) return { ok: false, message: 'Say whose win to reroll: !giveaway reroll <login>.' };
  const s = await c.work.track(findDraw(c, name, drawId));
  if (!s || !wonBy(s.record, name))
    return { ok: false, message: render('{name} is not a winner of a recent giveaway.', { name }) };
  const r = s.record;
  const refusal = winnerRefusal(c.repo, s.phase, r, name);
  if (refusal) {
    const delivery = deliveryOf(c.repo, r, name);
    return {
      ok: false,
      message: render(REFUSALS[refusal], {
        name,
        closure: PRIZE_CLOSURE_WORDS[delivery?.closedAs ?? 'CANCELLED'],
        where: whereShown(delivery),
      }),
    };
  }
  const old = r.winners.find((w) => w.login.toLowerCase() === name)!;
  const phase = s.phase;
  const inClaim = phase === 'claim-window';
  // The old link has gone out: the replacement gets a new one, made before anything changes.
  let fresh: { packageId: string; link: GiveawayLinkInfo } | undefined;
  if (old.redeemUrl && r.kind === 'link-giveaway') {
    if (!hasNextPick(s)) {
      c.announce.say('rerollExhausted', { old: `@${old.login}`, product: r.offer.name }, 'normal');
      return { ok: false, message: render('Nobody is left to replace {name}.', { name }) };
    }
    const made = await c.work.track(newLinkFor(c, s));
    if (!made.ok)
      return {
        ok: false,
        message: render(
          "{name}'s link has already gone out, so the replacement needs a new one, which could not be made ({reason}); nothing changed: try again.",
          { name, reason: made.reason },
        ),
      };
    fresh = made;
  }
  const swap = await c.work.track(
    replaceWinnerChecked(s, old.userId, {
      gate: c.accounts,
      now: () => c.clock.now(),
      still: () => s.phase === phase,
      meta: {
        at: isoNow(c.clock),
        reason: 'command',
        byUserId: by.userId,
        displayNameOf: (id) => s.displayNameOf(id),
        claimPending: inClaim,
        ...(fresh ? { newLink: { giftId: fresh.link.id, redeemUrl: fresh.link.link } } : {}),
      },
    }),
  );
  if (fresh && !swap)
    c.operator.notify(
      `[${r.offer.name}] a new giveaway link was made for @${old.login}'s replacement but nobody took the place: it is unused (package ${fresh.packageId}).`,
    );
  if (fresh && swap) (r.source.extraPackageIds ??= []).push(fresh.packageId);
  // Another reroll of this winner got there first (they are no longer a winner): not "nobody left".
  if (!swap && !r.winners.some((w) => w.userId === old.userId))
    return { ok: false, message: render(REFUSALS.replaced, { name }) };
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
  if (fresh) c.announce.deliverLinks(s, [swap.winner]);
  if (r.status === 'finished')
    c.events.emit(
      'winners',
      snapshot(r),
      r.winners.map((w) => ({ ...w })),
    );
  return { ok: true, id: s.id };
}
