/**
 * The merch train: every Nth qualifying order (or, with `minOrderTotal`, every order of at least
 * that total) opens a link giveaway of the configured product through the same engine call as
 * `!giveaway start`, announced as the train's reward.
 *
 * Contract:
 * - a qualifying order is a paid order (not a gift or giveaway-link redemption), placed while the
 *   shop's stream is marked live when `onlyWhileLive` (a failed live check counts the order);
 * - the counter lives in `DATA_DIR/merch-train.json` (the disk protocol, 0600), written BEFORE
 *   the giveaway is asked for, so a restart at N-1 still departs on the Nth order, and one
 *   departure never opens two giveaways (`start` checks a pending one against the history);
 * - one train at a time: while a link giveaway runs, a departure waits (`boarding`) and leaves
 *   when it ends; orders meanwhile keep counting but never queue a second departure;
 * - orders are handled one after another, and none before `start()` has read the counter;
 *   `start()` runs once, `stop()` is final (also during `start()`), and orders queued after it are
 *   skipped (logged), never counted.
 * Does not: decide which events are duplicates (the bot's webhook path does).
 */
import type { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { z } from 'zod';
import type { MerchTrainSettings } from '../config/shop.js';
import type { Order } from '../fourthwall/index.js';
import type { GiveawayEventMap } from '../giveaway/context.js';
import type { ActionResult } from '../giveaway/flows/link-giveaway.js';
import type { ChatPort } from '../giveaway/ports.js';
import { render } from '../giveaway/messages.js';
import type { Logger } from '../logging/index.js';
import { noRoles, type ChatMessage } from '../shared/chat.js';
import type { Clock } from '../shared/clock.js';
import { parseJsonFile, readIfExists, writeFileAtomic } from '../storage/index.js';
import { isRedemption } from './alerts.js';

export const MERCH_TRAIN_FILE = 'merch-train.json';

const StateSchema = z.object({
  version: z.literal(1),
  /** Qualifying orders since the last departure. */
  count: z.number().int().min(0),
  /** Departures so far. */
  departures: z.number().int().min(0),
  /** A departure is waiting for the running giveaway to end. */
  boarding: z.boolean(),
  /** The id of the train's latest giveaway. */
  drawId: z.string().optional(),
  /** When the current departure was decided (ISO). */
  boardingSince: z.string().optional(),
});
export type MerchTrainState = z.infer<typeof StateSchema>;

export interface MerchTrainDeps {
  settings: MerchTrainSettings;
  dataDir: string;
  /** The engine call `!giveaway start` uses. */
  startLinkGiveaway(by: ChatMessage, query: string, winners?: number, seconds?: number): Promise<ActionResult>;
  /** The engine's events (a boarding train departs when a giveaway ends). */
  events: EventEmitter<GiveawayEventMap>;
  /** Whether the shop's stream is marked live. */
  isLive(): Promise<boolean>;
  /** The shop's name of the product `merchTrain.product` names (an id, slug or name); undefined when not found. */
  productName?(query: string): Promise<string | undefined>;
  /** The id of a giveaway the train (login `merch_train`) opened at or after `since`, from the history. */
  findDeparture?(since: string): Promise<string | undefined>;
  chat: Pick<ChatPort, 'say' | 'channelLogin' | 'channelId'>;
  clock: Clock;
  logger: Logger;
}

export class MerchTrain {
  private state: MerchTrainState = { version: 1, count: 0, departures: 0, boarding: false };
  /** Opens the chain's gate: set by the constructor, called by start() once ready (or by stop()). */
  private openGate!: () => void;
  /** Steps run one after another; the first waits for the gate. */
  private chain: Promise<void> = new Promise<void>((resolve) => (this.openGate = resolve));
  private started = false;
  private stopped = false;
  /** The `start()` under way, awaited by `stop()`. */
  private starting: Promise<void> | undefined;
  private readonly file: string;
  private readonly log: Logger;
  /** The product's name as the shop shows it, once looked up (chat names it, never its slug). */
  private productLabel: string | undefined;
  /** The one look-up of that name (started by the first order counted). */
  private lookingUp: Promise<string> | undefined;
  private readonly onEnded = (r: { kind: string }) => {
    if (r.kind === 'link-giveaway' && this.state.boarding) void this.serial(() => this.depart());
  };

  constructor(private readonly d: MerchTrainDeps) {
    this.file = join(d.dataDir, MERCH_TRAIN_FILE);
    this.log = d.logger.child({ module: 'merch-train' });
  }

  get enabled(): boolean {
    return this.d.settings.enabled;
  }

  /**
   * Reads the counter (a missing file is a fresh train), settles a departure pending from before a
   * restart (still marked `boarding`: a giveaway the train opened since `boardingSince`, e.g.
   * before a crash, counts as departed), then listens for giveaways ending and lets queued orders
   * through. Nothing acts on a half-started train: orders that arrive meanwhile wait in the chain,
   * and the engine's giveaway-ended events are listened to only from then on (a boarding train
   * departs at the end of `start()` anyway, so an end missed meanwhile loses nothing); a `start()`
   * that fails attaches nothing. Runs once (a second call gets the first one's promise).
   */
  start(): Promise<void> {
    return (this.starting ??= this.startOnce());
  }

  private async startOnce(): Promise<void> {
    if (this.stopped) return;
    const text = await readIfExists(this.file);
    if (this.stopped) return;
    if (text !== undefined) this.state = parseJsonFile(this.file, text, StateSchema);
    if (this.state.boarding && this.state.boardingSince && this.d.findDeparture) {
      const drawId = await this.d.findDeparture(this.state.boardingSince);
      if (this.stopped) return; // stop() came meanwhile: no departure is settled or made
      if (drawId) {
        this.log.info({ drawId }, 'the merch train had departed before the restart');
        this.state = { ...this.state, boarding: false, drawId };
        await this.save();
        if (this.stopped) return;
      }
    }
    // Started: only now may engine events and queued orders act on the counter.
    for (const e of ['draw-finished', 'draw-failed', 'draw-cancelled'] as const) this.d.events.on(e, this.onEnded);
    this.started = true;
    this.openGate();
    if (this.enabled && this.state.boarding) void this.serial(() => this.depart());
  }

  /**
   * Final, also while `start()` is still reading: that start ends at its next step without
   * listening or departing (a counter write under way completes), and this resolves once it has.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const e of ['draw-finished', 'draw-failed', 'draw-cancelled'] as const) this.d.events.off(e, this.onEnded);
    this.openGate(); // stopped before it started: queued steps are skipped (see serial)
    // A start() still reading ends at its next step (it checks `stopped`); its failure is start()'s to report.
    await this.starting?.catch(() => undefined);
    await this.chain;
  }

  /** A copy of the counter. */
  snapshot(): MerchTrainState & { everyOrders: number; minOrderTotal?: number; product?: string } {
    const s = this.d.settings;
    return {
      ...this.state,
      everyOrders: s.everyOrders,
      ...(s.minOrderTotal !== undefined ? { minOrderTotal: s.minOrderTotal } : {}),
      ...(s.product ? { product: s.product } : {}),
    };
  }

  /** The `!merch train` line. */
  statusLine(): string {
    const s = this.d.settings;
    if (!s.enabled) return 'The merch train is not running on this channel.';
    const reward = `a giveaway of ${this.productLabel ?? s.product ?? 'merch'}`;
    if (this.state.boarding)
      return `🚂 The merch train is boarding: ${reward} opens as soon as the current giveaway ends.`;
    if (s.minOrderTotal !== undefined)
      return `🚂 Merch train: every order of ${s.minOrderTotal.toFixed(2)} or more unlocks ${reward}. ${this.state.departures} departure(s) so far.`;
    return `🚂 Merch train: ${this.state.count}/${s.everyOrders} orders. Next stop: ${reward}!`;
  }

  /** Counts one order (see the module header). Never rejects. */
  onOrder(order: Order): Promise<void> {
    return this.serial(() => this.count(order));
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    const step = () => {
      if (this.started) return fn();
      this.log.warn('the merch train stopped before it started; an order was not counted');
    };
    const next = this.chain.then(step).catch((err) => this.log.error({ err }, 'merch train step failed'));
    this.chain = next;
    return next;
  }

  private async count(order: Order): Promise<void> {
    const s = this.d.settings;
    if (!s.enabled || isRedemption(order)) return;
    void this.rewardName(); // known by the time `!merch train` or the departure names it
    if (s.onlyWhileLive) {
      let live = true;
      try {
        live = await this.d.isLive();
      } catch (err) {
        this.log.warn({ reason: (err as Error).message }, 'could not read the streaming status; the order counts');
      }
      if (!live) return;
    }
    const total = order.amounts?.total?.value;
    const byAmount = s.minOrderTotal !== undefined;
    const departs = byAmount
      ? typeof total === 'number' && total >= s.minOrderTotal!
      : this.state.count + 1 >= s.everyOrders;
    if (this.state.boarding) {
      // One train at a time: count, but never past the next departure.
      this.state.count = Math.min(this.state.count + 1, byAmount ? this.state.count + 1 : s.everyOrders - 1);
      await this.save();
      return;
    }
    if (!departs) {
      this.state.count += 1;
      await this.save();
      return;
    }
    const number = byAmount ? this.state.count + 1 : s.everyOrders;
    const boardingSince = new Date(this.d.clock.now()).toISOString();
    this.state = { ...this.state, count: 0, departures: this.state.departures + 1, boarding: true, boardingSince };
    await this.save();
    this.d.chat.say(render(s.announcement, { count: number, product: await this.rewardName() }), {
      priority: 'normal',
    });
    await this.depart();
  }

  /** The product's name in the shop (looked up once; the setting as written when the shop cannot say). */
  private rewardName(): Promise<string> {
    const query = this.d.settings.product;
    if (!query) return Promise.resolve('merch');
    const lookUp = async (): Promise<string> => {
      try {
        this.productLabel = await this.d.productName?.(query);
      } catch (err) {
        this.log.warn(
          { reason: (err as Error).message },
          'could not look the merch train product up; chat names it as the settings write it',
        );
      }
      return this.productLabel ?? query;
    };
    return (this.lookingUp ??= lookUp());
  }

  /** Opens the train's giveaway; stays boarding while another link giveaway runs. */
  private async depart(): Promise<void> {
    const s = this.d.settings;
    if (!this.state.boarding || !s.product) return;
    const by: ChatMessage = {
      id: `merch-train-${this.state.departures}`,
      channel: this.d.chat.channelLogin,
      userId: this.d.chat.channelId() ?? 'merch-train',
      login: 'merch_train',
      displayName: 'Merch train',
      text: '',
      roles: { ...noRoles, broadcaster: true },
      bits: 0,
      action: false,
      sentAt: this.d.clock.now(),
      self: true,
    };
    const res = await this.d.startLinkGiveaway(by, s.product, s.winners, s.seconds);
    if (res.ok) {
      this.state = { ...this.state, boarding: false, ...(res.id ? { drawId: res.id } : {}) };
      await this.save();
      this.log.info({ drawId: res.id, departures: this.state.departures }, 'merch train departed');
      return;
    }
    if (/already running/i.test(res.message)) {
      this.log.info('merch train boarding: a link giveaway is running');
      return;
    }
    this.state = { ...this.state, boarding: false };
    await this.save();
    this.log.warn({ reason: res.message }, 'merch train giveaway could not open');
    this.d.chat.say(
      `⚠️ The merch train's giveaway could not open: ${res.message} Mods: check merchTrain.product in the settings.`,
      {
        priority: 'normal',
      },
    );
  }

  private async save(): Promise<void> {
    await writeFileAtomic(this.file, `${JSON.stringify(this.state)}\n`); // created owner-only (0600)
  }
}
