/**
 * The engine's door for entries from Twitch beyond chat (`GiveawayEngine.enterByTickets`): one
 * channel-point redemption or one bits event, decided against every draw in memory by the rules
 * of tickets.ts, applied to the open ones and journaled before the answer.
 *
 * Contract: a ref already applied to any draw in memory (open or closing, or recently closed) is
 * `already`, whatever its draws' phases now; otherwise the request is decided in one synchronous
 * step over the draws in phase `open` (so a close racing it either sees the grant or never sees
 * the request), after the one await for the winner cooldown's recent winners. New entrants are
 * announced like `!enter`'s (`entered` events, batched acknowledgements). The outcome resolves
 * once every grant is synced (a failed journal write is logged; the grant stays in memory, as a
 * `!enter` does). A stopping engine answers `stopped` and decides nothing.
 */
import { channelIdentity, type FlowContext } from './context.js';
import {
  grantFor,
  refusalOf,
  roleRulesOf,
  ticketEligibility,
  ticketRules,
  type Refusal,
  type TicketOutcome,
  type TicketRequest,
} from './tickets.js';

export async function enterByTickets(
  c: FlowContext,
  req: TicketRequest,
  onEntered: () => void,
): Promise<TicketOutcome> {
  if (c.work.isStopped()) return { result: 'stopped' };
  const applied = [...c.draws.activeSessions(), ...c.draws.recentSessions()]
    .filter((s) => s.tickets.has(req.ref))
    .map((s) => s.id);
  if (applied.length) return { result: 'already', draws: applied };
  const open = c.draws.activeSessions().filter((s) => s.phase === 'open');
  if (!open.length) return { result: 'refused', reason: 'no-draw-open' };
  const hours = c.settings.eligibility.winnerCooldownHours;
  const recent = hours > 0 ? await c.repo.recentWinnerIds(c.clock.now() - hours * 3_600_000) : new Set<string>();
  if (c.work.isStopped()) return { result: 'stopped' };
  // From here on, one synchronous step: the draws as they are now.
  const again = [...c.draws.activeSessions(), ...c.draws.recentSessions()]
    .filter((s) => s.tickets.has(req.ref))
    .map((s) => s.id);
  if (again.length) return { result: 'already', draws: again };
  const why = ticketEligibility(c.settings, channelIdentity(c.chat), recent);
  const rules = ticketRules(c.settings);
  const ruleSet = roleRulesOf(c.settings.eligibility);
  const refusals: Refusal[] = [];
  const draws: string[] = [];
  const tickets: number[] = [];
  const writes: Promise<void>[] = [];
  for (const s of c.draws.activeSessions()) {
    if (s.phase !== 'open') continue;
    const grant = grantFor(req, s, rules, why, ruleSet);
    if ('reason' in grant) {
      refusals.push(grant);
      continue;
    }
    const entered = s.applyGrant(grant);
    if (entered) c.events.emit('entered', s.id, grant.userId, s.entrants.size);
    writes.push(
      c.repo.appendTicketGrant(s.id, grant).catch((err: unknown) => {
        c.logger.error(
          { drawId: s.id, userId: grant.userId, ref: grant.ref, err },
          'could not journal a ticket grant (kept in memory)',
        );
      }),
    );
    if (grant.tickets > 0) {
      draws.push(s.id);
      tickets.push(grant.tickets);
      if (entered) onEntered();
    } else refusals.push({ reason: 'no-ticket-yet' });
  }
  await Promise.all(writes);
  if (draws.length) return { result: 'entered', draws, tickets };
  return { result: 'refused', ...refusalOf(refusals) };
}
