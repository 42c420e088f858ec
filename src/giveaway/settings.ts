/**
 * The giveaway engine's settings: flows, windows, link giveaways, claim windows, eligibility,
 * luck and chat message templates, with defaults a streamer can run with.
 *
 * Contract: `defaultGiveawaySettings` is a complete, valid settings object; `mergeGiveawaySettings`
 * overlays a partial object on the defaults and `checkGiveawaySettings` names every out-of-range
 * field. Does not read files or the environment (config/ maps the JSON config onto this).
 */
import { GiftdropError } from '../shared/errors.js';
import type { SharedChatSettings } from './shared-chat.js';

/** Chat line templates. Placeholders are `{name}`; unknown placeholders are left as written. */
interface MessageTemplates {
  /**
   * A gift draw opened. `{gifter} {count} {product} {enter} {seconds} {code} {commitment} {id}`;
   * `{code}` is the draw code, the first 16 hex digits of the fairness commitment (fairCode),
   * `{commitment}` the whole 64.
   */
  drawOpened: string;
  /** A gift purchase entry window opened (purchase flow). Same placeholders as drawOpened. */
  purchaseOpened: string;
  /** A link giveaway opened. `{count} {product} {enter} {seconds} {code} {commitment} {id} {by}` */
  linkOpened: string;
  /** Reminder while a draw is open. `{product} {seconds} {entrants} {enter}` */
  reminder: string;
  /** Batched acknowledgement of new entrants. `{product} {new} {entrants}` */
  entered: string;
  /** Nobody (eligible) entered a link giveaway or a purchase's window. `{product} {gifter} {entrants}` */
  noEntrants: string;
  /**
   * A gift draw with fewer eligible entrants than gifts (none included): Fourthwall takes exactly
   * one winner per gift, so the draw is handed back and reopened for all gifts (the redraw is
   * announced when it opens, `redrawOpened`). The round's one line (an account-rules entry check
   * of a round handed back is not said apart).
   * `{product} {gifter} {entrants} {eligible} {count} {gifts} {seconds} {enter}` (`{gifts}`: "1 gift", "3 gifts"); `{eligible}` reads
   * "no eligible entrant", "only 1 eligible entrant", "only 2 eligible entrants"; `{seconds}`:
   * until the shop redraws.
   */
  tooFewEntrants: string;
  /** Fourthwall's redraw (a `REDO` draw) of gifts nobody won, said once. Same placeholders as drawOpened. */
  redrawOpened: string;
  /**
   * Said once when a redraw is handed back too: the shop keeps redrawing (about every `{cycle}`
   * seconds, the entry window + Fourthwall's 60 s) until enough viewers enter; the rounds after it
   * open, remind and end without a line (giveaway/redraws.ts). `{product} {gifter} {count} {gifts} {cycle} {enter}`
   */
  redrawsContinue: string;
  /**
   * Entries closed and the beacon round the winners wait for (only with a beacon, fairness.beacon).
   * `{product} {entrants} {beacon} {round} {seconds} {listCode} {digest} {id}`; `{listCode}` is the
   * first 16 hex digits of the frozen entrant list's digest, `{digest}` the whole 64.
   */
  entriesClosed: string;
  /** Winners announced. `{product} {gifter} {winners} {delivery}` */
  winners: string;
  /** `{delivery}` when links stay private. */
  deliveryPrivate: string;
  /** `{delivery}` when links stay private and the claim page is on (no whispers). `{claimUrl}` */
  deliveryClaim: string;
  /** `{delivery}` when the winners were whispered (src/delivery). `{claimUrl}` */
  deliveryWhispered: string;
  /** Reminder in chat to winners whose prize waits (src/delivery). `{winners} {product} {claimUrl}` */
  deliveryReminder: string;
  /** `{delivery}` when links are public. `{links}` is "@login: url, ..." */
  deliveryPublic: string;
  /**
   * The draw's one fairness line, after the winners: where anyone checks it. `{id} {check}
   * {product} {seed} {commitment} {code}` (`{check}`: the verify page's address, or how to get it).
   */
  revealed: string;
  /** Winners asked to claim. `{winners} {claim} {seconds} {product}` */
  claimPrompt: string;
  /** A winner claimed. `{winner} {product}` */
  claimed: string;
  /** A winner replaced. `{old} {winner} {product} {reason}` */
  rerolled: string;
  /** A winner could not be replaced (nobody left). `{old} {product}` */
  rerollExhausted: string;
  /** A draw failed for good. `{product} {reason}` */
  failed: string;
  /** A link giveaway was cancelled. `{product}` */
  cancelled: string;
  /** `!giveaway` line for one open draw. `{product} {count} {seconds} {entrants} {enter}` */
  statusOpen: string;
  /** `!giveaway` line for a draw waiting on claims. `{product} {winners} {claim} {seconds}` */
  statusClaim: string;
  /** `!giveaway` when nothing is open. */
  statusNone: string;
  /** `!giveaway` between a gift draw handed back and the shop's redraw. `{product} {seconds} {enter}` */
  statusRedraw: string;
}

interface LuckTier {
  /** Subscribed months from which this tier applies. */
  minMonths: number;
  /** Integer ticket weight (>= 1). */
  weight: number;
}

/** Everything the engine can be told. */
export interface GiveawaySettings {
  /** Which Fourthwall gifting flow the bot runs: GIFT_DRAW_* events or GIFT_PURCHASE events. */
  giftFlow: 'draw' | 'purchase';
  /** Entry window of the purchase flow when the shop does not say (20-180). */
  purchaseEntrySeconds: number;
  /** How the commands are typed in chat, for messages (`{enter}`, `{claim}`). */
  commands: { enter: string; claim: string };
  links: {
    defaultWinners: number;
    defaultSeconds: number;
    maxWinners: number;
    maxSeconds: number;
    /** Post giveaway/gift links in chat (they are bearer secrets: off by default). */
    publicInChat: boolean;
    /** How long link creation is retried before the giveaway is reported as failed. */
    createDeadlineSeconds: number;
  };
  claim: {
    /** Winners must type the claim command within this many seconds; 0 = no claim window. */
    seconds: number;
    /** Replacements of unclaimed winners per draw. */
    maxRerolls: number;
  };
  eligibility: {
    excludeModerators: boolean;
    subscribersOnly: boolean;
    /** Minimum subscribed months (0 = any). */
    minSubMonths: number;
    /** Logins never eligible (case-insensitive). */
    excludeLogins: string[];
    /** Winners of a finished draw cannot win again for this many hours (0 = off). */
    winnerCooldownHours: number;
    /** Exclude entrants whose `!enter` was their first message in the channel. */
    excludeFirstTimeChatters: boolean;
  };
  luck: {
    /** Integer ticket weight of subscribers (1 = no luck). */
    subscriberMultiplier: number;
    /** Tiers by subscribed months; the highest matching tier wins over subscriberMultiplier. */
    tiers?: LuckTier[];
  };
  /**
   * Tickets from Twitch beyond chat (giveaway/tickets.ts), each source present only when it is on:
   * channel-point redemptions and bits used during an open draw.
   */
  tickets?: {
    channelPoints?: { ticketsPerRedemption: number; maxPerViewer: number };
    bits?: { bitsPerTicket: number; maxTickets: number };
  };
  reminders: {
    halfTime: boolean;
    /** Reminder this many seconds before the end (0 = off). */
    nearEndSeconds: number;
    /** At most one batched "N joined" line per this many seconds (0 = off). */
    ackEverySeconds: number;
  };
  /** Twitch Shared Chat: whether partner channels' viewers may enter (shared-chat.ts). */
  sharedChat: SharedChatSettings;
  messages: MessageTemplates;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** Ships as the engine's defaults (deeply frozen; overlay with mergeGiveawaySettings). */
export const defaultGiveawaySettings: GiveawaySettings = deepFreeze({
  giftFlow: 'draw',
  purchaseEntrySeconds: 60,
  commands: { enter: '!enter', claim: '!claim' },
  links: {
    defaultWinners: 1,
    defaultSeconds: 60,
    maxWinners: 20,
    maxSeconds: 600,
    publicInChat: false,
    createDeadlineSeconds: 60,
  },
  claim: { seconds: 0, maxRerolls: 3 },
  eligibility: {
    excludeModerators: false,
    subscribersOnly: false,
    minSubMonths: 0,
    excludeLogins: [],
    winnerCooldownHours: 0,
    excludeFirstTimeChatters: false,
  },
  luck: { subscriberMultiplier: 1 },
  reminders: { halfTime: true, nearEndSeconds: 10, ackEverySeconds: 15 },
  sharedChat: { partnerEntries: false },
  messages: {
    drawOpened:
      '🎁 {gifter} gifted {count}x {product}! Type {enter} in the next {seconds}s for a chance to win. (draw code {code})',
    purchaseOpened:
      '🎁 {gifter} gifted {count}x {product}! Type {enter} in the next {seconds}s for a chance to win. (draw code {code})',
    linkOpened: '🎉 Giveaway: {count}x {product}! Type {enter} in the next {seconds}s to enter. (draw code {code})',
    reminder: '⏳ {product}: {seconds}s left, {entrants} entered so far. Type {enter} to join!',
    entered: '{new} more joined the {product} giveaway ({entrants} entered).',
    noEntrants: 'Nobody entered the {product} giveaway, so there is no winner this time.',
    tooFewEntrants:
      '{product}: {eligible} for {gifts}, and Fourthwall needs one winner per gift, so nobody wins this round.',
    redrawOpened:
      "🔁 {gifter}'s {count}x {product} is drawn again! Type {enter} in the next {seconds}s for a chance to win. (draw code {code})",
    redrawsContinue:
      '🔁 {product}: nobody won again. The shop keeps redrawing it about every {cycle}s until enough viewers enter for {gifts} (one winner per gift). Type {enter} while a redraw is open; !giveaway says when.',
    entriesClosed:
      '🔒 Entries closed for {product}: {entrants}. Drawing with {beacon} round {round} in ~{seconds}s (list code {listCode}).',
    winners: '🏆 {product}: congratulations {winners}! {delivery}',
    deliveryPrivate: 'The streamer will send you your redeem link.',
    deliveryClaim: 'Get your prize at {claimUrl} (log in with Twitch).',
    deliveryWhispered: 'I whispered each winner how to get their prize.',
    deliveryReminder: '{winners}: your {product} is still waiting! Get it at {claimUrl} (log in with Twitch).',
    deliveryPublic: 'Redeem here: {links}',
    revealed: '🔎 Anyone can check draw {id}: {check}',
    claimPrompt: '{winners}: you won {product}! Type {claim} within {seconds}s to claim it.',
    claimed: '✅ {winner} claimed {product}.',
    rerolled: '🔁 {product}: {old} is replaced by {winner} ({reason}).',
    rerollExhausted: '{product}: nobody is left to replace {old}.',
    failed: '⚠️ The {product} giveaway ran into a problem: {reason}. The streamer has been told.',
    cancelled: 'The {product} giveaway was cancelled.',
    statusOpen: '{product} ({count}x): {seconds}s left, {entrants} entered. Type {enter} to join!',
    statusClaim: '{product}: waiting for {winners} to type {claim} ({seconds}s left).',
    statusNone: 'No giveaway is open right now.',
    statusRedraw:
      '{product}: nobody won the last round; the shop draws it again in about {seconds}s. Type {enter} then!',
  },
} satisfies GiveawaySettings);

/** A partial settings object (every level optional) for overlays. */
export type GiveawaySettingsInput = {
  [K in keyof GiveawaySettings]?: GiveawaySettings[K] extends unknown[]
    ? GiveawaySettings[K]
    : GiveawaySettings[K] extends object
      ? Partial<GiveawaySettings[K]>
      : GiveawaySettings[K];
};

/** Raised for settings out of range; `problems` names every bad field. */
export class GiveawaySettingsError extends GiftdropError {
  readonly problems: string[];
  constructor(problems: string[]) {
    super('GIVEAWAY_SETTINGS_INVALID', `invalid giveaway settings: ${problems.join('; ')}`);
    this.problems = problems;
  }
}

/** Overlays `input` on the defaults (one level deep per section) and validates the result. */
export function mergeGiveawaySettings(input: GiveawaySettingsInput = {}): GiveawaySettings {
  const d = defaultGiveawaySettings;
  const merged: GiveawaySettings = {
    giftFlow: input.giftFlow ?? d.giftFlow,
    purchaseEntrySeconds: input.purchaseEntrySeconds ?? d.purchaseEntrySeconds,
    commands: { ...d.commands, ...input.commands },
    links: { ...d.links, ...input.links },
    claim: { ...d.claim, ...input.claim },
    eligibility: {
      ...d.eligibility,
      ...input.eligibility,
      excludeLogins: [...(input.eligibility?.excludeLogins ?? d.eligibility.excludeLogins)],
    },
    luck: { ...d.luck, ...input.luck },
    reminders: { ...d.reminders, ...input.reminders },
    sharedChat: { ...d.sharedChat, ...input.sharedChat },
    messages: { ...d.messages, ...input.messages },
    ...(input.tickets ? { tickets: { ...input.tickets } } : {}),
  };
  const problems = checkGiveawaySettings(merged);
  if (problems.length) throw new GiveawaySettingsError(problems);
  return merged;
}

function isInt(n: unknown, min: number, max = Number.MAX_SAFE_INTEGER): boolean {
  return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max;
}

/** Every out-of-range field of `s`, by path; empty when valid. */
function checkGiveawaySettings(s: GiveawaySettings): string[] {
  const p: string[] = [];
  if (s.giftFlow !== 'draw' && s.giftFlow !== 'purchase') p.push('giftFlow must be "draw" or "purchase"');
  if (!isInt(s.purchaseEntrySeconds, 20, 180)) p.push('purchaseEntrySeconds must be an integer 20-180');
  if (!isInt(s.links.defaultWinners, 1)) p.push('links.defaultWinners must be an integer >= 1');
  if (!isInt(s.links.maxWinners, 1)) p.push('links.maxWinners must be an integer >= 1');
  if (!isInt(s.links.defaultSeconds, 5)) p.push('links.defaultSeconds must be an integer >= 5');
  if (!isInt(s.links.maxSeconds, 5)) p.push('links.maxSeconds must be an integer >= 5');
  if (s.links.defaultSeconds > s.links.maxSeconds) p.push('links.defaultSeconds must not exceed links.maxSeconds');
  if (s.links.defaultWinners > s.links.maxWinners) p.push('links.defaultWinners must not exceed links.maxWinners');
  if (!isInt(s.links.createDeadlineSeconds, 1)) p.push('links.createDeadlineSeconds must be an integer >= 1');
  if (!isInt(s.claim.seconds, 0)) p.push('claim.seconds must be an integer >= 0');
  if (!isInt(s.claim.maxRerolls, 0)) p.push('claim.maxRerolls must be an integer >= 0');
  if (!isInt(s.eligibility.minSubMonths, 0)) p.push('eligibility.minSubMonths must be an integer >= 0');
  if (!(s.eligibility.winnerCooldownHours >= 0)) p.push('eligibility.winnerCooldownHours must be >= 0');
  if (!Array.isArray(s.eligibility.excludeLogins)) p.push('eligibility.excludeLogins must be a list of logins');
  if (!isInt(s.luck.subscriberMultiplier, 1, 1000)) p.push('luck.subscriberMultiplier must be an integer 1-1000');
  for (const [i, t] of (s.luck.tiers ?? []).entries()) {
    if (!isInt(t.minMonths, 0)) p.push(`luck.tiers[${i}].minMonths must be an integer >= 0`);
    if (!isInt(t.weight, 1, 1000)) p.push(`luck.tiers[${i}].weight must be an integer 1-1000`);
  }
  const cp = s.tickets?.channelPoints;
  if (cp && !(isInt(cp.ticketsPerRedemption, 1, 1000) && isInt(cp.maxPerViewer, 1, 1000)))
    p.push('tickets.channelPoints: ticketsPerRedemption and maxPerViewer must be integers 1-1000');
  const bits = s.tickets?.bits;
  if (bits && !(isInt(bits.bitsPerTicket, 1) && isInt(bits.maxTickets, 1, 1000)))
    p.push('tickets.bits: bitsPerTicket must be an integer >= 1 and maxTickets 1-1000');
  if (!isInt(s.reminders.nearEndSeconds, 0)) p.push('reminders.nearEndSeconds must be an integer >= 0');
  if (!isInt(s.reminders.ackEverySeconds, 0)) p.push('reminders.ackEverySeconds must be an integer >= 0');
  if (typeof s.sharedChat.partnerEntries !== 'boolean') p.push('sharedChat.partnerEntries must be true or false');
  for (const [k, v] of Object.entries(s.messages)) {
    if (typeof v !== 'string') p.push(`messages.${k} must be a string`);
  }
  return p;
}
