/**
 * The delivery tracker: follows each winner's prize from the announcement until Fourthwall says
 * it was redeemed (or will never be: cancelled, changed to a promotion or a gift card), and gets
 * it to the winner on the way.
 *
 * Contract:
 * - every winner announced with a prize (engine `winners` event) gets `delivery.announcedAt`
 *   (store.updateDelivery: storage keeps it apart from the draw record) and, when whispers are
 *   available, one whisper with the claim page (or the link) on the WhisperPort, which waits past
 *   Twitch's limits and never drops; `whisperedAt` once Twitch accepted it (no proof of delivery);
 * - a prize is redeemed by ORDER_PLACED (`redeemed`) or the redemption poll (`tick`), closed when
 *   Fourthwall no longer lets it be redeemed (then it stops waiting and cannot be rerolled);
 *   nothing is polled while no prize waits;
 * - one reminder per waiting prize at the next stream start (`streamStarted`) or after
 *   `reminders.afterHours` (`remind`);
 * - `waiting()` is the dashboard's list, `prizesFor(userId)` the claim page's (that viewer's own);
 *   both, the redemptions and the poll go by the draw's prize HOLDERS (state.ts `prizeHolders`):
 *   its winners and each replaced winner who kept the link they had seen (a reroll of a link that
 *   had gone out gives the replacement a new one); a kept link is credited to its holder, never
 *   reminded, and listed on the dashboard (`replaced: true`) until redeemed or closed.
 * Links never reach a log line or chat here (chat lines name the claim page only).
 * Does not: talk HTTP (src/web/public/claim-page.ts), know Fourthwall's shapes (the RedemptionPort
 * adapter does), or decide who won.
 */
import { EventEmitter } from 'node:events';
import type { GiveawayEventMap } from '../giveaway/context.js';
import { mentionList, render } from '../giveaway/messages.js';
import type { Delivery, DrawRecord, PrizeClosure, Winner } from '../giveaway/model.js';
import type { ChatPort, PrivateDelivery } from '../giveaway/ports.js';
import type { GiveawaySettings } from '../giveaway/settings.js';
import type { Logger } from '../logging/index.js';
import type { Clock, TimerHandle } from '../shared/clock.js';
import { deliveryLabel, isWaiting, prizeHolders, type DeliveryLabel } from './state.js';

/** The draw storage as the tracker needs it (FileDrawRepository). */
export interface DeliveryStore {
  listDraws(options?: { limit?: number }): Promise<DrawRecord[]>;
  updateDelivery(drawId: string, userId: string, patch: Partial<Delivery>): Promise<Delivery | undefined>;
  deliveryOf(drawId: string, userId: string): Delivery | undefined;
}

/** What Fourthwall says of one prize. */
export interface PrizeStatus {
  redeemed: boolean;
  redeemedAt?: string;
  orderFriendlyId?: string;
  /** Set when it can no longer be redeemed (its status), with when when Fourthwall says (a link's `cancelledAt`). */
  closedAs?: PrizeClosure;
  closedAt?: string;
}

/** Reads the status of a draw's prizes (one API call per draw), keyed by gift id. */
export interface RedemptionPort {
  statuses(record: DrawRecord): Promise<Map<string, PrizeStatus>>;
}

/** Whispers from the bot account (src/twitch/whispers.ts). */
export interface WhisperPort {
  /** True when the token may whisper (`user:manage:whispers`). */
  available(): boolean;
  /** Queues one whisper; resolves true once Twitch accepted it, false when refused for good (never dropped for limits). */
  send(toUserId: string, text: string): Promise<boolean>;
}

export interface DeliverySettings {
  /** Whisper each winner (when the token allows it). */
  whispers: boolean;
  /** Seconds between redemption polls while a prize waits (0: only the ORDER_PLACED webhook). */
  pollSeconds: number;
  reminders: {
    /** Remind by whisper (when whispers are available). */
    whisper: boolean;
    /** Remind by a chat mention pointing to the claim page (when there is one and no whisper went). */
    chat: boolean;
    /** Remind at the next stream start. */
    atStreamStart: boolean;
    /** Also remind this many hours after the announcement (0: off). */
    afterHours: number;
  };
}

const defaultDeliverySettings: DeliverySettings = {
  whispers: true,
  pollSeconds: 60,
  reminders: { whisper: true, chat: true, atStreamStart: true, afterHours: 0 },
};

/** One prize on the dashboard's "prizes waiting" list (and the claim page, with its link). */
export interface PrizeView {
  drawId: string;
  kind: DrawRecord['kind'];
  product: string;
  userId: string;
  login: string;
  displayName: string;
  closedAt?: string;
  giftId?: string;
  /** Secret: for the winner's own claim page and the streamer's dashboard only. */
  link?: string;
  label: DeliveryLabel;
  delivery: Delivery;
  /** A replaced winner's kept link (see the contract): never reminded by the bot. */
  replaced?: true;
}

export interface DeliveryTrackerDeps {
  store: DeliveryStore;
  events: EventEmitter<GiveawayEventMap>;
  chat: Pick<ChatPort, 'say'>;
  messages: Pick<GiveawaySettings['messages'], 'deliveryReminder'>;
  clock: Clock;
  logger: Logger;
  settings?: DeliverySettings;
  /** `<GIFTDROP_PUBLIC_URL>/claim`, when the claim page is on. */
  claimUrl?: string;
  whispers?: WhisperPort;
  redemption?: RedemptionPort;
}

/** The webhook types the tracker acts on (a redeemed gift or link places an order with `source.giftId`). */
export const DELIVERY_WEBHOOK_TYPES = ['ORDER_PLACED'] as const;

/** How links reach the winners: a whisper when whispers are on and allowed, else the claim page, else the streamer. */
export function privateDeliveryVia(whispersOn: boolean, claimUrl: string | undefined): PrivateDelivery {
  if (whispersOn) return { via: 'whisper', ...(claimUrl ? { claimUrl } : {}) };
  if (claimUrl) return { via: 'claim', claimUrl };
  return { via: 'streamer' };
}

/** Status calls one poll round may make (one per draw). */
const MAX_POLLS_PER_ROUND = 10;

/** A prize announced less than this long before a stream start is not reminded at that start. */
const REMIND_MIN_AGE_MS = 10 * 60_000;

const iso = (ms: number) => new Date(ms).toISOString();

/** `changed`: a winner's delivery state was stored (the dashboard and tests wait on it). */
export interface DeliveryEvents {
  changed: [drawId: string, userId: string, delivery: Delivery];
}

export class DeliveryTracker extends EventEmitter<DeliveryEvents> {
  readonly settings: DeliverySettings;
  private readonly log: Logger;
  private timer: TimerHandle | undefined;
  private polling: Promise<void> | undefined;
  private stopped = false;
  /** Whispers queued this run, by draw:user (so a restart re-queues only what never went out). */
  private readonly whispering = new Set<string>();
  private readonly reminding = new Set<string>();
  /** When each draw's status was last read (the poll asks the least recent first). */
  private readonly lastPolled = new Map<string, number>();
  /** Work that writes the delivery state (announcements, single changes) until it settles. */
  private readonly writing = new Set<Promise<unknown>>();
  private readonly onWinners = (record: DrawRecord, winners: Winner[]) =>
    void this.tracked(this.announced(record, winners));

  constructor(private readonly d: DeliveryTrackerDeps) {
    super();
    this.settings = d.settings ?? defaultDeliverySettings;
    this.log = d.logger.child({ module: 'delivery' });
  }

  /** How the winners line says links reach the winners (the engine's `privateDelivery`). */
  via(): PrivateDelivery {
    return privateDeliveryVia(this.whispersOn(), this.d.claimUrl);
  }

  private whispersOn(): boolean {
    return this.settings.whispers && (this.d.whispers?.available() ?? false);
  }

  /** Stores a change and tells listeners. */
  private set(drawId: string, userId: string, patch: Partial<Delivery>): Promise<Delivery | undefined> {
    return this.tracked(
      this.d.store.updateDelivery(drawId, userId, patch).then((next) => {
        if (next) this.emit('changed', drawId, userId, next);
        return next;
      }),
    );
  }

  /** Counts `p` as a write in flight (see `idle`) until it settles; returns `p`. */
  private tracked<T>(p: Promise<T>): Promise<T> {
    this.writing.add(p);
    const done = () => void this.writing.delete(p);
    p.then(done, done);
    return p;
  }

  /** Listens to the engine; starts the poll if a prize waits. */
  async start(): Promise<void> {
    this.d.events.on('winners', this.onWinners);
    if ((await this.waiting()).length) this.schedule();
  }

  /** Once the bot token is validated (whispers known): queues the whispers a restart left unsent. */
  async resumeWhispers(): Promise<void> {
    if (!this.whispersOn()) return;
    for (const p of await this.waiting()) {
      if (!p.replaced && !p.delivery.whisperedAt && !p.delivery.whisperProblem && !p.delivery.claimPageOpenedAt)
        void this.whisper(p, 'prize');
    }
  }

  stop(): void {
    this.stopped = true;
    this.d.events.off('winners', this.onWinners);
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** True while the next redemption poll is scheduled (only while a prize waits). */
  pollArmed(): boolean {
    return this.timer !== undefined;
  }

  /**
   * Resolves once a running poll (if any) and every write of the delivery state in flight (the
   * winners just announced, a whisper's outcome) are over: nothing writes `delivery.json` after
   * it, unless something new starts. Whispers still queued behind Twitch's limits are not waited
   * for (after `stop` their outcome is not recorded).
   */
  async idle(): Promise<void> {
    await this.polling;
    while (this.writing.size) await Promise.allSettled([...this.writing]);
  }

  private async announced(record: DrawRecord, winners: Winner[]): Promise<void> {
    const now = this.d.clock.now();
    for (const w of winners) {
      if (!w.giftId && !w.redeemUrl) continue;
      // Already tracked (the same winners again after a reroll of another one): nothing new.
      if (w.delivery || this.d.store.deliveryOf(record.id, w.userId)) continue;
      try {
        const delivery = await this.set(record.id, w.userId, { announcedAt: iso(now) });
        if (!delivery) continue;
        const view = toView(record, w, delivery);
        if (this.whispersOn()) void this.whisper(view, 'prize'); // (it logs its own failure)
      } catch (err) {
        this.log.error({ err, drawId: record.id, userId: w.userId }, 'could not record a prize delivery');
      }
    }
    this.schedule();
  }

  /** The text of a whisper: the claim page (preferred) or the link; at most 500 characters. */
  private whisperText(p: PrizeView, kind: 'prize' | 'reminder'): string | undefined {
    const product = p.product.replace(/[\r\n]+/g, ' ').slice(0, 120);
    const where = this.d.claimUrl ? `${this.d.claimUrl} (log in with Twitch)` : p.link;
    if (!where) return undefined;
    const text =
      kind === 'prize'
        ? `You won ${product}! Get your prize here: ${where}`
        : `Reminder: your ${product} is still waiting for you. Get it here: ${where}`;
    return text.slice(0, 500);
  }

  /** Queues one whisper (the port waits past Twitch's limits); records what Twitch said. */
  private whisper(p: PrizeView, kind: 'prize' | 'reminder'): Promise<boolean> {
    const key = `${kind}:${p.drawId}:${p.userId}`;
    const text = this.whisperText(p, kind);
    if (!text || !this.d.whispers || this.whispering.has(key)) return Promise.resolve(false);
    this.whispering.add(key);
    return this.d.whispers.send(p.userId, text).then(
      async (ok) => {
        const at = iso(this.d.clock.now());
        const patch: Partial<Delivery> = ok
          ? kind === 'prize'
            ? { whisperedAt: at }
            : { remindedAt: at, remindedBy: 'whisper' }
          : { whisperProblem: 'Twitch refused the whisper' };
        if (!this.stopped)
          await this.set(p.drawId, p.userId, patch).catch((err) =>
            this.log.error({ err }, 'could not record a whisper'),
          );
        return ok;
      },
      (err: unknown) => {
        this.log.warn({ err, drawId: p.drawId, userId: p.userId }, 'whisper failed');
        return false;
      },
    );
  }

  /** Every tracked prize that is neither redeemed nor closed by the shop yet, oldest first. */
  async waiting(): Promise<PrizeView[]> {
    const out: PrizeView[] = [];
    for (const r of await this.d.store.listDraws()) {
      if (r.status !== 'finished') continue;
      for (const { holder, replaced } of prizeHolders(r))
        if (isWaiting(holder)) out.push(toView(r, holder, holder.delivery!, replaced));
    }
    return out.sort((a, b) => a.delivery.announcedAt.localeCompare(b.delivery.announcedAt));
  }

  /** The prizes of one viewer (finished draws they won with a link), newest first. */
  async prizesFor(userId: string): Promise<PrizeView[]> {
    const out: PrizeView[] = [];
    for (const r of await this.d.store.listDraws()) {
      if (r.status !== 'finished') continue;
      for (const { holder: w, replaced } of prizeHolders(r)) {
        if (w.userId !== userId || !w.redeemUrl) continue;
        out.push(toView(r, w, w.delivery ?? { announcedAt: r.closedAt ?? r.openedAt }, replaced));
      }
    }
    return out;
  }

  /** The viewer saw their prizes on the claim page: `claimPageOpenedAt`. */
  async opened(userId: string, prizes: readonly PrizeView[]): Promise<void> {
    const at = iso(this.d.clock.now());
    for (const p of prizes) {
      if (p.delivery.claimPageOpenedAt || p.delivery.redeemedAt || p.delivery.closedAt) continue;
      // announcedAt is the stored one, or the draw's close for a prize from before delivery was tracked.
      await this.set(p.drawId, userId, { announcedAt: p.delivery.announcedAt, claimPageOpenedAt: at });
    }
    this.schedule();
  }

  /** ORDER_PLACED with `source.giftId`: the prize with that gift id is redeemed (`redeemedAt`, `orderFriendlyId`). */
  async redeemed(giftId: string, order: { friendlyId?: string; createdAt?: string }): Promise<boolean> {
    for (const p of await this.waiting()) {
      if (p.giftId === giftId) {
        await this.mark(p, { redeemed: true, redeemedAt: order.createdAt, orderFriendlyId: order.friendlyId });
        return true;
      }
    }
    return false;
  }

  private async mark(p: PrizeView, status: PrizeStatus): Promise<void> {
    await this.set(p.drawId, p.userId, {
      redeemedAt: this.timeOr(status.redeemedAt),
      ...(status.orderFriendlyId ? { orderFriendlyId: status.orderFriendlyId } : {}),
    });
    this.log.info({ drawId: p.drawId, userId: p.userId, login: p.login }, 'prize redeemed');
    await this.stopPollIfDone();
  }

  /** Fourthwall will no longer let prize `p` be redeemed: it stops waiting. */
  private async close(p: PrizeView, closedAs: PrizeClosure, closedAt: string | undefined): Promise<void> {
    await this.set(p.drawId, p.userId, { closedAt: this.timeOr(closedAt), closedAs });
    this.log.info(
      { drawId: p.drawId, userId: p.userId, login: p.login, closedAs },
      'prize no longer redeemable at Fourthwall',
    );
    await this.stopPollIfDone();
  }

  /** `at` when it is a time, else now. */
  private timeOr(at: string | undefined): string {
    return at && Number.isFinite(Date.parse(at)) ? at : iso(this.d.clock.now());
  }

  private async stopPollIfDone(): Promise<void> {
    // The last prize redeemed or closed: nothing left to poll for.
    if ((await this.waiting()).length === 0) {
      this.timer?.cancel();
      this.timer = undefined;
    }
  }

  /** Arms the poll timer when something waits and none is armed. */
  private schedule(): void {
    if (this.stopped || this.timer) return;
    const every = this.settings.pollSeconds;
    const remindAfter = this.settings.reminders.afterHours;
    if (every <= 0 && remindAfter <= 0) return;
    const ms = every > 0 ? every * 1000 : 60_000;
    this.timer = this.d.clock.setTimeout(() => {
      this.timer = undefined;
      this.polling = this.tick().finally(() => {
        this.polling = undefined;
      });
    }, ms);
  }

  /**
   * One poll round: statuses of the draws with waiting prizes (one status call per draw, at most
   * MAX_POLLS_PER_ROUND, least recently asked first, through the Fourthwall client's own budget:
   * `redeemedAt`, or `closedAt` + `closedAs` for a prize Fourthwall closed); reminders that are
   * due. Re-arms while anything waits; stops once every prize is redeemed or closed.
   */
  async tick(): Promise<void> {
    let waiting = await this.waiting();
    if (waiting.length && this.settings.pollSeconds > 0 && this.d.redemption) await this.poll(waiting);
    waiting = await this.waiting();
    const afterMs = this.settings.reminders.afterHours * 3_600_000;
    if (afterMs > 0) {
      const due = this.d.clock.now() - afterMs;
      await this.remind(waiting.filter((p) => !p.replaced && Date.parse(p.delivery.announcedAt) <= due));
    }
    if (waiting.length && !this.stopped) this.schedule();
  }

  private async poll(waiting: readonly PrizeView[]): Promise<void> {
    const byDraw = new Map<string, PrizeView[]>();
    for (const p of waiting) byDraw.set(p.drawId, [...(byDraw.get(p.drawId) ?? []), p]);
    const records = new Map((await this.d.store.listDraws()).map((r) => [r.id, r]));
    for (const id of this.lastPolled.keys()) if (!byDraw.has(id)) this.lastPolled.delete(id);
    // At most MAX_POLLS_PER_ROUND calls a round, the draws asked least recently first, so a long
    // list never takes the Fourthwall budget a draw's finish call needs.
    const due = [...byDraw]
      .sort((a, b) => (this.lastPolled.get(a[0]) ?? 0) - (this.lastPolled.get(b[0]) ?? 0))
      .slice(0, MAX_POLLS_PER_ROUND);
    for (const [drawId, prizes] of due) {
      this.lastPolled.set(drawId, this.d.clock.now());
      const record = records.get(drawId);
      if (!record || this.stopped) continue;
      let statuses: Map<string, PrizeStatus>;
      try {
        statuses = await this.d.redemption!.statuses(record);
      } catch (err) {
        this.log.warn(
          { err, drawId },
          "could not read the prizes' status from Fourthwall; trying again at the next poll",
        );
        continue;
      }
      for (const p of prizes) {
        const s = p.giftId ? statuses.get(p.giftId) : undefined;
        if (s?.redeemed) await this.mark(p, s);
        else if (s?.closedAs) await this.close(p, s.closedAs, s.closedAt);
      }
    }
  }

  /**
   * The next stream started: ONE reminder per waiting prize announced a while before: a whisper
   * when whispers are available and `reminders.whisper` is on, else a chat mention pointing to the
   * claim page when there is one and `reminders.chat` is on (`remindedAt`/`remindedBy`).
   */
  async streamStarted(): Promise<void> {
    if (!this.settings.reminders.atStreamStart) return;
    const due = this.d.clock.now() - REMIND_MIN_AGE_MS;
    const waiting = await this.waiting();
    await this.remind(waiting.filter((p) => !p.replaced && Date.parse(p.delivery.announcedAt) <= due));
  }

  /**
   * Reminds each prize at most once, one way: a whisper when whispers are on, unless the winner
   * was whispered before and never opened the claim page (that whisper may have been dropped
   * silently: a whisper is no proof), then a chat mention pointing to the claim page (one line
   * per draw); without a claim page, a whisper is the only way. Returns how many were reminded.
   */
  async remind(prizes: readonly PrizeView[]): Promise<number> {
    let sent = 0;
    const todo = prizes.filter((p) => !p.delivery.remindedAt && !this.reminding.has(`${p.drawId}:${p.userId}`));
    const byChat = new Map<string, PrizeView[]>();
    for (const p of todo) {
      this.reminding.add(`${p.drawId}:${p.userId}`);
      const chatPossible = this.settings.reminders.chat && !!this.d.claimUrl;
      const whisperMayBeLost =
        (!!p.delivery.whisperedAt && !p.delivery.claimPageOpenedAt) || !!p.delivery.whisperProblem;
      if (this.settings.reminders.whisper && this.whispersOn() && !(whisperMayBeLost && chatPossible)) {
        void this.whisper(p, 'reminder');
        sent++;
        continue;
      }
      if (chatPossible) byChat.set(p.drawId, [...(byChat.get(p.drawId) ?? []), p]);
      else this.reminding.delete(`${p.drawId}:${p.userId}`);
    }
    for (const group of byChat.values()) {
      const line = render(this.d.messages.deliveryReminder, {
        winners: mentionList(group.map((p) => p.login)),
        product: group[0]!.product,
        claimUrl: this.d.claimUrl,
      });
      this.d.chat.say(line, { priority: 'normal' });
      const at = iso(this.d.clock.now());
      for (const p of group) await this.set(p.drawId, p.userId, { remindedAt: at, remindedBy: 'chat' });
      sent += group.length;
    }
    return sent;
  }
}

function toView(r: DrawRecord, w: Winner, delivery: Delivery, replaced = false): PrizeView {
  return {
    drawId: r.id,
    kind: r.kind,
    product: r.offer.name,
    userId: w.userId,
    login: w.login,
    displayName: w.displayName,
    ...(r.closedAt ? { closedAt: r.closedAt } : {}),
    ...(w.giftId ? { giftId: w.giftId } : {}),
    ...(w.redeemUrl ? { link: w.redeemUrl } : {}),
    label: deliveryLabel(delivery),
    delivery,
    ...(replaced ? { replaced: true as const } : {}),
  };
}
