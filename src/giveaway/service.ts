/**
 * GiveawayService: the giveaway engine. It opens draws (Fourthwall gift draws, gift purchases,
 * link giveaways), collects `!enter`, closes them on time or on command, applies eligibility and
 * luck, picks winners with the provably fair sequence, runs claim windows and rerolls, finishes
 * draws at Fourthwall exactly once, creates and delivers links, and keeps every draw journaled.
 *
 * Contract:
 * - Every state change of a draw is made synchronously (DrawSession.phase) before any await, so a
 *   timer and a command racing for the same draw can never both act.
 * - Winners are persisted (finishInFlight) before Fourthwall is asked to finish a draw; after a
 *   crash the draw is reconciled with GET draw and never finished with other winners.
 * - Giveaway and gift links go to the operator console and the history, to chat only when
 *   `links.publicInChat`, and never to the log.
 * - Chat lines: announcements normal priority, winners/failures high, reminders and batched
 *   acknowledgements low and stale-droppable; never one line per entrant.
 * Does not: parse webhooks or chat (callers hand over domain objects), check command permissions
 * (commands/ does), or own the storage format.
 */
import { EventEmitter } from 'node:events';
import type { TimerHandle } from '../shared/clock.js';
import type { ChatMessage } from '../shared/chat.js';
import type { Logger } from '../logging/index.js';
import { snapshot, type EngineContext, type GiveawayDeps, type GiveawayEventMap } from './context.js';
import { applyEligibility, isChannelOrBot, ticketWeight, type ChannelIdentity } from './eligibility.js';
import { FAIRNESS_ALGORITHM, freezeEntrants, newSeed } from './fairness.js';
import { hasWinners, mapFourthwallWinners, runFinish } from './gift-draw.js';
import { createLinks, resolveProduct } from './link-giveaway.js';
import { Announcer } from './announcer.js';
import { render } from './messages.js';
import { firstPicks, replaceWinner } from './picks.js';
import type {
  DrawRecord,
  Entrant,
  GiftDrawInfo,
  GiftPurchaseInfo,
  Winner,
} from './ports.js';
import { DrawRegistry } from './registry.js';
import { EngineRuntime } from './runtime.js';
import { DrawSession } from './session.js';
import type { GiveawaySettings } from './settings.js';

/** Result of a moderator action; `message` is the reply to give when it did not happen. */
export type ActionResult = { ok: true; id?: string } | { ok: false; message: string };

/** Time kept free after a claim window so the finish call still fits Fourthwall's deadline. */
const FINISH_RESERVE_MS = 15_000;
/** How long a link giveaway waits for Fourthwall after its first failure. */
const MIN_LINK_DEADLINE_MS = 1_000;

export class GiveawayService {
  /** Engine events (draw-opened, draw-closed, draw-finished, draw-failed, draw-cancelled, winners, ...). */
  readonly events = new EventEmitter<GiveawayEventMap>();
  private readonly ctx: EngineContext;
  private readonly log: Logger;
  private readonly settings: GiveawaySettings;
  private readonly announce: Announcer;
  private readonly runtime: EngineRuntime;
  private readonly draws: DrawRegistry;
  private ackTimer: TimerHandle | undefined;
  private linkStarting = false;

  constructor(deps: GiveawayDeps) {
    this.settings = deps.settings;
    this.log = deps.logger.child({ module: 'giveaway' });
    this.announce = new Announcer(deps.chat, deps.operator, deps.settings, deps.clock);
    const runtime = new EngineRuntime(deps.clock);
    this.runtime = runtime;
    this.draws = new DrawRegistry(deps.repo);
    this.ctx = {
      ...deps,
      logger: this.log,
      events: this.events,
      isStopped: () => runtime.isStopped(),
      sleep: (ms) => runtime.sleep(ms),
    };
  }

  // -------------------------------------------------------------------------------------------
  // Lifecycle
  // -------------------------------------------------------------------------------------------

  /** Restores draws left open or drawing by an earlier run. */
  async start(): Promise<void> {
    this.runtime.resume();
    const open = await this.ctx.repo.openDraws();
    for (const { record, entrants } of open) {
      if (this.draws.active.has(record.id)) continue;
      this.restore(record, entrants);
    }
  }

  /** Cancels every timer and waits for work in flight; draws stay journaled for the next start. */
  async stop(): Promise<void> {
    for (const s of this.draws.active.values()) s.clearTimers();
    this.ackTimer?.cancel();
    this.ackTimer = undefined;
    this.runtime.halt();
    await this.whenIdle();
    this.draws.active.clear();
    await this.ctx.repo.flush();
  }

  /** Resolves once no asynchronous work of the engine is in flight (timers may still be set). */
  whenIdle(): Promise<void> {
    return this.runtime.whenIdle();
  }

  /** Draws open for entries or being drawn. */
  openDrawCount(): number {
    return this.draws.active.size;
  }

  // -------------------------------------------------------------------------------------------
  // Fourthwall events
  // -------------------------------------------------------------------------------------------

  /** A Fourthwall gift draw started (GIFT_DRAW_STARTED): opens it for entries (once per draw id). */
  handleGiftDrawStarted(draw: GiftDrawInfo, eventId?: string): Promise<void> {
    if (this.settings.giftFlow !== 'draw') {
      this.log.info({ drawId: draw.id }, 'gift draw ignored: the bot runs the purchase flow');
      return Promise.resolve();
    }
    const now = this.ctx.clock.now();
    const created = Date.parse(draw.createdAt);
    const startMs = Number.isFinite(created) ? created : now;
    const closesAtMs = startMs + Math.max(0, draw.durationSeconds) * 1000;
    const available = draw.gifts.filter((g) => g.status === 'AVAILABLE');
    return this.openDraw(draw.id, closesAtMs, () => ({
      kind: 'gift-draw',
      source: {
        drawId: draw.id,
        ...(draw.giveawayId ? { giveawayId: draw.giveawayId } : {}),
        ...(eventId ? { eventId } : {}),
      },
      offer: { id: draw.offer.id, name: draw.offer.name },
      gifts: available.length,
      giftIds: available.map((g) => g.id),
      supporter: { username: draw.username, message: draw.message },
    }));
  }

  /** A gift purchase (GIFT_PURCHASE, purchase flow): runs one entry window for its gifts. */
  async handleGiftPurchase(purchase: GiftPurchaseInfo, eventId?: string): Promise<void> {
    if (this.settings.giftFlow !== 'purchase') {
      this.log.info({ giftPurchaseId: purchase.id }, 'gift purchase ignored: the bot runs the draw flow');
      return;
    }
    if (this.draws.active.has(purchase.id) || this.draws.opening.has(purchase.id)) return;
    let seconds = this.settings.purchaseEntrySeconds;
    if (this.ctx.shop.giftingEntrySeconds) {
      try {
        const fromShop = await this.ctx.shop.giftingEntrySeconds();
        if (fromShop !== undefined && Number.isFinite(fromShop) && fromShop > 0) seconds = Math.round(fromShop);
      } catch (err) {
        this.log.warn({ err }, 'could not read the gifting entry window; using the configured one');
      }
    }
    const available = purchase.gifts.filter((g) => g.status === 'AVAILABLE' || !g.status);
    await this.openDraw(purchase.id, this.ctx.clock.now() + seconds * 1000, () => ({
      kind: 'gift-purchase',
      source: { giftPurchaseId: purchase.id, giveawayId: purchase.id, ...(eventId ? { eventId } : {}) },
      offer: { id: purchase.offer.id, name: purchase.offer.name },
      gifts: available.length,
      giftIds: available.map((g) => g.id),
      supporter: { username: purchase.username, message: purchase.message },
    }));
  }

  /** A gift draw ended at Fourthwall (GIFT_DRAW_ENDED): brings the record in line, announcing nothing twice. */
  handleGiftDrawEnded(draw: GiftDrawInfo): Promise<void> {
    return this.runtime.track(this.reconcileEnded(draw));
  }

  // -------------------------------------------------------------------------------------------
  // Chat
  // -------------------------------------------------------------------------------------------

  /** `!enter`: joins every open draw once per user id. Returns how many draws it joined. */
  enter(msg: ChatMessage): number {
    if (this.runtime.isStopped() || msg.self) return 0;
    if (isChannelOrBot(msg, this.identity())) return 0;
    let joined = 0;
    for (const s of this.draws.active.values()) {
      if (s.phase !== 'open' || s.entrants.has(msg.userId)) continue;
      const entrant: Entrant = {
        userId: msg.userId,
        login: msg.login.toLowerCase(),
        displayName: msg.displayName || msg.login,
        weight: ticketWeight(msg.roles, this.settings.luck),
        roles: { ...msg.roles },
        enteredAt: this.ctx.clock.now(),
      };
      s.addEntrant(entrant);
      joined += 1;
      try {
        this.ctx.repo.appendEntrant(s.id, entrant);
      } catch (err) {
        this.log.error({ drawId: s.id, userId: entrant.userId, err }, 'could not journal an entrant (kept in memory)');
      }
    }
    if (joined) this.scheduleAck();
    return joined;
  }

  /** `!claim`: a pending winner confirms. True when it counted. */
  claim(msg: ChatMessage): boolean {
    let counted = false;
    for (const s of [...this.draws.active.values()]) {
      if (s.phase !== 'claim') continue;
      const w = s.record.winners.find((x) => x.userId === msg.userId && x.claimed === false);
      if (!w) continue;
      w.claimed = true;
      counted = true;
      this.log.info({ drawId: s.id, login: w.login }, 'winner claimed');
      this.announce.say('claimed', { winner: `@${w.login}`, product: s.record.offer.name }, 'normal');
      this.events.emit('claimed', snapshot(s.record), { ...w });
      if (s.record.winners.every((x) => x.claimed !== false)) {
        s.clearTimers();
        this.endClaim(s);
      } else {
        void this.runtime.track(this.persistQuietly(s));
      }
    }
    return counted;
  }

  /** `!giveaway`: one line about what is open. */
  status(): string {
    const lines = [...this.draws.active.values()].map((s) => this.announce.statusLine(s)).filter((l): l is string => !!l);
    return lines.length ? lines.join(' | ') : render(this.settings.messages.statusNone, {});
  }

  // -------------------------------------------------------------------------------------------
  // Moderator actions
  // -------------------------------------------------------------------------------------------

  /** `!giveaway start`: a link giveaway of the product `query` names (id, slug or name). */
  async startLinkGiveaway(by: ChatMessage, query: string, winners?: number, seconds?: number): Promise<ActionResult> {
    const links = this.settings.links;
    const running = [...this.draws.active.values()].find((s) => s.record.kind === 'link-giveaway');
    if (running || this.linkStarting) {
      return { ok: false, message: `A link giveaway is already running${running ? ` (${running.record.offer.name})` : ''}.` };
    }
    const count = winners ?? links.defaultWinners;
    const secs = seconds ?? links.defaultSeconds;
    if (!Number.isInteger(count) || count < 1 || count > links.maxWinners) {
      return { ok: false, message: `Winners must be a whole number from 1 to ${links.maxWinners}.` };
    }
    if (!Number.isInteger(secs) || secs < 5 || secs > links.maxSeconds) {
      return { ok: false, message: `Seconds must be a whole number from 5 to ${links.maxSeconds}.` };
    }
    if (!query.trim()) return { ok: false, message: 'Say which product: a product id, slug or name.' };
    this.linkStarting = true;
    try {
      const match = await this.runtime.track(resolveProduct(this.ctx.shop, query));
      if (!match.ok) {
        const q = query.trim();
        if (match.reason === 'ambiguous') {
          const names = match.candidates.map((p) => `${p.name} (${p.slug})`).join(', ');
          return { ok: false, message: render('Several products match "{q}": {names}. Use the slug.', { q, names }) };
        }
        if (match.reason === 'unavailable') {
          return { ok: false, message: 'The shop could not be reached to look the product up; try again.' };
        }
        return { ok: false, message: render('No product matches "{q}".', { q }) };
      }
      const product = match.product;
      const id = `lnk_${this.ctx.random.bytes(8).toString('hex')}`;
      await this.openDraw(id, this.ctx.clock.now() + secs * 1000, () => ({
        kind: 'link-giveaway',
        source: {},
        offer: { id: product.id, name: product.name },
        gifts: count,
        startedBy: { userId: by.userId, login: by.login },
      }));
      return this.draws.active.has(id) ? { ok: true, id } : { ok: false, message: 'The giveaway could not be opened.' };
    } finally {
      this.linkStarting = false;
    }
  }

  /** `!giveaway end`: closes every open draw now and draws. Returns how many it closed. */
  endNow(): number {
    let closed = 0;
    for (const s of [...this.draws.active.values()]) if (this.close(s, 'command')) closed += 1;
    return closed;
  }

  /** `!giveaway cancel`: cancels the open link giveaway (no links are created for it). */
  async cancel(): Promise<ActionResult> {
    const s = [...this.draws.active.values()].find((x) => x.record.kind === 'link-giveaway');
    if (!s) return { ok: false, message: 'No link giveaway is open.' };
    if (s.phase !== 'open' && s.phase !== 'claim') {
      return { ok: false, message: 'Too late to cancel: the links are being created.' };
    }
    s.phase = 'done';
    s.clearTimers();
    const r = s.record;
    r.status = 'cancelled';
    r.closedAt = this.isoNow();
    s.reveal();
    this.draws.retire(s);
    this.log.info({ drawId: s.id }, 'link giveaway cancelled');
    this.announce.say('cancelled', { product: r.offer.name }, 'normal');
    this.events.emit('draw-cancelled', snapshot(r));
    await this.runtime.track(this.persistQuietly(s));
    return { ok: true, id: s.id };
  }

  /** `!giveaway reroll <login>`: replaces that winner by the next pick among the other entrants. */
  async reroll(login: string, by: ChatMessage): Promise<ActionResult> {
    const name = login.trim().replace(/^@/, '').toLowerCase();
    if (!name) return { ok: false, message: 'Say whose win to reroll: !giveaway reroll <login>.' };
    const s = await this.runtime.track(this.draws.findByWinner(name));
    if (!s) return { ok: false, message: render('{name} is not a winner of a recent giveaway.', { name }) };
    const r = s.record;
    if (s.phase === 'picking' || s.phase === 'finalizing') {
      return { ok: false, message: 'The winners are being confirmed right now; try again in a moment.' };
    }
    if (s.phase === 'done' && r.kind === 'gift-draw') {
      return { ok: false, message: 'That gift draw is already settled at Fourthwall; its winners cannot change.' };
    }
    if (s.phase === 'done' && r.status === 'cancelled') return { ok: false, message: 'That giveaway was cancelled.' };
    const old = r.winners.find((w) => w.login.toLowerCase() === name)!;
    const inClaim = s.phase === 'claim';
    const swap = replaceWinner(r, s.seed, old.userId, {
      at: this.isoNow(),
      reason: 'command',
      byUserId: by.userId,
      displayNameOf: (id) => s.displayNameOf(id),
      claimPending: inClaim,
    });
    if (!swap) {
      this.announce.say('rerollExhausted', { old: `@${old.login}`, product: r.offer.name }, 'normal');
      return { ok: false, message: render('Nobody is left to replace {name}.', { name }) };
    }
    this.announceReroll(s, swap.old, swap.winner, 'rerolled by a moderator');
    if (inClaim) {
      const claimMs = this.settings.claim.seconds * 1000;
      const deadline = Math.max(Date.parse(r.claim!.deadline), this.ctx.clock.now() + claimMs);
      if (this.claimFits(s, deadline - this.ctx.clock.now())) {
        this.openClaimWindow(s, deadline, [swap.winner]);
      }
      await this.runtime.track(this.persistQuietly(s));
      return { ok: true, id: s.id };
    }
    if (swap.winner.redeemUrl) this.announce.deliverLinks(s, [swap.winner]);
    if (r.status === 'finished') this.events.emit('winners', snapshot(r), r.winners.map((w) => ({ ...w })));
    await this.runtime.track(this.persistQuietly(s));
    return { ok: true, id: s.id };
  }

  /** `!giveaway retry`: delivers the links of the latest giveaway whose links failed. */
  async retryLinks(): Promise<ActionResult> {
    const s = await this.runtime.track(this.draws.findUndelivered());
    if (!s) return { ok: false, message: 'No giveaway is waiting for links.' };
    if (s.phase !== 'done') return { ok: false, message: 'The links are being created right now.' };
    const r: DrawRecord = s.record;
    s.phase = 'finalizing';
    r.status = 'drawing';
    delete r.failure;
    this.draws.unretire(s);
    await this.runtime.track(this.finalize(s));
    const after: DrawRecord['status'] = s.record.status;
    return after === 'finished' ? { ok: true, id: s.id } : { ok: false, message: 'The links could not be created yet.' };
  }

  // -------------------------------------------------------------------------------------------
  // Opening
  // -------------------------------------------------------------------------------------------

  private openDraw(
    id: string,
    closesAtMs: number,
    build: () => Pick<DrawRecord, 'kind' | 'source' | 'offer' | 'gifts'> & Partial<DrawRecord>,
  ): Promise<void> {
    if (this.runtime.isStopped() || this.draws.active.has(id) || this.draws.opening.has(id)) return Promise.resolve();
    this.draws.opening.add(id);
    return this.runtime.track(
      (async () => {
        try {
          if (await this.ctx.repo.getDraw(id)) {
            this.log.info({ drawId: id }, 'draw already known: ignored');
            return;
          }
          const { seed, commitment } = newSeed(this.ctx.random);
          const now = this.ctx.clock.now();
          const record: DrawRecord = {
            id,
            status: 'open',
            openedAt: new Date(now).toISOString(),
            closesAt: new Date(Math.max(now, closesAtMs)).toISOString(),
            entrants: 0,
            winners: [],
            fairness: { commitment, algorithm: FAIRNESS_ALGORITHM },
            pendingSeed: seed.toString('hex'),
            ...build(),
          };
          if (record.gifts < 1) {
            this.log.warn({ drawId: id }, 'nothing to give away (no available gifts): not opened');
            this.ctx.operator.notify(`Draw ${id} (${record.offer.name}) has no available gifts; not opened.`);
            return;
          }
          const s = new DrawSession(record, seed);
          await s.persist(this.ctx.repo);
          if (this.runtime.isStopped()) return;
          this.draws.active.set(id, s);
          this.log.info({ drawId: id, kind: record.kind, gifts: record.gifts }, 'draw opened');
          this.announce.opened(s);
          this.events.emit('draw-opened', snapshot(record));
          this.scheduleOpen(s);
        } catch (err) {
          this.log.error({ drawId: id, err }, 'could not open the draw');
          this.ctx.operator.notify(`Could not open draw ${id}: the draw journal could not be written.`);
        } finally {
          this.draws.opening.delete(id);
        }
      })(),
    );
  }

  /** Close timer and reminders of an open session. */
  private scheduleOpen(s: DrawSession): void {
    const clock = this.ctx.clock;
    const now = clock.now();
    const closes = s.closesAtMs;
    s.schedule(clock, closes, () => void this.close(s, 'timer'));
    const rem = this.settings.reminders;
    let half: number | undefined;
    if (rem.halfTime) {
      const at = Math.round((Date.parse(s.record.openedAt) + closes) / 2);
      if (at > now && closes - at >= 5_000) {
        half = at;
        s.schedule(clock, at, () => this.remind(s));
      }
    }
    if (rem.nearEndSeconds > 0) {
      const at = closes - rem.nearEndSeconds * 1000;
      if (at > now && (half === undefined || at - half >= 5_000)) s.schedule(clock, at, () => this.remind(s));
    }
  }

  private remind(s: DrawSession): void {
    if (s.phase === 'open') this.announce.reminder(s);
  }

  private scheduleAck(): void {
    const every = this.settings.reminders.ackEverySeconds;
    if (every <= 0 || this.ackTimer) return;
    this.ackTimer = this.ctx.clock.setTimeout(() => {
      this.ackTimer = undefined;
      for (const s of this.draws.active.values()) {
        if (s.phase !== 'open' || s.unacknowledged === 0) continue;
        this.announce.acknowledged(s);
        s.unacknowledged = 0;
      }
    }, every * 1000);
  }

  // -------------------------------------------------------------------------------------------
  // Closing and picking
  // -------------------------------------------------------------------------------------------

  /** Closes entries of an open draw. The first caller wins; later callers get false. */
  private close(s: DrawSession, trigger: 'timer' | 'command' | 'restore'): boolean {
    if (s.phase !== 'open') return false;
    s.phase = 'picking';
    s.clearTimers();
    s.record.status = 'drawing';
    this.log.info({ drawId: s.id, trigger, entrants: s.entrants.size }, 'entries closed');
    this.events.emit('draw-closed', snapshot(s.record));
    void this.runtime.track(this.pick(s));
    return true;
  }

  private async pick(s: DrawSession): Promise<void> {
    const r = s.record;
    try {
      const hours = this.settings.eligibility.winnerCooldownHours;
      const recentWinners =
        hours > 0 ? await this.ctx.repo.recentWinnerIds(this.ctx.clock.now() - hours * 3_600_000) : new Set<string>();
      const elig = applyEligibility([...s.entrants.values()], this.settings, this.identity(), recentWinners);
      const { frozen, digest } = freezeEntrants(
        elig.eligible.map((e) => ({ userId: e.userId, login: e.login, weight: e.weight })),
      );
      r.rules = elig.rules;
      r.frozenEntrants = frozen;
      r.fairness.entrantsDigest = digest;
      s.reveal();
      r.winners = firstPicks(s.seed, digest, frozen, r.gifts).map(({ entrant, pick }) => ({
        userId: entrant.userId,
        login: entrant.login,
        displayName: s.displayNameOf(entrant.userId) ?? entrant.login,
        pick,
      }));
      this.log.info(
        { drawId: s.id, eligible: frozen.length, winners: r.winners.map((w) => w.login), excluded: elig.excluded },
        'winners picked',
      );
      if (r.winners.length === 0) return await this.finishEmpty(s);
      const claimMs = this.settings.claim.seconds * 1000;
      if (claimMs > 0) {
        if (this.claimFits(s, claimMs)) {
          r.claim = { deadline: new Date(this.ctx.clock.now() + claimMs).toISOString(), rerollsUsed: 0 };
          for (const w of r.winners) w.claimed = false;
          s.phase = 'claim';
          this.openClaimWindow(s, this.ctx.clock.now() + claimMs, r.winners);
          await this.persistQuietly(s);
          return;
        }
        this.log.info({ drawId: s.id }, 'claim window skipped: it does not fit before the Fourthwall deadline');
      }
      s.phase = 'finalizing';
      await this.finalize(s);
    } catch (err) {
      await this.fail(s, 'an internal error while drawing', err);
    }
  }

  private async finishEmpty(s: DrawSession): Promise<void> {
    const r = s.record;
    s.phase = 'done';
    r.status = 'finished';
    r.closedAt = this.isoNow();
    this.draws.retire(s);
    this.log.info({ drawId: s.id, entrants: s.entrants.size }, 'nobody eligible entered');
    this.announce.say('noEntrants', {
      product: r.offer.name,
      gifter: r.supporter?.username || 'Someone',
      entrants: s.entrants.size,
    }, 'normal');
    if (r.kind === 'gift-draw') {
      this.ctx.operator.notify(
        `Nobody eligible entered draw ${r.id} (${r.offer.name}); Fourthwall closes it after its deadline and the gift can be drawn again.`,
      );
    }
    await this.persistQuietly(s);
    this.events.emit('winners', snapshot(r), []);
    this.events.emit('draw-finished', snapshot(r));
  }

  // -------------------------------------------------------------------------------------------
  // Claim window
  // -------------------------------------------------------------------------------------------

  /** A claim window of `ms` fits (gift draws must still be finished before Fourthwall's deadline). */
  private claimFits(s: DrawSession, ms: number): boolean {
    if (s.record.kind !== 'gift-draw') return true;
    return this.ctx.clock.now() + ms + FINISH_RESERVE_MS <= s.fourthwallDeadlineMs;
  }

  private openClaimWindow(s: DrawSession, deadlineMs: number, asked: readonly Winner[]): void {
    const r = s.record;
    r.claim = { deadline: new Date(deadlineMs).toISOString(), rerollsUsed: r.claim?.rerollsUsed ?? 0 };
    s.clearTimers();
    s.schedule(this.ctx.clock, deadlineMs, () => this.onClaimDeadline(s));
    this.announce.claimPrompt(s, asked, deadlineMs);
  }

  private onClaimDeadline(s: DrawSession): void {
    if (s.phase !== 'claim') return;
    const r = s.record;
    const claim = (r.claim ??= { deadline: this.isoNow(), rerollsUsed: 0 });
    const replaced: Winner[] = [];
    for (const w of r.winners.filter((x) => x.claimed === false)) {
      if (claim.rerollsUsed >= this.settings.claim.maxRerolls) break;
      const swap = replaceWinner(r, s.seed, w.userId, {
        at: this.isoNow(),
        reason: 'unclaimed',
        displayNameOf: (id) => s.displayNameOf(id),
        claimPending: true,
      });
      if (!swap) {
        this.announce.say('rerollExhausted', { old: `@${w.login}`, product: r.offer.name }, 'normal');
        break;
      }
      claim.rerollsUsed += 1;
      replaced.push(swap.winner);
      this.announceReroll(s, swap.old, swap.winner, 'did not claim in time');
    }
    const ms = this.settings.claim.seconds * 1000;
    if (replaced.length && this.claimFits(s, ms)) {
      this.openClaimWindow(s, this.ctx.clock.now() + ms, replaced);
      void this.runtime.track(this.persistQuietly(s));
      return;
    }
    const unclaimed = r.winners.filter((x) => x.claimed === false).map((x) => x.login);
    if (unclaimed.length) this.log.info({ drawId: s.id, unclaimed }, 'claim window over: unclaimed winners kept');
    this.endClaim(s);
  }

  private endClaim(s: DrawSession): void {
    if (s.phase !== 'claim') return;
    s.phase = 'finalizing';
    void this.runtime.track(this.finalize(s));
  }

  // -------------------------------------------------------------------------------------------
  // Finalizing: finish at Fourthwall / gift links / giveaway links
  // -------------------------------------------------------------------------------------------

  private async finalize(s: DrawSession, startWith: 'finish' | 'reconcile' = 'finish'): Promise<void> {
    try {
      if (s.record.kind === 'gift-draw') await this.finalizeGiftDraw(s, startWith);
      else if (s.record.kind === 'gift-purchase') await this.finalizePurchase(s);
      else await this.finalizeLinks(s);
    } catch (err) {
      await this.fail(s, 'an internal error while delivering the prizes', err);
    }
  }

  private async finalizeGiftDraw(s: DrawSession, startWith: 'finish' | 'reconcile'): Promise<void> {
    if (startWith === 'finish') {
      s.record.finishInFlight = true;
      try {
        await s.persist(this.ctx.repo);
      } catch (err) {
        s.record.finishInFlight = false;
        return this.fail(s, 'the draw journal could not be written, so the winners were not sent', err);
      }
    }
    const outcome = await runFinish(this.ctx, s, startWith);
    if (outcome.kind === 'stopped' || s.phase !== 'finalizing') return;
    if (outcome.kind === 'failed') return this.fail(s, outcome.reason, outcome.cause);
    await this.applyFourthwall(s, outcome.draw, true);
  }

  /** Marks a gift draw finished with Fourthwall's winners (and their redeem links). */
  private async applyFourthwall(s: DrawSession, draw: GiftDrawInfo, announce: boolean): Promise<void> {
    const r = s.record;
    r.winners = mapFourthwallWinners(r.winners, draw, s.entrants);
    r.status = 'finished';
    r.closedAt = this.isoNow();
    r.finishInFlight = false;
    delete r.failure;
    if (r.frozenEntrants) s.reveal();
    s.phase = 'done';
    this.draws.retire(s);
    this.log.info({ drawId: s.id, winners: r.winners.map((w) => w.login) }, 'draw finished');
    await this.persistQuietly(s);
    if (announce) this.announce.winners(s);
    this.announce.deliverLinks(s, r.winners);
    this.events.emit('winners', snapshot(r), r.winners.map((w) => ({ ...w })));
    this.events.emit('draw-finished', snapshot(r));
  }

  private async finalizePurchase(s: DrawSession): Promise<void> {
    const r = s.record;
    let domain: string | undefined;
    for (let attempt = 0; attempt < 4 && domain === undefined; attempt++) {
      try {
        domain = normaliseDomain(await this.ctx.shop.shopDomain());
      } catch (err) {
        this.log.warn({ drawId: s.id, err }, 'could not read the shop domain');
        if (attempt === 3 || !(await this.ctx.sleep(1000 * 2 ** attempt))) break;
      }
    }
    if (this.runtime.isStopped() && domain === undefined) return;
    if (!domain) return this.fail(s, 'the shop address for the gift links is unknown (retry with !giveaway retry)');
    const giftIds = r.giftIds ?? [];
    const taken = new Set(r.winners.map((w) => w.giftId).filter((x): x is string => !!x));
    const free = giftIds.filter((g) => !taken.has(g));
    for (const w of r.winners) {
      if (w.giftId) continue;
      const giftId = free.shift();
      if (giftId) w.giftId = giftId;
    }
    for (const w of r.winners) if (w.giftId && !w.redeemUrl) w.redeemUrl = `https://${domain}/gifts/${w.giftId}`;
    await this.complete(s);
  }

  private async finalizeLinks(s: DrawSession): Promise<void> {
    const r = s.record;
    const missing = r.winners.filter((w) => !w.redeemUrl);
    if (missing.length) {
      r.finishInFlight = true;
      try {
        await s.persist(this.ctx.repo);
      } catch (err) {
        r.finishInFlight = false;
        return this.fail(s, 'the draw journal could not be written, so no links were created', err);
      }
      const deadline = this.ctx.clock.now() + Math.max(MIN_LINK_DEADLINE_MS, this.settings.links.createDeadlineSeconds * 1000);
      const res = await createLinks(this.ctx, s.id, r.offer.id, missing.length, deadline);
      if (!res.ok) {
        if (res.stopped) return;
        r.finishInFlight = false;
        return this.fail(s, `${res.reason}; the winners are kept, retry with !giveaway retry`);
      }
      r.source.packageId = res.packageId;
      missing.forEach((w, i) => {
        const link = res.links[i];
        if (!link) return;
        w.giftId = link.id;
        w.redeemUrl = link.link;
      });
      r.finishInFlight = false;
      if (missing.some((w) => !w.redeemUrl)) {
        return this.fail(s, 'Fourthwall returned fewer links than winners; retry with !giveaway retry');
      }
    }
    await this.complete(s);
  }

  /** A purchase or link giveaway whose winners all have links: finished, announced, delivered. */
  private async complete(s: DrawSession): Promise<void> {
    const r = s.record;
    r.status = 'finished';
    r.closedAt = this.isoNow();
    r.finishInFlight = false;
    delete r.failure;
    s.phase = 'done';
    this.draws.retire(s);
    this.log.info({ drawId: s.id, winners: r.winners.map((w) => w.login) }, 'draw finished');
    await this.persistQuietly(s);
    this.announce.winners(s);
    this.announce.deliverLinks(s, r.winners);
    this.events.emit('winners', snapshot(r), r.winners.map((w) => ({ ...w })));
    this.events.emit('draw-finished', snapshot(r));
  }

  private async fail(s: DrawSession, reason: string, cause?: unknown): Promise<void> {
    const r = s.record;
    if (s.phase === 'done' && r.status !== 'drawing') return;
    s.phase = 'done';
    s.clearTimers();
    r.status = 'failed';
    r.failure = { reason, at: this.isoNow() };
    r.closedAt = this.isoNow();
    r.finishInFlight = false;
    if (r.frozenEntrants) s.reveal();
    this.draws.retire(s);
    this.log.error({ drawId: s.id, reason, err: cause }, 'draw failed');
    const winners = r.winners.length ? ` Winners: ${r.winners.map((w) => `@${w.login}`).join(', ')}.` : '';
    this.ctx.operator.notify(`Draw ${r.id} (${r.offer.name}) failed: ${reason}.${winners}`);
    this.announce.say('failed', { product: r.offer.name, reason }, 'high');
    await this.persistQuietly(s);
    this.events.emit('draw-failed', snapshot(r));
  }

  private announceReroll(s: DrawSession, old: Winner, winner: Winner, reason: string): void {
    this.log.info({ drawId: s.id, replaced: old.login, winner: winner.login, reason }, 'winner replaced');
    this.announce.rerolled(s, old, winner, reason);
    this.events.emit('rerolled', snapshot(s.record), { ...old }, { ...winner });
  }

  // -------------------------------------------------------------------------------------------
  // Fourthwall GIFT_DRAW_ENDED and restarts
  // -------------------------------------------------------------------------------------------

  private async reconcileEnded(draw: GiftDrawInfo): Promise<void> {
    const active = this.draws.active.get(draw.id);
    if (active) {
      if (active.phase === 'finalizing' || active.phase === 'picking') {
        this.log.info({ drawId: draw.id }, 'draw ended at Fourthwall while being finished: the finish call settles it');
        return;
      }
      active.clearTimers();
      active.phase = 'finalizing';
      if (hasWinners(draw)) return this.applyFourthwall(active, draw, true);
      return this.fail(active, 'Fourthwall closed the draw before the winners were sent');
    }
    const s = this.draws.findRecent(draw.id) ?? (await this.draws.sessionFromRepo(draw.id));
    if (!s) {
      this.log.info({ drawId: draw.id }, 'draw ended for a draw this bot does not know');
      return;
    }
    const r = s.record;
    if (!hasWinners(draw)) return;
    const wasFinished = r.status === 'finished';
    const before = JSON.stringify(r.winners);
    if (!wasFinished) {
      s.phase = 'finalizing';
      r.status = 'drawing';
      return this.applyFourthwall(s, draw, true);
    }
    r.winners = mapFourthwallWinners(r.winners, draw, s.entrants);
    if (JSON.stringify(r.winners) !== before) {
      this.log.info({ drawId: r.id }, 'draw record reconciled with Fourthwall');
      await this.persistQuietly(s);
      const added = r.winners.filter((w) => w.redeemUrl && !before.includes(w.redeemUrl));
      this.announce.deliverLinks(s, added);
    }
  }

  private restore(record: DrawRecord, entrants: Entrant[]): void {
    const seedHex = record.pendingSeed ?? record.fairness.seed;
    if (!seedHex || !/^[0-9a-f]{64}$/i.test(seedHex)) {
      this.log.error({ drawId: record.id }, 'restored draw has no seed: marked failed');
      const s = new DrawSession(record, Buffer.alloc(32), entrants, 'picking');
      this.draws.active.set(record.id, s);
      void this.runtime.track(this.fail(s, 'the draw could not be resumed after a restart'));
      return;
    }
    const seed = Buffer.from(seedHex, 'hex');
    const now = this.ctx.clock.now();
    if (record.status === 'open') {
      const s = new DrawSession(record, seed, entrants, 'open');
      this.draws.active.set(record.id, s);
      this.log.info({ drawId: record.id, entrants: s.entrants.size }, 'open draw restored');
      if (now < s.closesAtMs) {
        this.remind(s);
        this.scheduleOpen(s);
      } else {
        this.close(s, 'restore');
      }
      return;
    }
    const s = new DrawSession(record, seed, entrants, 'finalizing');
    this.draws.active.set(record.id, s);
    if (record.finishInFlight) {
      this.log.info({ drawId: record.id }, 'restored draw had a finish in flight: reconciling');
      if (record.kind === 'gift-draw') void this.runtime.track(this.finalize(s, 'reconcile'));
      else if (record.kind === 'gift-purchase') void this.runtime.track(this.finalize(s));
      else {
        void this.runtime.track(
          this.fail(
            s,
            'the bot stopped while creating the links; check the giveaway packages in the Fourthwall dashboard before !giveaway retry',
          ),
        );
      }
      return;
    }
    if (record.claim && record.winners.length) {
      s.phase = 'claim';
      const deadline = Date.parse(record.claim.deadline);
      if (now < deadline) s.schedule(this.ctx.clock, deadline, () => this.onClaimDeadline(s));
      else this.onClaimDeadline(s);
      return;
    }
    if (record.winners.length && record.frozenEntrants) {
      void this.runtime.track(this.finalize(s));
      return;
    }
    s.phase = 'open';
    this.close(s, 'restore');
  }

  // -------------------------------------------------------------------------------------------
  // Small helpers
  // -------------------------------------------------------------------------------------------

  private identity(): ChannelIdentity {
    const chat = this.ctx.chat;
    const channelId = chat.channelId();
    return { channelLogin: chat.channelLogin, botLogin: chat.botLogin, ...(channelId ? { channelId } : {}) };
  }

  private persistQuietly(s: DrawSession): Promise<void> {
    return s.persist(this.ctx.repo).catch((err: unknown) => {
      this.log.error({ drawId: s.id, err }, 'could not save the draw record');
    });
  }

  private isoNow(): string {
    return new Date(this.ctx.clock.now()).toISOString();
  }
}

/** `https://shop.example/` or `shop.example` -> `shop.example`. */
function normaliseDomain(value: string): string | undefined {
  const d = value.trim().replace(/^https?:\/\//i, '').replace(/\/+$/, '');
  return d || undefined;
}
