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
import type { Entrant } from './ports.js';
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

/** True for the broadcaster's or the bot's own account. */
export function isChannelOrBot(
  who: { userId: string; login: string; roles: ChatRoles },
  id: ChannelIdentity,
): ExclusionReason | undefined {
  const login = who.login.toLowerCase();
  if (who.roles.broadcaster || login === id.channelLogin.toLowerCase()) return 'broadcaster';
  if (id.channelId !== undefined && who.userId === id.channelId) return 'broadcaster';
  if (login === id.botLogin.toLowerCase()) return 'bot';
  return undefined;
}

/** Why `e` may not win, or undefined when eligible. */
export function exclusionOf(
  e: Entrant,
  rules: GiveawaySettings['eligibility'],
  id: ChannelIdentity,
  recentWinners: ReadonlySet<string>,
): ExclusionReason | undefined {
  const always = isChannelOrBot(e, id);
  if (always) return always;
  if (rules.excludeModerators && e.roles.moderator) return 'moderator';
  if (rules.subscribersOnly && !e.roles.subscriber) return 'not-subscriber';
  if (rules.minSubMonths > 0 && (!e.roles.subscriber || e.roles.subMonths < rules.minSubMonths)) return 'sub-months';
  if (rules.excludeLogins.some((l) => l.toLowerCase().replace(/^@/, '') === e.login.toLowerCase())) {
    return 'excluded-login';
  }
  if (recentWinners.has(e.userId)) return 'winner-cooldown';
  if (rules.excludeFirstTimeChatters && e.roles.firstMessage) return 'first-time-chatter';
  return undefined;
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
  for (const e of entrants) {
    const why = exclusionOf(e, settings.eligibility, id, recentWinners);
    if (why) excluded[why] = (excluded[why] ?? 0) + 1;
    else eligible.push(e);
  }
  const el = settings.eligibility;
  return {
    eligible,
    excluded,
    rules: {
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
      excluded,
    },
  };
}
