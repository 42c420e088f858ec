/**
 * The giveaway domain's model: what a draw is made of (its record, entrants, winners, set-aside
 * picks, rerolls, fairness data, delivery state) and the shapes of what Fourthwall and Twitch tell
 * the domain (gift draws, purchases, products, links, accounts). Plain data, no behaviour except
 * `frozenRowsOf` (and the words for a prize closure, `PRIZE_CLOSURE_WORDS`).
 *
 * Contract: the stored history format is DrawRecord (the history export, docs/history.md);
 * changing a field here changes what is on disk. The interfaces the domain needs from the outside
 * world are in ports.ts. Imports only types (shared/, and the fairness data's shapes from fairness/).
 */
import type { BeaconRecord, FairnessData, FrozenEntrant } from '../fairness/index.js';
import type { ChatRoles } from '../shared/chat.js';

export type { BeaconRecord, FrozenEntrant };

type GiftStatus =
  'AVAILABLE' | 'CANCELLED' | 'CHANGED_TO_GIFT_CARD' | 'CHANGED_TO_PROMOTION' | 'REDEEMED' | (string & {});

interface GiftInfo {
  id: string;
  status: GiftStatus;
  winner?: { username?: string; redeemUri?: string; selectedAt?: string };
}

interface OfferInfo {
  id: string;
  name: string;
  slug?: string;
}

/** A Fourthwall giveaway draw (GIFT_DRAW_STARTED / GIFT_DRAW_ENDED data, GET draw). */
export interface GiftDrawInfo {
  id: string;
  type: 'INITIAL' | 'REDO' | (string & {});
  giveawayId?: string;
  giveawayFriendlyId?: string;
  offer: OfferInfo;
  /** The supporter who paid. */
  username?: string;
  message?: string;
  gifts: GiftInfo[];
  createdAt: string;
  durationSeconds: number;
}

/** A Fourthwall gift purchase (GIFT_PURCHASE data). */
export interface GiftPurchaseInfo {
  id: string;
  friendlyId?: string;
  offer: OfferInfo;
  username?: string;
  message?: string;
  quantity?: number;
  gifts: GiftInfo[];
  createdAt: string;
}

export interface ProductInfo {
  id: string;
  name: string;
  slug: string;
  available?: boolean;
  /** The first product image's URL (operator pages show it; never sent to the overlay). */
  imageUrl?: string;
  /** Units in stock over all variants; 'unlimited' when any variant is unlimited; absent when unknown. */
  stock?: number | 'unlimited';
}

export interface GiveawayLinkInfo {
  id: string;
  /** Bearer secret: never logged, never in chat unless links.publicInChat. */
  link: string;
}

export interface StreamingInfo {
  status: 'ONLINE' | 'OFFLINE' | 'UNKNOWN';
  broadcasterLogin?: string;
}

type DrawKind = 'gift-draw' | 'gift-purchase' | 'link-giveaway';
type DrawStatus = 'open' | 'drawing' | 'finished' | 'cancelled' | 'failed';

export interface Entrant {
  userId: string;
  login: string;
  displayName: string;
  /** Positive integer ticket weight (1 unless subscriber luck applies). */
  weight: number;
  roles: ChatRoles;
  /** ms since epoch. */
  enteredAt: number;
  /**
   * Shared Chat with partner entries on: the partner channel (user id) the entrant typed the entry
   * in. Absent for this channel's own viewers (the key itself is absent, not undefined).
   */
  partnerChannelId?: string;
}

/**
 * One channel's share of a draw's entrants (Shared Chat with partner entries on): this channel
 * first, then the partner channels, most entrants first. `login` where it is known (this
 * channel, a Twitch API lookup, Shared Chat session data), else only the id.
 */
export interface ChannelEntrants {
  channelId: string;
  login?: string;
  entrants: number;
  /** True for this channel. */
  own?: boolean;
}

export interface Winner {
  userId: string;
  login: string;
  displayName: string;
  giftId?: string;
  /** Secret. */
  redeemUrl?: string;
  claimed?: boolean;
  /** Position in the verifiable pick sequence (0-based). */
  pick: number;
  /**
   * How far the prize got (src/delivery). Kept by the storage apart from the draw record
   * (`DATA_DIR/delivery.json`) and attached when records are read; a saved record's own copy is
   * ignored. Absent for winners from before delivery was tracked.
   */
  delivery?: Delivery;
  /**
   * With account rules in force: `checked` (Twitch answered at `at` and the pick passed) or
   * `unchecked` (the lookup failed and `eligibility.uncheckable: allow` let the pick in).
   */
  accountCheck?: { result: 'checked' | 'unchecked'; at: string };
}

/**
 * A Fourthwall gift or giveaway-link status that ends a prize without a redemption: the shop
 * cancelled it, or changed it to a promotion or a gift card (GiftDraftV1.Gift, GiveawayLinksV1).
 */
export type PrizeClosure = 'CANCELLED' | 'CHANGED_TO_PROMOTION' | 'CHANGED_TO_GIFT_CARD';

/** How each closure is said (chat, dashboard, history): "the prize was <words>". */
export const PRIZE_CLOSURE_WORDS = {
  CANCELLED: 'cancelled',
  CHANGED_TO_PROMOTION: 'changed to a promotion',
  CHANGED_TO_GIFT_CARD: 'changed to a gift card',
} as const satisfies Readonly<Record<PrizeClosure, string>>;

/** Where a winner's prize is on its way (ISO times). */
export interface Delivery {
  /** When the winner was announced with a prize to redeem. */
  announcedAt: string;
  /** When Twitch accepted a whisper to the winner (a whisper may still be dropped silently). */
  whisperedAt?: string;
  /** When the winner logged in on the claim page and saw the prize. */
  claimPageOpenedAt?: string;
  /** When Fourthwall says the gift or link was redeemed. */
  redeemedAt?: string;
  /** The order the redemption created, when Fourthwall names it. */
  orderFriendlyId?: string;
  /** When the bot learnt that Fourthwall will no longer let the prize be redeemed (the link's `cancelledAt` when Fourthwall gives it). */
  closedAt?: string;
  /** How Fourthwall closed it: the gift or link status it reported (never `AVAILABLE` or `REDEEMED`). */
  closedAs?: PrizeClosure;
  /** When the one reminder went out, and how. */
  remindedAt?: string;
  remindedBy?: 'whisper' | 'chat';
  /** Why no whisper was sent (no scope, refused), for the streamer. */
  whisperProblem?: string;
}

/**
 * Tickets an entrant got beyond chat, one line each in the draw's ticket journal: a channel-point
 * redemption (`points`) or bits used (`bits`). The first grant of a viewer not in the draw yet
 * enters them with its tickets; later ones add to their weight (giveaway/tickets.ts).
 */
export interface TicketGrant {
  userId: string;
  login: string;
  displayName: string;
  source: 'points' | 'bits';
  /** The redemption id, or the bits event's message id: applied once per draw. */
  ref: string;
  /** Tickets it added (0: bits counted toward the next ticket, or past the cap). */
  tickets: number;
  /** Bits it counted (`bits` grants). */
  bits?: number;
  /** ms since the epoch. */
  at: number;
  /**
   * The roles the viewer entered with when the draw did not know them from chat (learnt from
   * Twitch's API: tickets.ts `KnownRoles`), kept so the rules at close see what the entry saw.
   */
  roles?: { subscriber: boolean; moderator: boolean };
}

/** Why a pick was set aside by the account rules. */
export type SetAsideReason = 'not-follower' | 'follow-age' | 'account-age' | 'unchecked';

/** A pick of the sequence that failed an account rule and was skipped (the next pick was drawn). */
export interface SetAsidePick {
  /** Its position in the pick sequence. */
  pick: number;
  userId: string;
  login: string;
  reason: SetAsideReason;
  /** When Twitch gave the answer (ISO); for `unchecked`, when the lookup gave up. */
  at: string;
}

/** One verified beacon round. */
export interface BeaconRound {
  round: number;
  /** Hex SHA-256 of the signature. */
  randomness: string;
  /** Hex compressed BLS signature. */
  signature: string;
}

/**
 * A frozen entrant list in canonical order, read by position without materialising it (the
 * engine keeps big lists in columns; a FrozenEntrant[] is adapted by `frozenRowsOf`).
 */
export interface FrozenRows {
  readonly length: number;
  userId(i: number): string;
  login(i: number): string;
  weight(i: number): number;
  /**
   * The canonical lines of the whole list (src/fairness/procedure.ts step 3: the bytes its digest hashed), when
   * they are already built; handed over once (later calls return undefined).
   */
  takeCanonicalBytes?(): Buffer[] | undefined;
}

/** A FrozenEntrant[] as FrozenRows. */
export function frozenRowsOf(list: readonly FrozenEntrant[]): FrozenRows {
  return {
    length: list.length,
    userId: (i) => list[i]!.userId,
    login: (i) => list[i]!.login,
    weight: (i) => list[i]!.weight,
  };
}

export interface RerollRecord {
  at: string;
  replacedUserId: string;
  replacedLogin: string;
  reason: 'command' | 'unclaimed';
  byUserId?: string;
  newUserId?: string;
  pick?: number;
  /**
   * The replaced winner's link, which had gone out (giveaway/reroll.ts): it stays theirs (a
   * redemption of it is theirs) and the replacement got a new link. Secret, like `redeemUrl`.
   */
  kept?: { giftId?: string; redeemUrl?: string };
  /**
   * The kept link's delivery state (src/delivery), attached when records are read like a
   * winner's `delivery`; a saved record's own copy is ignored.
   */
  delivery?: Delivery;
}

/** The stored record of one draw; the history export is derived from it. */
export interface DrawRecord {
  id: string;
  kind: DrawKind;
  status: DrawStatus;
  /** `redo`: Fourthwall's REDO draw, the gifts of an earlier draw nobody won, drawn again. */
  /** `extraPackageIds`: giveaway-link packages made later for replacements (a reroll of a link that had gone out). */
  source: {
    drawId?: string;
    giveawayId?: string;
    packageId?: string;
    extraPackageIds?: string[];
    eventId?: string;
    giftPurchaseId?: string;
    redo?: boolean;
  };
  offer: { id: string; name: string };
  gifts: number;
  giftIds?: string[];
  supporter?: { username?: string; message?: string };
  openedAt: string;
  closesAt: string;
  closedAt?: string;
  entrants: number;
  /**
   * With Shared Chat partner entries on (`sharedChat.partnerEntries`): how many of `entrants` came
   * from each channel (shared-chat-counts.ts). Absent when the setting is off: then every entrant
   * is this channel's.
   */
  entrantsByChannel?: ChannelEntrants[];
  winners: Winner[];
  fairness: FairnessData;
  /**
   * The frozen entrant list, on records read from storage (getDraw; needed by verify). The engine
   * keeps a closed draw's list beside the record (DrawSession.frozen), so snapshots and event
   * payloads never carry it.
   */
  frozenEntrants?: FrozenEntrant[];
  /** Eligibility and luck rules in force, recorded at draw time. */
  rules?: Record<string, unknown>;
  rerolls?: RerollRecord[];
  /**
   * Picks set aside by the account rules, in pick order (first winners, rerolls and claim
   * replacements alike); verify replays them. Absent on draws without account rules.
   */
  setAside?: SetAsidePick[];
  claim?: { deadline: string; rerollsUsed: number };
  failure?: { reason: string; at: string };
  /** Finish call to Fourthwall was started (reconcile with GET draw after a crash). */
  finishInFlight?: boolean;
  /**
   * When links were first asked for (link giveaways): a retry looks for a package an unconfirmed
   * attempt created from this moment on, and reuses it instead of creating a second one.
   */
  linksRequestedAt?: string;
  /** Who started it (link giveaways). */
  startedBy?: { userId: string; login: string };
  /**
   * Hex seed of a draw whose seed is not revealed yet (so a restarted bot draws with the seed it
   * committed to). Moved to `fairness.seed` at close; history exports never show this field.
   */
  pendingSeed?: string;
  /** Which mode's data this is; stamped by the storage on save (older records: read as live). */
  mode?: 'live' | 'sandbox';
}

/** What Twitch knows about one account, for the account rules (times in ms since the epoch). */
export interface AccountInfo {
  /** When the account was created (absent when it was not asked: no account-age rule). */
  createdAt?: number;
  /** When it followed the channel; undefined: it does not follow (or follows were not asked). */
  followedAt?: number;
  /** When Twitch gave the answer this verdict rests on (the follow answer when follows were asked). */
  answeredAt?: number;
}

/** The answer of one eligibility lookup: the accounts that could be checked, and those that could not. */
export interface AccountLookup {
  info: Map<string, AccountInfo>;
  /** Ids that could not be checked (the API was down, refused, or did not answer in time). */
  unchecked: string[];
  /** Why some could not be checked (one sentence, for chat and the record). */
  problem?: string;
}
