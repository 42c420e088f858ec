/**
 * Entries from channel points: the bot's own custom reward ("Enter the giveaway", title, cost and
 * prompt from the settings file), open for redemptions only while a draw takes entries, and each
 * redemption an entry or its points given back.
 *
 * The lifecycle (`state`): starting -> ready, or refused (Twitch said no: not Affiliate/Partner, a
 * title another reward has, 50 rewards, a token without channel:manage:redemptions; one line in
 * `problem`, nothing retried) -> stopped. Twitch unreachable at start: tried again after a backoff.
 *
 * Contract:
 * - the reward is the bot's own (its id kept in DATA_DIR/channel-points.json, read with
 *   `only_manageable_rewards`): a reward another app or the streamer made is never touched;
 * - it is unpaused while some draw is open and paused otherwise (`syncPause`);
 * - every UNFULFILLED redemption is settled once: FULFILLED only after the engine's door
 *   (`enterByTickets`) journaled the entry, CANCELED (points given back) when it refuses; one the
 *   engine already applied is FULFILLED without a second entry (`flushSettles`);
 * - each time the subscription goes live (start, and after a dropped socket, whose redemptions
 *   Twitch does not replay) the pending ones are read back and settled (`catchUp`): no viewer
 *   pays without an entry or a refund; a stopping engine decides nothing (the next start does).
 * Does not: decide who may enter or with how many tickets (giveaway/tickets.ts).
 */
import { z } from 'zod';
import {
  refusalCode,
  refusalWords,
  type KnownRoles,
  type TicketOutcome,
  type TicketRequest,
} from '../../giveaway/tickets.js';
import type { Logger } from '../../logging/index.js';
import type { Clock, TimerHandle } from '../../shared/clock.js';
import { LruCache } from '../../shared/lru-cache.js';
import { backoffDelay, type Backoff } from '../../shared/retry.js';
import type { EventSubTopics, TopicRegistration } from '../eventsub/topics.js';
import {
  ChannelPointsRefusal,
  SETTLE_BATCH,
  type ChannelPointsApi,
  type Redemption,
  type SettleStatus,
} from './api.js';

/** What the feature needs of the giveaway engine. */
export interface EntryDoor {
  enterByTickets(req: TicketRequest): Promise<TicketOutcome>;
  /** True while some draw takes entries. */
  entriesOpen(): boolean;
  /** Called after a draw opened or closed. */
  onDrawsChanged(fn: () => void): void;
}

/** Where the reward's id is kept between runs. */
interface RewardStore {
  load(): Promise<string | undefined>;
  save(rewardId: string): Promise<void>;
}

export interface ChannelPointsOptions {
  api: ChannelPointsApi;
  broadcasterId: string;
  topics: EventSubTopics;
  door: EntryDoor;
  store: RewardStore;
  reward: { title: string; cost: number; prompt: string };
  clock: Clock;
  logger: Logger;
  /** Waits between retries of a failed settle, pause or start (default 2 s doubling to 60 s). */
  retry?: Backoff;
  /** Told the line when the feature goes off (for /healthz and the dashboard). */
  onProblem?: (line: string) => void;
  /** The redeeming viewer's roles from Twitch's API, when a role rule is in force (roles.ts ViewerRoles). */
  roles?: (userId: string) => Promise<KnownRoles>;
}

export type ChannelPointsState = 'starting' | 'ready' | 'refused' | 'stopped';

export interface ChannelPointsHealth {
  state: ChannelPointsState;
  problem?: string;
  paused?: boolean;
  /** Redemptions entered (FULFILLED) and refunded (CANCELED) by this run. */
  entered: number;
  refunded: number;
  /** Redemptions decided or being decided, not settled at Twitch yet. */
  pending: number;
  /** Refunds by reason (tickets.ts refusalCode: "no-draw-open", "not-eligible:not-subscriber", "roles-unknown:subscribersOnly"...). */
  refundReasons?: Record<string, number>;
  /** The EventSub subscription's status. */
  subscription?: string;
}

const RedemptionEvent = z.looseObject({
  id: z.string().min(1),
  broadcaster_user_id: z.string(),
  user_id: z.string().min(1),
  user_login: z.string(),
  user_name: z.string().optional(),
  status: z.string(),
  reward: z.looseObject({ id: z.string() }),
  redeemed_at: z.string().optional(),
});

const REDEMPTION_TOPIC = 'channel.channel_points_custom_reward_redemption.add';

export class ChannelPointsEntries {
  state: ChannelPointsState = 'starting';
  problem: string | undefined;
  rewardId: string | undefined;
  private paused: boolean | undefined;
  private pausing: Promise<void> | undefined;
  private readonly inFlight = new Set<string>();
  private readonly settled: LruCache<string, true>;
  private readonly queue: Record<SettleStatus, string[]> = { FULFILLED: [], CANCELED: [] };
  private settling: Promise<void> | undefined;
  private registration: TopicRegistration | undefined;
  private timers = new Set<TimerHandle>();
  private entered = 0;
  private refunded = 0;
  private readonly reasons: Record<string, number> = {};
  private readonly log: Logger;

  constructor(private readonly o: ChannelPointsOptions) {
    this.log = o.logger.child({ module: 'twitch.channel-points' });
    this.settled = new LruCache({ maxEntries: 5000 });
  }

  health(): ChannelPointsHealth {
    return {
      state: this.state,
      ...(this.problem ? { problem: this.problem } : {}),
      ...(this.paused !== undefined ? { paused: this.paused } : {}),
      entered: this.entered,
      refunded: this.refunded,
      pending: this.inFlight.size,
      ...(Object.keys(this.reasons).length ? { refundReasons: { ...this.reasons } } : {}),
      ...(this.registration ? { subscription: this.registration.status() } : {}),
    };
  }

  /** Makes sure the reward exists, then takes redemptions (a title it shares is refused with a plain line). */
  async start(attempt = 1): Promise<void> {
    if (this.state === 'stopped') return;
    try {
      this.rewardId = await this.ensureReward();
    } catch (err) {
      if (err instanceof ChannelPointsRefusal) return this.refuse(err.message);
      const delay = backoffDelay(this.retryPolicy(), attempt);
      this.log.warn(
        { err: (err as Error).message, delayMs: delay },
        `could not set up the channel-point reward yet; trying again in ${Math.round(delay / 1000)} s`,
      );
      return this.later(delay, () => void this.start(attempt + 1));
    }
    if (this.state !== 'starting') return;
    this.state = 'ready';
    this.o.door.onDrawsChanged(() => this.syncPause());
    this.registration = this.o.topics.register(
      {
        type: REDEMPTION_TOPIC,
        version: '1',
        condition: { broadcaster_user_id: this.o.broadcasterId, reward_id: this.rewardId },
        account: 'broadcaster',
      },
      {
        onEvent: (event) => this.onRedemption(event),
        onSubscribed: () => void this.catchUp(),
        onRefused: (problem) => this.refuse(problem),
        onRevoked: (status) =>
          this.refuse(`Twitch revoked the channel-point subscription (${status}): log the broadcaster in again.`),
      },
    );
    this.log.info(
      { rewardId: this.rewardId, title: this.o.reward.title, cost: this.o.reward.cost },
      `channel points: redemptions of "${this.o.reward.title}" enter the open draw`,
    );
  }

  /** Stops taking redemptions; waits (bounded by the caller) for the settles in flight. */
  async stop(): Promise<void> {
    this.state = 'stopped';
    for (const t of this.timers) t.cancel();
    this.timers.clear();
    await this.settling;
  }

  private refuse(problem: string): void {
    if (this.state === 'stopped') return;
    this.state = 'refused';
    this.problem = problem;
    if (this.o.onProblem) this.o.onProblem(`channel points are off: ${problem}`);
    else this.log.error(`channel points are off: ${problem}`);
  }

  private retryPolicy(): Backoff {
    return this.o.retry ?? { baseMs: 2000, maxMs: 60_000 };
  }

  private later(ms: number, fn: () => void): void {
    if (this.state === 'stopped') return;
    const t = this.o.clock.setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  private async ensureReward(): Promise<string> {
    const { api, store, reward: want } = this.o;
    const paused = !this.o.door.entriesOpen();
    const known = await store.load();
    const existing = known ? await api.reward(known) : undefined;
    if (existing) {
      const patch: Parameters<ChannelPointsApi['update']>[1] = {};
      if (existing.title !== want.title) patch.title = want.title;
      if (existing.cost !== want.cost) patch.cost = want.cost;
      if (existing.prompt !== want.prompt) patch.prompt = want.prompt;
      if (existing.paused !== paused) patch.is_paused = paused;
      const now = Object.keys(patch).length ? await api.update(existing.id, patch) : existing;
      this.paused = now.paused;
      return existing.id;
    }
    if (known)
      this.log.warn(
        { rewardId: known },
        "the bot's channel-point reward is gone (deleted on Twitch?); creating it again",
      );
    const created = await api.create({ ...want, paused });
    await store.save(created.id);
    this.paused = created.paused;
    this.log.info(
      { rewardId: created.id },
      `created the channel-point reward "${created.title}" (${created.cost} points)`,
    );
    return created.id;
  }

  /**
   * Pauses the reward while no draw is open, unpauses it while one is (one PATCH per change,
   * serialized, the last wish wins; a failure is retried).
   */
  private syncPause(attempt = 1): void {
    if (this.state !== 'ready' || this.pausing) return;
    const want = !this.o.door.entriesOpen();
    if (want === this.paused) return;
    this.pausing = (async () => {
      try {
        const r = await this.o.api.update(this.rewardId!, { is_paused: want });
        this.paused = r.paused;
        this.log.info(`channel-point reward ${want ? 'paused (no draw open)' : 'open for redemptions'}`);
        attempt = 0;
      } catch (err) {
        if (err instanceof ChannelPointsRefusal) return this.refuse(err.message);
        const delay = backoffDelay(this.retryPolicy(), attempt);
        this.log.warn(
          { err: (err as Error).message },
          `could not ${want ? 'pause' : 'unpause'} the channel-point reward; trying again in ${Math.round(delay / 1000)} s`,
        );
        this.later(delay, () => this.syncPause(attempt + 1));
      } finally {
        this.pausing = undefined;
      }
      if (attempt === 0) this.syncPause();
    })();
  }

  private onRedemption(raw: unknown): void {
    const e = RedemptionEvent.safeParse(raw);
    if (!e.success) {
      this.log.warn(
        'a channel-point redemption event did not have the expected shape; ignored (the catch-up reads it back)',
      );
      return;
    }
    const r = e.data;
    if (r.reward.id !== this.rewardId || r.broadcaster_user_id !== this.o.broadcasterId) return;
    if (r.status.toLowerCase() !== 'unfulfilled') return;
    const at = r.redeemed_at ? Date.parse(r.redeemed_at) : NaN;
    void this.take({
      id: r.id,
      userId: r.user_id,
      login: r.user_login,
      displayName: r.user_name ?? r.user_login,
      ...(Number.isFinite(at) ? { redeemedAt: at } : {}),
    });
  }

  /**
   * Reads back the pending redemptions (a gap: start, or a dropped socket;
   * `GET .../redemptions?status=UNFULFILLED`, oldest first) and settles each.
   */
  private async catchUp(attempt = 1): Promise<void> {
    if (this.state !== 'ready') return;
    let pending: Redemption[];
    try {
      pending = await this.o.api.pending(this.rewardId!);
    } catch (err) {
      if (err instanceof ChannelPointsRefusal) return this.refuse(err.message);
      const delay = backoffDelay(this.retryPolicy(), attempt);
      this.log.warn(
        { err: (err as Error).message },
        `could not read the pending redemptions; trying again in ${Math.round(delay / 1000)} s`,
      );
      return this.later(delay, () => void this.catchUp(attempt + 1));
    }
    if (pending.length)
      this.log.info(
        { pending: pending.length },
        `channel points: settling ${pending.length} redemption(s) made while the bot was not listening`,
      );
    for (const r of pending) await this.take(r);
  }

  /** One redemption: the engine decides, then it is queued to be settled at Twitch. */
  private async take(r: Redemption): Promise<void> {
    if (this.state === 'stopped' || this.settled.has(r.id) || this.inFlight.has(r.id)) return;
    this.inFlight.add(r.id);
    let outcome: TicketOutcome;
    try {
      const roles = this.o.roles ? await this.o.roles(r.userId) : undefined;
      outcome = await this.o.door.enterByTickets({
        source: 'points',
        ref: r.id,
        userId: r.userId,
        login: r.login,
        displayName: r.displayName,
        at: r.redeemedAt ?? this.o.clock.now(),
        ...(roles ? { roles } : {}),
      });
    } catch (err) {
      this.inFlight.delete(r.id);
      this.log.error(
        { err, redemption: r.id },
        'could not decide a channel-point redemption; it stays pending for the next catch-up',
      );
      return;
    }
    if (outcome.result === 'stopped') {
      this.inFlight.delete(r.id);
      return;
    }
    const status: SettleStatus = outcome.result === 'refused' ? 'CANCELED' : 'FULFILLED';
    if (outcome.result === 'refused') {
      const code = refusalCode(outcome);
      this.reasons[code] = (this.reasons[code] ?? 0) + 1;
      this.log.info(
        { redemption: r.id, userId: r.userId, result: outcome.result, reason: code },
        `channel points: ${r.login} refunded (${refusalWords(outcome)})`,
      );
    } else
      this.log.info(
        { redemption: r.id, userId: r.userId, result: outcome.result },
        `channel points: ${r.login} entered`,
      );
    this.queue[status].push(r.id);
    this.flushSettles();
  }

  /**
   * Settles go out up to 50 ids per PATCH (Twitch's batch), so a burst costs few Helix points; a
   * failed PATCH is retried with backoff until it goes through or the bot stops (the next start's
   * catch-up finds what is left).
   */
  private flushSettles(): void {
    if (this.settling) return;
    this.settling = (async () => {
      let failures = 0;
      for (;;) {
        const status: SettleStatus | undefined = this.queue.FULFILLED.length
          ? 'FULFILLED'
          : this.queue.CANCELED.length
            ? 'CANCELED'
            : undefined;
        if (!status || this.state === 'stopped') return;
        const batch = this.queue[status].splice(0, SETTLE_BATCH);
        try {
          const changed = await this.o.api.settle(this.rewardId!, batch, status);
          failures = 0;
          for (const id of batch) {
            this.inFlight.delete(id);
            this.settled.set(id, true);
            if (!changed.has(id))
              this.log.warn({ redemption: id }, 'a redemption was settled elsewhere meanwhile (no longer UNFULFILLED)');
            else if (status === 'FULFILLED') this.entered++;
            else this.refunded++;
          }
        } catch (err) {
          this.queue[status].unshift(...batch);
          const delay = backoffDelay(this.retryPolicy(), ++failures);
          this.log.warn(
            { err: (err as Error).message, redemptions: batch.length },
            `could not mark redemptions ${status}; trying again in ${Math.round(delay / 1000)} s`,
          );
          const waited = await new Promise<boolean>((resolve) => {
            if (this.state === 'stopped') return resolve(false);
            const handle: TimerHandle = {
              cancel: () => {
                t.cancel();
                resolve(false);
              },
            };
            const t = this.o.clock.setTimeout(() => {
              this.timers.delete(handle);
              resolve(true);
            }, delay);
            this.timers.add(handle);
          });
          if (!waited) return;
        }
      }
    })().finally(() => {
      this.settling = undefined;
      if (this.state !== 'stopped' && (this.queue.FULFILLED.length || this.queue.CANCELED.length)) this.flushSettles();
    });
  }
}
