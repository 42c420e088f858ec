/**
 * What the giveaway engine's parts share: the ports, the settings, the event emitter, and the
 * engine's own lifecycle helpers (clock sleeps that end on stop, tracking of work in flight).
 *
 * Contract: one EngineContext per GiveawayService; helper modules (gift-draw.ts,
 * link-giveaway.ts, ...) take it instead of reaching for globals. Does not own any draw state.
 */
import type { EventEmitter } from 'node:events';
import type { Clock } from '../shared/clock.js';
import type { RandomSource } from '../shared/random.js';
import type { Logger } from '../logging/index.js';
import type { BeaconPort, ChatPort, DrawRecord, DrawRepository, Entrant, OperatorPort, ShopPort, Winner } from './ports.js';
import type { GiveawaySettings } from './settings.js';
import type { AccountGate } from './account-rules.js';
import type { PrivateDelivery } from './announcer.js';

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

/** Ports and dependencies of GiveawayService. */
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
  /** How a viewer checks draw `id` (named in the closing chat line); default `npm run verify -- <id>`. */
  checkHint?: (id: string) => string;
  /** How private links reach winners now (src/delivery); default: the streamer sends them. */
  privateDelivery?: () => PrivateDelivery;
  /** Account rules checked with Twitch at close (optional: without it only the chat rules apply). */
  accounts?: AccountGate;
}

export interface EngineContext extends GiveawayDeps {
  events: EventEmitter<GiveawayEventMap>;
  /** True once the service is stopped: loops stop retrying and leave the journal as it is. */
  isStopped(): boolean;
  /** Resolves true after `ms` on the engine clock, or false at once if / when the engine stops. */
  sleep(ms: number): Promise<boolean>;
}

/** A deep copy of a record, for saves and event payloads. */
export function snapshot(record: DrawRecord): DrawRecord {
  return structuredClone(record);
}
