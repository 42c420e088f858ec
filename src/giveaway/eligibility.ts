/**
 * Who may win and with how many tickets.
 *
 * Contract: `ticketWeight` turns chat roles into a positive integer weight from the luck settings;
 * `applyEligibility` splits entrants into eligible and excluded (with the reason per exclusion)
 * and returns the rules in force, ready to be stored in `DrawRecord.rules`. The broadcaster and
 * the bot are always excluded. Does not: look anything up (the caller passes the recent winners
 * for the cooldown), pick winners, or talk to chat.
 */
import type { ChatRoles } from '../shared/chat.js';
import type { Entrant } from './model.js';
import type { GiveawaySettings } from './settings.js';

/** Identity of the channel and the bot, for the always-on exclusions. */
export interface ChannelIdentity {
  channelLogin: string;
  channelId?: string;
  botLogin: string;
}

export type ExclusionReason =
  | 'broadcaster'
  | 'bot'
  | 'moderator'
  | 'not-subscriber'
  | 'sub-months'
  | 'excluded-login'
  | 'winner-cooldown'
  | 'first-time-chatter'
  /** Account rules checked with Twitch at close (account-rules.ts). */
  | 'not-follower'
  | 'follow-age'
  | 'account-age'
  | 'unchecked';

/** Ticket weight for an entrant with these roles (1 when no luck applies). */
export function ticketWeight(roles: ChatRoles, luck: GiveawaySettings['luck']): number {
  if (!roles.subscriber) return 1;
  let weight = Math.max(1, Math.floor(luck.subscriberMultiplier));
  let best = -1;
  for (const tier of luck.tiers ?? []) {
    if (roles.subMonths >= tier.minMonths && tier.minMonths > best) {
      best = tier.minMonths;
      weight = Math.max(1, Math.floor(tier.weight));
    }
  }
  return weight;
}

/** `id` with its logins lower-cased, for `channelOrBot` (built once, used for many entrants). */
export function loweredIdentity(id: ChannelIdentity): ChannelIdentity {
  return { ...id, channelLogin: id.channelLogin.toLowerCase(), botLogin: id.botLogin.toLowerCase() };
}

/**
 * 'broadcaster' or 'bot' for the broadcaster's or the bot's own account, else undefined. `login`
 * is lower-cased by the caller, and `id` is a `loweredIdentity`.
 */
export function channelOrBot(
  login: string,
  userId: string,
  broadcaster: boolean,
  id: ChannelIdentity,
): ExclusionReason | undefined {
  if (broadcaster || login === id.channelLogin) return 'broadcaster';
  if (id.channelId !== undefined && userId === id.channelId) return 'broadcaster';
  if (login === id.botLogin) return 'bot';
  return undefined;
}

/** Why `e` may not win, or undefined when eligible. */
export function exclusionOf(
  e: Entrant,
  rules: GiveawaySettings['eligibility'],
  id: ChannelIdentity,
  recentWinners: ReadonlySet<string>,
): ExclusionReason | undefined {
  return excluder(rules, id, recentWinners)(e);
}

/** Who is looked at: an entrant, or one row of an entrant table. */
export type Candidate = Pick<Entrant, 'userId' | 'login' | 'roles'>;

/**
 * `exclusionOf` with the rules prepared once (the excluded logins as a set), for checking many
 * entrants in a row.
 */
export function excluder(
  rules: GiveawaySettings['eligibility'],
  id: ChannelIdentity,
  recentWinners: ReadonlySet<string>,
): (e: Candidate) => ExclusionReason | undefined {
  const excludedLogins = new Set(rules.excludeLogins.map((l) => l.toLowerCase().replace(/^@/, '')));
  const lowered = loweredIdentity(id);
  return (e) => {
    const login = e.login.toLowerCase();
    const own = channelOrBot(login, e.userId, e.roles.broadcaster, lowered);
    if (own) return own;
    if (rules.excludeModerators && e.roles.moderator) return 'moderator';
    if (rules.subscribersOnly && !e.roles.subscriber) return 'not-subscriber';
    if (rules.minSubMonths > 0 && (!e.roles.subscriber || e.roles.subMonths < rules.minSubMonths)) return 'sub-months';
    if (excludedLogins.size > 0 && excludedLogins.has(login)) return 'excluded-login';
    if (recentWinners.has(e.userId)) return 'winner-cooldown';
    if (rules.excludeFirstTimeChatters && e.roles.firstMessage) return 'first-time-chatter';
    return undefined;
  };
}

export interface EligibilityResult {
  eligible: Entrant[];
  excluded: Partial<Record<ExclusionReason, number>>;
  /** The rules in force and the exclusion counts, for `DrawRecord.rules`. */
  rules: Record<string, unknown>;
}

/** Applies the always-on exclusions and the configured rules to `entrants` (order kept). */
export function applyEligibility(
  entrants: readonly Entrant[],
  settings: Pick<GiveawaySettings, 'eligibility' | 'luck'>,
  id: ChannelIdentity,
  recentWinners: ReadonlySet<string>,
): EligibilityResult {
  const eligible: Entrant[] = [];
  const excluded: Partial<Record<ExclusionReason, number>> = {};
  const why = excluder(settings.eligibility, id, recentWinners);
  for (const e of entrants) {
    const reason = why(e);
    if (reason) excluded[reason] = (excluded[reason] ?? 0) + 1;
    else eligible.push(e);
  }
  return { eligible, excluded, rules: rulesInForce(settings, excluded) };
}

/** The rules in force and the exclusion counts, as stored in `DrawRecord.rules`. */
export function rulesInForce(
  settings: Pick<GiveawaySettings, 'eligibility' | 'luck'> & Partial<Pick<GiveawaySettings, 'tickets'>>,
  excluded: Partial<Record<ExclusionReason, number>>,
): Record<string, unknown> {
  const el = settings.eligibility;
  const t = settings.tickets;
  return {
    excludeBroadcaster: true,
    excludeBot: true,
    excludeModerators: el.excludeModerators,
    subscribersOnly: el.subscribersOnly,
    minSubMonths: el.minSubMonths,
    excludeLogins: [...el.excludeLogins],
    winnerCooldownHours: el.winnerCooldownHours,
    excludeFirstTimeChatters: el.excludeFirstTimeChatters,
    luck: {
      subscriberMultiplier: settings.luck.subscriberMultiplier,
      ...(settings.luck.tiers ? { tiers: settings.luck.tiers.map((t) => ({ ...t })) } : {}),
    },
    // Tickets beyond chat (giveaway/tickets.ts), recorded when on: the weights in the frozen list include them.
    ...(t?.channelPoints || t?.bits
      ? {
          tickets: {
            ...(t.channelPoints ? { channelPoints: { ...t.channelPoints } } : {}),
            ...(t.bits ? { bits: { ...t.bits } } : {}),
          },
        }
      : {}),
    excluded,
  };
}
