/**
 * What every part of the giveaway engine works with: the ports and settings it was built with
 * (GiveawayDeps), its events, the announcer, the draws in memory, its work in flight, and three
 * small helpers.
 *
 * Contract: one FlowContext per GiveawayEngine, built by it; the runner's effects, the flows
 * (flows/*.ts) and the command helpers take it instead of reaching for globals or for each other.
 * Does not own any draw state or decide anything about a draw.
 */
import type { EventEmitter } from 'node:events';
import type { Clock } from '../shared/clock.js';
import type { Announcer } from './announcer.js';
import type { ChannelIdentity } from './eligibility.js';
import type { DrawRegistry } from './registry.js';
import type { Trigger } from './draw-machine.js';
import type { DrawSession } from './session.js';
import type { WorkInFlight } from './work-in-flight.js';
import type { RandomSource } from '../shared/random.js';
import type { Logger } from '../logging/index.js';
import type { DrawRecord, Winner } from './model.js';
import type {
  BeaconPort,
  ChannelDirectory,
  ChatPort,
  DrawRepository,
  OperatorPort,
  PrivateDelivery,
  ShopPort,
} from './ports.js';
import type { GiveawaySettings } from './settings.js';
import type { AccountGate } from './account-rules.js';
import { recordChannelCounts } from './shared-chat-counts.js';

/**
 * Events of the engine. Payloads are snapshots of the record (treat redeem links as secrets): counts
 * (`entrants`) and the entrants digest, never entrant lists, so they stay small for any draw size.
 */
export interface GiveawayEventMap {
  'draw-opened': [record: DrawRecord];
  /** Entries closed; winners are being picked. */
  'draw-closed': [record: DrawRecord];
  'draw-finished': [record: DrawRecord];
  'draw-failed': [record: DrawRecord];
  'draw-cancelled': [record: DrawRecord];
  /** Final winners of a draw (also after a reroll of a finished draw). */
  winners: [record: DrawRecord, winners: Winner[]];
  /** A winner claimed during a claim window. */
  claimed: [record: DrawRecord, winner: Winner];
  /** A winner was replaced. */
  rerolled: [record: DrawRecord, old: Winner, winner: Winner];
  /** A viewer (by user id) joined an open draw; `entrants` is the new count. */
  entered: [drawId: string, userId: string, entrants: number];
  /** Entries were frozen for the picks: the canonical list's digest and its size (eligible entrants). */
  'entrants-frozen': [drawId: string, digest: string, eligible: number];
  /** A claim window opened, was extended for a replacement, or was resumed after a restart (ISO deadline). */
  'claim-opened': [drawId: string, deadline: string];
}

/** Ports and dependencies of GiveawayEngine. */
export interface GiveawayDeps {
  chat: ChatPort;
  shop: ShopPort;
  repo: DrawRepository;
  clock: Clock;
  random: RandomSource;
  logger: Logger;
  settings: GiveawaySettings;
  operator: OperatorPort;
  /** Public randomness beacon for the draws (absent: seed alone, `giftdrop-hmac-sha256-v1`). */
  beacon?: BeaconPort;
  /** How long a draw waits for its beacon round after entries close (default 10 s). */
  beaconWaitMs?: number;
  /**
   * Where a viewer checks draw `id` (named in the closing chat line: the public verify page);
   * without one (or undefined), the line asks them to get that page from the streamer.
   */
  checkHint?: (id: string) => string | undefined;
  /** How private links reach winners now (src/delivery); default: the streamer sends them. */
  privateDelivery?: () => PrivateDelivery;
  /** Account rules checked with Twitch at close (optional: without it only the chat rules apply). */
  accounts?: AccountGate;
  /** Channel logins for the Shared Chat counts (optional: without it partner channels are shown by id). */
  channelDirectory?: ChannelDirectory;
}

export interface FlowContext extends GiveawayDeps {
  events: EventEmitter<GiveawayEventMap>;
  readonly announce: Announcer;
  /** The draws in memory (active and recently closed). */
  readonly draws: DrawRegistry;
  /** Whether the engine is stopped, its work in flight, and clock sleeps that end when it stops. */
  readonly work: WorkInFlight;
  /**
   * Feeds `trigger` to the draw's state machine (runner.ts): undefined when it does not apply in
   * the draw's phase (nothing happens), else the work it started, already tracked.
   */
  fire(s: DrawSession, trigger: Trigger): Promise<void> | undefined;
}

/** Saves the session's record (with its Shared Chat counts brought up to date); a failed save is logged, never thrown. */
export function persistQuietly(c: FlowContext, s: DrawSession): Promise<void> {
  recordChannelCounts(s.record, s.entrants, c.chat, c.settings.sharedChat, c.channelDirectory);
  return s.persist(c.repo).catch((err: unknown) => {
    c.logger.error({ drawId: s.id, err }, 'could not save the draw record');
  });
}

/** The clock's now as an ISO timestamp. */
export function isoNow(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}

/** The channel and bot identity chat reports right now, for the always-on exclusions. */
export function channelIdentity(chat: ChatPort): ChannelIdentity {
  const channelId = chat.channelId();
  return { channelLogin: chat.channelLogin, botLogin: chat.botLogin, ...(channelId ? { channelId } : {}) };
}
