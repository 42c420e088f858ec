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
 * - the viewer must pass the chat eligibility rules (eligibility.ts `excluder`: excluded logins,
 *   the winner cooldown, the role rules), refused now when the draw would exclude them at close,
 *   so a redemption's points can be refunded. The roles: a viewer the draw knows from chat (their
 *   `!enter`) has the roles their chat line showed; one it does not know has what the adapter
 *   learnt from Twitch's API (`req.roles`: subscriber, moderator) and no other role. A role rule in
 *   force whose role is not known that way (`subscribersOnly` or `excludeModerators` with the role
 *   not looked up, `minSubMonths`: months are shown only in chat) refuses the request with
 *   `roles-unknown` and the rule, never letting in a viewer the rule might exclude; the roles a
 *   grant was decided on are kept with it (the entrant row, the journal), so the close sees them;
 *   a redemption is not a chat message, so `excludeFirstTimeChatters` does not apply to it;
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
import { excluder, type ChannelIdentity, type ExclusionReason } from './eligibility.js';
import type { Candidate } from './eligibility.js';
import type { TicketGrant } from './model.js';
import type { GiveawaySettings } from './settings.js';

type TicketSource = TicketGrant['source'];

/** What the adapter learnt of a viewer's roles outside chat (Twitch's API): true or false when known, absent when not. */
export interface KnownRoles {
  subscriber?: boolean;
  moderator?: boolean;
}

/** The eligibility rules that depend on a viewer's roles in the channel. */
export type RoleRule = 'subscribersOnly' | 'minSubMonths' | 'excludeModerators';

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
  /** The viewer's roles as Twitch's API told them (only for the role rules in force; see the module header). */
  roles?: KnownRoles;
}

type TicketRefusal = 'no-draw-open' | 'not-eligible' | 'roles-unknown' | 'cap-reached' | 'no-ticket-yet';

/** Why a request earns nothing in one draw: the refusal, with the rule (roles-unknown) or the exclusion (not-eligible). */
export interface Refusal {
  reason: TicketRefusal;
  rule?: RoleRule;
  exclusion?: ExclusionReason;
}

export type TicketOutcome =
  /** Entered or tickets added in these draws (`tickets` per draw, in order). */
  | { result: 'entered'; draws: string[]; tickets: number[] }
  /** This ref was applied before (to these draws): nothing changed. */
  | { result: 'already'; draws: string[] }
  | { result: 'refused'; reason: TicketRefusal; rule?: RoleRule; exclusion?: ExclusionReason }
  /** The engine is stopping: nothing was decided (the adapter leaves the redemption pending). */
  | { result: 'stopped' };

const NO_ROLES = {
  broadcaster: false,
  moderator: false,
  vip: false,
  subscriber: false,
  subMonths: 0,
  firstMessage: false,
};

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
export function ticketRules(
  settings: Pick<GiveawaySettings, 'tickets'>,
): Required<NonNullable<GiveawaySettings['tickets']>> {
  return {
    channelPoints: settings.tickets?.channelPoints ?? { ticketsPerRedemption: 1, maxPerViewer: 1 },
    bits: settings.tickets?.bits ?? { bitsPerTicket: 100, maxTickets: 10 },
  };
}

/** The role rules in force, in the order they are checked. */
export function roleRulesOf(
  eligibility: Pick<GiveawaySettings['eligibility'], 'subscribersOnly' | 'minSubMonths' | 'excludeModerators'>,
): RoleRule[] {
  return [
    ...(eligibility.subscribersOnly ? (['subscribersOnly'] as const) : []),
    ...(eligibility.minSubMonths > 0 ? (['minSubMonths'] as const) : []),
    ...(eligibility.excludeModerators ? (['excludeModerators'] as const) : []),
  ];
}

/** The first role rule in force that `known` cannot decide for a viewer the draw does not know from chat. */
function undecided(ruleSet: readonly RoleRule[], known: KnownRoles | undefined): RoleRule | undefined {
  for (const rule of ruleSet) {
    if (rule === 'subscribersOnly' && known?.subscriber === undefined) return rule;
    // Months subscribed are only in chat (badge-info): a known non-subscriber fails the rule anyway.
    if (rule === 'minSubMonths' && known?.subscriber !== false) return rule;
    if (rule === 'excludeModerators' && known?.moderator === undefined) return rule;
  }
  return undefined;
}

/**
 * The grant `req` earns in `draw`, or why it earns none. Pure: the caller applies and journals it.
 * `why` is the eligibility check prepared for this request (excluder); `ruleSet` the role rules in
 * force (roleRulesOf).
 */
export function grantFor(
  req: TicketRequest,
  draw: TicketDraw,
  rules: ReturnType<typeof ticketRules>,
  why: (c: Candidate) => ExclusionReason | undefined,
  ruleSet: readonly RoleRule[] = [],
): TicketGrant | Refusal {
  const inDraw = draw.candidate(req.userId);
  let learnt: TicketGrant['roles'];
  if (!inDraw) {
    const rule = undecided(ruleSet, req.roles);
    if (rule) return { reason: 'roles-unknown', rule };
    if (req.roles) learnt = { subscriber: req.roles.subscriber === true, moderator: req.roles.moderator === true };
  }
  const candidate = inDraw ?? {
    userId: req.userId,
    login: req.login,
    roles: learnt ? { ...NO_ROLES, ...learnt } : NO_ROLES,
  };
  const exclusion = why(candidate);
  if (exclusion) return { reason: 'not-eligible', exclusion };
  const base = {
    userId: req.userId,
    login: req.login,
    displayName: req.displayName || req.login,
    source: req.source,
    ref: req.ref,
    at: req.at,
    ...(learnt ? { roles: learnt } : {}),
  };
  if (req.source === 'points') {
    const r = rules.channelPoints;
    if (draw.tickets.redemptions(req.userId) >= r.maxPerViewer) return { reason: 'cap-reached' };
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
): (c: Candidate) => ExclusionReason | undefined {
  return excluder(settings.eligibility, id, recentWinners);
}

const EXCLUSION_WORDS: Partial<Record<ExclusionReason, string>> = {
  broadcaster: 'the broadcaster does not enter',
  bot: 'the bot does not enter',
  moderator: 'moderators do not enter (excludeModerators)',
  'not-subscriber': 'subscribers only',
  'sub-months': 'subscribers of enough months only',
  'excluded-login': 'an excluded login',
  'winner-cooldown': 'won recently (the winner cooldown)',
};

const UNKNOWN_ROLE_WORDS: Record<RoleRule, string> = {
  subscribersOnly:
    "subscribers only, and the bot could not check this viewer's subscription (a !enter in chat shows it)",
  minSubMonths:
    'subscribers of enough months only, and Twitch shows the months only in chat (a !enter in chat shows them)',
  excludeModerators:
    'moderators do not enter, and the bot could not check whether this viewer is one (a !enter in chat shows it)',
};

/** A refusal in plain words, for the log and the dashboard: "subscribers only". */
export function refusalWords(r: Refusal): string {
  switch (r.reason) {
    case 'no-draw-open':
      return 'no draw is open';
    case 'cap-reached':
      return 'the limit of redemptions per viewer in this draw';
    case 'no-ticket-yet':
      return 'not enough bits for a ticket yet';
    case 'roles-unknown':
      return r.rule ? UNKNOWN_ROLE_WORDS[r.rule] : 'a role the bot could not check';
    case 'not-eligible':
      return (r.exclusion && EXCLUSION_WORDS[r.exclusion]) ?? 'not eligible';
  }
}

/** A refusal as a short code for counts (/healthz): "not-eligible:not-subscriber", "roles-unknown:subscribersOnly". */
export function refusalCode(r: Refusal): string {
  const detail = r.rule ?? r.exclusion;
  return detail ? `${r.reason}:${detail}` : r.reason;
}

/** The refusal to report when no draw took the request: the most telling one seen. */
export function refusalOf(seen: readonly Refusal[]): Refusal {
  for (const r of ['roles-unknown', 'not-eligible', 'cap-reached', 'no-ticket-yet'] as const) {
    const found = seen.find((s) => s.reason === r);
    if (found) return found;
  }
  return { reason: 'no-draw-open' };
}
