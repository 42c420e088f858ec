/**
 * The ports of the giveaway domain: the interfaces it needs from the outside world (chat, the
 * shop, the operator's console, private delivery, the randomness beacon, draw storage, Twitch
 * account lookups) and the error the shop port throws. Adapters in twitch/, fourthwall/, shop/,
 * storage/, delivery/ and beacon/ implement them; app/bot.ts wires them. The
 * domain's data types are in model.ts.
 *
 * Contract: the domain (src/giveaway) talks to adapters only through these. This file imports
 * only shared/, model.ts and entrant-rows.ts (the row views storage reads).
 */
import { GiftdropError } from '../shared/errors.js';
import type { EntrantRows } from './entrant-rows.js';
import type {
  GiftDrawInfo,
  ProductInfo,
  GiveawayLinkInfo,
  StreamingInfo,
  Entrant,
  BeaconRound,
  FrozenRows,
  DrawRecord,
  AccountLookup,
  Delivery,
  TicketGrant,
} from './model.js';

export type SayPriority = 'high' | 'normal' | 'low';

export interface SayOptions {
  /** high: winners, failures; normal: announcements; low: reminders (may be dropped when stale). */
  priority?: SayPriority;
  /** A low-priority line not sent within this many ms is dropped. */
  staleAfterMs?: number;
}

export interface ChatPort {
  /** Queues a line for the channel (split, paced and deduplicated by the outbox). */
  say(text: string, options?: SayOptions): void;
  /** Channel login (no `#`). */
  readonly channelLogin: string;
  /** Bot login (lower-case). */
  readonly botLogin: string;
  /** Channel user id once ROOMSTATE has been seen. */
  channelId(): string | undefined;
}

export interface ShopPort {
  finishDraw(drawId: string, participants: { userId: string; userName: string }[]): Promise<GiftDrawInfo>;
  getDraw(drawId: string): Promise<GiftDrawInfo>;
  createGiveawayLinks(productId: string, count: number): Promise<{ packageId: string; links: GiveawayLinkInfo[] }>;
  /** Every package of giveaway links of the shop (`GET /giveaway-links/packages`). */
  listGiveawayPackages(): Promise<{ packageId: string; createdAt?: string }[]>;
  /** The links of one package, each with its product id when Fourthwall says it. */
  getGiveawayPackage(
    packageId: string,
  ): Promise<{ packageId: string; links: (GiveawayLinkInfo & { productId?: string })[] }>;
  /** Every product of the shop (the adapter pages through the list). */
  listProducts(): Promise<ProductInfo[]>;
  getProduct(productId: string): Promise<ProductInfo>;
  streamingStart(input: {
    broadcasterId: string;
    broadcasterLogin: string;
    thumbnailUrl?: string;
  }): Promise<StreamingInfo>;
  streamingEnd(): Promise<StreamingInfo>;
  streamingStatus(): Promise<StreamingInfo>;
  /** The shop's public domain (for gift links `https://<domain>/gifts/<gft_id>`). */
  shopDomain(): Promise<string>;
  /** The shop's gifting entry window in seconds, when the API provides it. */
  giftingEntrySeconds?(): Promise<number | undefined>;
}

export type ShopErrorKind =
  /** A non-idempotent call may have reached the server: reconcile before anything else. */
  | 'outcome-unknown'
  | 'already-finished'
  | 'not-found'
  /** The request was refused as invalid (e.g. data mismatch); retrying will not help. */
  | 'rejected'
  /** Retries exhausted on network errors / 5xx / deadline. */
  | 'unavailable'
  | 'auth';

/** Errors the ShopPort throws; adapters translate API errors into these. */
export class ShopError extends GiftdropError {
  readonly kind: ShopErrorKind;
  constructor(kind: ShopErrorKind, message: string, options?: { cause?: unknown }) {
    super(`SHOP_${kind.toUpperCase().replace(/-/g, '_')}`, message, options);
    this.kind = kind;
  }
}

/** How private links reach the winners: whispers, the claim page, or the streamer by hand. */
export interface PrivateDelivery {
  via: 'whisper' | 'claim' | 'streamer';
  /** The claim page's address (`<GIFTDROP_PUBLIC_URL>/claim`), when there is one. */
  claimUrl?: string;
}

/**
 * The streamer's console: lines printed directly (not logged). Private giveaway links go here;
 * `secret` marks a line that carries a bearer link; `drawId` says which draw it belongs to (where
 * a console that may not print it points the operator).
 */
export interface OperatorPort {
  /**
   * `secret`: the line holds a bearer secret (a link): printed whole only on a terminal, else with
   * its URLs masked and a pointer to where they are; `terminalOnly`: printed on a terminal only.
   */
  notify(line: string, opts?: { secret?: boolean; drawId?: string; terminalOnly?: boolean }): void;
}

/** A public randomness beacon (drand, or the local sandbox beacon), as the draw needs it. */
export interface BeaconPort {
  /** The chain hash, and for a local sandbox chain its public key and schedule. */
  readonly chain: string;
  readonly sandbox?: { publicKey: string; genesis: number; period: number };
  /** The first round published strictly after `timeMs`. */
  roundAfter(timeMs: number): number;
  /** When `round` is published (ms since the epoch). */
  roundTime(round: number): number;
  /**
   * Waits for `round` to be published, fetches it and checks its BLS signature and randomness.
   * Rejects when it is not available by `deadlineMs` (on the engine clock) or does not verify.
   */
  fetch(round: number, deadlineMs: number): Promise<BeaconRound>;
}

/**
 * Storage of draws. Entries are journaled per open draw (append-only, cost independent of the
 * history size); records are written on state changes.
 */
export interface DrawRepository {
  /**
   * Creates or replaces a draw record. The frozen entrant list comes either in
   * `record.frozenEntrants` or, for lists the engine holds in columns, as `frozen` (which wins).
   */
  saveDraw(record: DrawRecord, frozen?: FrozenRows): Promise<void>;
  getDraw(id: string): Promise<DrawRecord | undefined>;
  /** Draws with status open or drawing, with their journaled entrants and ticket grants (in journal order). */
  openDraws(): Promise<{ record: DrawRecord; entrants: Entrant[]; grants?: TicketGrant[] }[]>;
  /**
   * Journals row `row` of an open draw's entrant rows (durable within the repository's flush
   * interval, 10 ms by default, without awaiting).
   * The row is read when the journal is written, not now: rows must not change once added.
   */
  appendEntrantRow(drawId: string, rows: EntrantRows, row: number): void;
  /**
   * Journals a ticket grant of an open draw (channel points, bits); resolves once it is on disk
   * (synced), so a redemption is marked fulfilled only after its entry survives a power cut.
   */
  appendTicketGrant(drawId: string, grant: TicketGrant): Promise<void>;
  /** Newest first. */
  listDraws(options?: { limit?: number }): Promise<DrawRecord[]>;
  /** Winners of finished draws closed at or after `sinceMs` (for the winner cooldown). */
  recentWinnerIds(sinceMs: number): Promise<Set<string>>;
  /** How far one winner's prize got (src/delivery keeps it; the reroll rule asks whether it was redeemed). */
  deliveryOf(drawId: string, userId: string): Delivery | undefined;
  /** Webhook ids already processed (bounded set). Returns false if the id was already seen. */
  markEventProcessed(eventId: string): Promise<boolean>;
  /** True when the webhook id was processed before (this run or an earlier one). */
  isEventProcessed(eventId: string): Promise<boolean>;
  /** Writes everything buffered to disk. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Channel logins by channel (user) id, for the Shared Chat counts of a joint giveaway: this
 * channel, Twitch API lookups, Shared Chat session data (twitch/channel-directory.ts).
 */
export interface ChannelDirectory {
  /** The channel's login when known, else undefined. */
  loginOf(channelId: string): string | undefined;
  /** Asks for the channel's login in the background (no-op when known, or without a way to ask); never throws. */
  lookUp(channelId: string): void;
}

/**
 * Looks accounts up (Twitch Helix in production); never throws: failures land in `unchecked`.
 * `until`: no call runs past this time (engine clock); what is not answered by then is unchecked.
 */
export interface AccountInfoPort {
  /** `created`: creation dates are needed (default true). */
  lookup(
    userIds: readonly string[],
    needs: { follows: boolean; created?: boolean; until?: number },
  ): Promise<AccountLookup>;
}
