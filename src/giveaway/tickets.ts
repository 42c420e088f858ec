/**
 * Entries and tickets from Twitch beyond chat: channel-point redemptions and bits used during an
 * open draw. The adapters (src/twitch/channel-points/) hand over a `TicketRequest`; this decides,
 * per open draw, whether it enters and with how many tickets, keeps each draw's `TicketLedger`
 * and journals every grant.
 *
 * Rules (the settings' `tickets` section, recorded in the draw's rules):
 * - a redemption (`points`) gives `ticketsPerRedemption` tickets in every draw open now, at most
 *   `maxPerViewer` redemptions per viewer per draw; a viewer not in a draw enters it with those
 *   tickets, a viewer already in (by `!enter`, or an earlier grant) gets them added;
 * - bits (`bits`) used during an open draw count toward `floor(bits / bitsPerTicket)` tickets,
 *   at most `maxTickets` per viewer per draw; the same entry-or-add rule; bits below a ticket
 *   are kept toward the next one;
 * - the viewer must pass the chat eligibility rules as this draw knows them (eligibility.ts
 *   `excluder`: the role rules with the roles their `!enter` showed, none when they never typed;
 *   excluded logins; the winner cooldown): a redemption by someone the draw would exclude at
 *   close is refused now, so its points can be refunded;
 * - each request has a `ref` (the redemption id, the bits event's message id): a ref already
 *   applied to any draw in memory is `already` (Twitch's at-least-once delivery, the catch-up
 *   after a restart), never applied twice;
 * - the viewer is always this channel's (the channel-point and bits topics are conditioned on
 *   this broadcaster), so the Shared Chat rule (partner channels' viewers) has nothing to decide.
 * A grant is journaled before `enterByTickets` resolves (repo.appendTicketGrant syncs it): the
 * adapter marks a redemption fulfilled only after that. The tickets go into the entrant table's
 * ticket column (entrants/), so the frozen list, its digest, the picks, `npm run verify` and the
 * verify page all carry them like subscriber luck. Does not: talk to Twitch or refund anything.
 */
import { excluder, type ChannelIdentity } from './eligibility.js';
import type { Candidate } from './eligibility.js';
import type { TicketGrant } from './model.js';
import type { GiveawaySettings } from './settings.js';

type TicketSource = TicketGrant['source'];

export interface TicketRequest {
  source: TicketSource;
  /** The redemption id, or the bits event's message id. */
  ref: string;
  userId: string;
  login: string;
  displayName: string;
  /** Bits used (`bits`). */
  bits?: number;
  /** When it happened (ms since the epoch): the entry time of a new entrant. */
  at: number;
}

export type TicketRefusal = 'no-draw-open' | 'not-eligible' | 'cap-reached' | 'no-ticket-yet';

export type TicketOutcome =
  /** Entered or tickets added in these draws (`tickets` per draw, in order). */
  | { result: 'entered'; draws: string[]; tickets: number[] }
  /** This ref was applied before (to these draws): nothing changed. */
  | { result: 'already'; draws: string[] }
  | { result: 'refused'; reason: TicketRefusal }
  /** The engine is stopping: nothing was decided (the adapter leaves the redemption pending). */
  | { result: 'stopped' };

const NO_ROLES = { broadcaster: false, moderator: false, vip: false, subscriber: false, subMonths: 0, firstMessage: false };

/** One draw's grants: the refs applied, and per viewer the redemptions and bits counted. */
export class TicketLedger {
  private readonly refs = new Set<string>();
  private readonly viewers = new Map<string, { redemptions: number; bits: number }>();
  /** Tickets granted by source (for the record's summary). */
  readonly granted = { points: 0, bits: 0 };

  has(ref: string): boolean {
    return this.refs.has(ref);
  }

  redemptions(userId: string): number {
    return this.viewers.get(userId)?.redemptions ?? 0;
  }

  bits(userId: string): number {
    return this.viewers.get(userId)?.bits ?? 0;
  }

  get size(): number {
    return this.refs.size;
  }

  apply(g: TicketGrant): void {
    this.refs.add(g.ref);
    const v = this.viewers.get(g.userId) ?? { redemptions: 0, bits: 0 };
    if (g.source === 'points') v.redemptions += 1;
    else v.bits += g.bits ?? 0;
    this.viewers.set(g.userId, v);
    this.granted[g.source] += g.tickets;
  }
}

/** What a draw needs to be asked about a request (DrawSession gives it). */
export interface TicketDraw {
  readonly id: string;
  readonly tickets: TicketLedger;
  /** The viewer as the draw knows them (their roles from `!enter`), when they are in. */
  candidate(userId: string): Candidate | undefined;
}

/** The tickets rules of the settings, with defaults for a source that is off but asked anyway. */
export function ticketRules(settings: Pick<GiveawaySettings, 'tickets'>): Required<NonNullable<GiveawaySettings['tickets']>> {
  return {
    channelPoints: settings.tickets?.channelPoints ?? { ticketsPerRedemption: 1, maxPerViewer: 1 },
    bits: settings.tickets?.bits ?? { bitsPerTicket: 100, maxTickets: 10 },
  };
}

/**
 * The grant `req` earns in `draw`, or why it earns none. Pure: the caller applies and journals it.
 * `why` is the eligibility check prepared for this request (excluder).
 */
export function grantFor(
  req: TicketRequest,
  draw: TicketDraw,
  rules: ReturnType<typeof ticketRules>,
  why: (c: Candidate) => string | undefined,
): TicketGrant | TicketRefusal {
  const candidate = draw.candidate(req.userId) ?? { userId: req.userId, login: req.login, roles: NO_ROLES };
  if (why(candidate)) return 'not-eligible';
  const base = { userId: req.userId, login: req.login, displayName: req.displayName || req.login, source: req.source, ref: req.ref, at: req.at };
  if (req.source === 'points') {
    const r = rules.channelPoints;
    if (draw.tickets.redemptions(req.userId) >= r.maxPerViewer) return 'cap-reached';
    return { ...base, tickets: r.ticketsPerRedemption };
  }
  const r = rules.bits;
  const bits = Math.max(0, Math.floor(req.bits ?? 0));
  const before = draw.tickets.bits(req.userId);
  const earned = (total: number) => Math.min(r.maxTickets, Math.floor(total / r.bitsPerTicket));
  return { ...base, bits, tickets: earned(before + bits) - earned(before) };
}

/** The eligibility check for ticket requests (the chat rules: eligibility.ts). */
export function ticketEligibility(
  settings: Pick<GiveawaySettings, 'eligibility'>,
  id: ChannelIdentity,
  recentWinners: ReadonlySet<string>,
): (c: Candidate) => string | undefined {
  return excluder(settings.eligibility, id, recentWinners);
}

/** The refusal to report when no draw took the request: the most telling one seen. */
export function refusalOf(seen: ReadonlySet<TicketRefusal>): TicketRefusal {
  for (const r of ['not-eligible', 'cap-reached', 'no-ticket-yet'] as const) if (seen.has(r)) return r;
  return 'no-draw-open';
}
