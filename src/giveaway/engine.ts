/**
 * GiveawayEngine: the giveaway engine and the one door the app uses. It opens draws (Fourthwall
 * gift draws, gift purchases, link giveaways), collects `!enter`, closes them on time or on
 * command, picks winners with the provably fair sequence (eligibility and luck applied, Twitch
 * account rules checked), runs claim windows and rerolls, delivers the prizes exactly once and
 * keeps every draw journaled. A draw's life is the state machine in draw-machine.ts (its phases
 * and its transition table); the runner (runner.ts) performs the effects; the three flows
 * (flows/gift-draw.ts, gift-purchase.ts, link-giveaway.ts) plug in what differs.
 *
 * Contract:
 * - Every phase change is made synchronously (runner.ts) before any await, so a timer and a
 *   command racing for the same draw can never both act.
 * - Restore after a restart is "load the record, put it in its phase, resume the machine"
 *   (`start`, draw-machine.ts `restoredPhase`).
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
import type { ChatMessage } from '../shared/chat.js';
import { Announcer } from './announcer.js';
import { markClaimed } from './claim-window.js';
import type { FlowContext, GiveawayDeps, GiveawayEventMap } from './context.js';
import { restoredPhase, viewPhase, type DrawViewPhase, type RerollRefusal } from './draw-machine.js';
import type { EntrantTable } from './entrants/index.js';
import { Entries } from './entries.js';
import { giftDrawEnded, giftDrawStarted } from './flows/gift-draw.js';
import { giftPurchase } from './flows/gift-purchase.js';
import { LinkGiveawayCommands, type ActionResult } from './flows/link-giveaway.js';
import { render } from './messages.js';
import type { DrawRecord, GiftDrawInfo, GiftPurchaseInfo } from './model.js';
import { DrawRegistry } from './registry.js';
import { reroll, winnerRefusal } from './reroll.js';
import { DrawRunner } from './runner.js';
import { DrawSession } from './session.js';
import { WorkInFlight } from './work-in-flight.js';
import { enterByTickets } from './ticket-entries.js';
import type { TicketOutcome, TicketRequest } from './tickets.js';

export type { ActionResult } from './flows/link-giveaway.js';

const NO_DRAWS: readonly Readonly<DrawRecord>[] = Object.freeze([]);

/** One draw in memory as the operator pages see it (live objects: read, never change). */
export interface DrawView {
  readonly record: Readonly<DrawRecord>;
  readonly phase: DrawViewPhase;
  /** The draw's entrants (read-only; EntrantTable holds them in columns). */
  readonly entrants: Pick<EntrantTable, 'size' | 'get' | 'values' | 'loginAt' | 'displayNameAt'>;
  /** Open, picking, in a claim window or finalizing (false: recently closed). */
  readonly active: boolean;
}

export class GiveawayEngine {
  /** Engine events (draw-opened, draw-closed, draw-finished, draw-failed, draw-cancelled, winners, ...). */
  readonly events = new EventEmitter<GiveawayEventMap>();
  private readonly c: FlowContext;
  private readonly entries: Entries;
  private readonly runner: DrawRunner;
  private readonly links: LinkGiveawayCommands;

  constructor(deps: GiveawayDeps) {
    this.c = {
      ...deps,
      logger: deps.logger.child({ module: 'giveaway' }),
      events: this.events,
      announce: new Announcer(
        deps.chat,
        deps.operator,
        deps.settings,
        deps.clock,
        deps.checkHint,
        deps.privateDelivery,
      ),
      draws: new DrawRegistry(deps.repo),
      work: new WorkInFlight(deps.clock),
      fire: (s, t) => this.runner.fire(s, t),
    };
    this.entries = new Entries(this.c, (s) => void this.c.fire(s, { name: 'close', by: 'timer' }));
    this.runner = new DrawRunner(this.c, this.entries);
    this.links = new LinkGiveawayCommands(this.c);
  }

  // Lifecycle

  /** Restores draws left open or drawing by an earlier run. */
  async start(): Promise<void> {
    const { c } = this;
    c.work.resume();
    for (const { record, entrants, grants } of await c.repo.openDraws()) {
      if (c.draws.active.has(record.id)) continue;
      const at = restoredPhase(record, c.clock.now());
      // restoredPhase checked the seed: a draw without a valid one is failed, never resumed
      const seed =
        'failed' in at ? Buffer.alloc(32) : Buffer.from(record.pendingSeed ?? record.fairness.seed ?? '', 'hex');
      const s = new DrawSession(record, seed, entrants, at.phase);
      // Tickets from channel points and bits, in journal order (their entrants and weights).
      for (const g of grants ?? []) s.applyGrant(g, true);
      c.draws.active.set(record.id, s);
      if ('failed' in at) {
        c.logger.error({ drawId: record.id }, 'restored draw has no seed: marked failed');
        void c.fire(s, { name: 'failed', reason: at.failed });
        continue;
      }
      if (at.phase === 'open') c.logger.info({ drawId: record.id, entrants: s.entrants.size }, 'open draw restored');
      void c.fire(s, at.trigger === 'close' ? { name: 'close', by: 'restore' } : { name: 'resume' });
    }
  }

  /** Cancels every timer and waits for work in flight; draws stay journaled for the next start. */
  async stop(): Promise<void> {
    const { draws, work } = this.c;
    for (const s of draws.active.values()) s.clearTimers();
    this.entries.cancelAck();
    work.halt();
    await this.whenIdle();
    draws.active.clear();
    await this.c.repo.flush();
  }

  /** Resolves once no asynchronous work of the engine is in flight (timers may still be set). */
  whenIdle(): Promise<void> {
    return this.c.work.whenIdle();
  }

  /**
   * The draws in memory (active ones, then recently closed ones), uncopied and read-only, for the
   * operator pages (src/web). Callers must not change them.
   */
  drawViews(): DrawView[] {
    const view = (s: DrawSession, active: boolean): DrawView => ({
      record: s.record,
      phase: viewPhase(s.phase),
      entrants: s.entrants,
      active,
    });
    return [
      ...this.c.draws.activeSessions().map((s) => view(s, true)),
      ...this.c.draws.recentSessions().map((s) => view(s, false)),
    ];
  }

  /** True while some active draw is in its claim window (one number read). */
  claimsOpen(): boolean {
    return this.c.draws.active.inClaim() !== 0;
  }

  /**
   * The active draws in their claim window that `userId` won (for the winners' chat catch in
   * src/web), uncopied and read-only. O(1) while no draw is in a claim window (every chat line
   * asks), else O(active draws); nothing allocated when none.
   */
  claimDrawsOf(userId: string): readonly Readonly<DrawRecord>[] {
    if (!this.claimsOpen()) return NO_DRAWS;
    let out: Readonly<DrawRecord>[] | undefined;
    const active = this.c.draws.active.list();
    for (let i = 0; i < active.length; i++) {
      const s = active[i]!;
      if (s.phase !== 'claim-window') continue;
      for (const w of s.record.winners) {
        if (w.userId !== userId) continue;
        (out ??= []).push(s.record);
        break;
      }
    }
    return out ?? NO_DRAWS;
  }

  /** Draws open for entries or being drawn. */
  openDrawCount(): number {
    return this.c.draws.active.size;
  }

  /** Distinct entrants of an active draw (undefined when it is not active). */
  entrantCount(drawId: string): number | undefined {
    return this.c.draws.active.get(drawId)?.entrants.size;
  }

  // Fourthwall events

  /** A Fourthwall gift draw started (GIFT_DRAW_STARTED): opens it for entries (once per draw id). */
  handleGiftDrawStarted(draw: GiftDrawInfo, eventId?: string): Promise<void> {
    return giftDrawStarted(this.c, draw, eventId);
  }

  /** A gift purchase (GIFT_PURCHASE, purchase flow): runs one entry window for its gifts. */
  handleGiftPurchase(purchase: GiftPurchaseInfo, eventId?: string): Promise<void> {
    return giftPurchase(this.c, purchase, eventId);
  }

  /** A gift draw ended at Fourthwall (GIFT_DRAW_ENDED): brings the record in line, announcing nothing twice. */
  handleGiftDrawEnded(draw: GiftDrawInfo): Promise<void> {
    return this.c.work.track(giftDrawEnded(this.c, draw));
  }

  // Chat

  /** `!enter`: joins every open draw once per user id. Returns how many draws it joined. */
  enter(msg: ChatMessage): number {
    return this.entries.enter(msg);
  }

  /**
   * An entry from Twitch beyond chat (a channel-point redemption, bits used): ticket-entries.ts.
   * Resolves once its grants are journaled: `entered` (with the draws), `already` (this ref was
   * applied before), `refused` (why: no draw open, not eligible, cap reached) or `stopped`.
   */
  enterByTickets(req: TicketRequest): Promise<TicketOutcome> {
    return this.c.work.track(enterByTickets(this.c, req, () => this.entries.scheduleAck()));
  }

  /** `!claim`: a pending winner confirms. True when it counted. */
  claim(msg: ChatMessage): boolean {
    let counted = false;
    for (const s of this.c.draws.activeSessions()) {
      if (s.phase !== 'claim-window') continue;
      const next = markClaimed(this.c, s, msg.userId);
      if (!next) continue;
      counted = true;
      void this.c.fire(s, next);
    }
    return counted;
  }

  /**
   * `!giveaway`: one line about the draws it concerns: those running now; with none, a gift draw
   * that ended without winners at Fourthwall (handed back or failed), which the shop redraws at
   * its deadline (entry window + 60 s);
   * else that nothing is open.
   */
  status(): string {
    const lines = this.c.draws
      .activeSessions()
      .map((s) => this.c.announce.statusLine(s))
      .filter((l): l is string => !!l);
    if (lines.length) return lines.join(' | ');
    const now = this.c.clock.now();
    const handedBack = this.c.draws
      .recentSessions()
      .find((s) => s.record.kind === 'gift-draw' && s.record.status === 'failed' && s.fourthwallDeadlineMs > now);
    if (handedBack) {
      return render(this.c.settings.messages.statusRedraw, {
        product: handedBack.record.offer.name,
        seconds: Math.ceil((handedBack.fourthwallDeadlineMs - now) / 1000),
        enter: this.c.settings.commands.enter,
      });
    }
    return render(this.c.settings.messages.statusNone, {});
  }

  // Moderator actions

  /** `!giveaway start`: a link giveaway of the product `query` names (id, slug or name). */
  startLinkGiveaway(by: ChatMessage, query: string, winners?: number, seconds?: number): Promise<ActionResult> {
    return this.links.start(by, query, winners, seconds);
  }

  /** `!giveaway end`: closes every open draw now and draws. Returns how many it closed. */
  endNow(): number {
    let closed = 0;
    for (const s of this.c.draws.activeSessions()) if (this.c.fire(s, { name: 'close', by: 'command' })) closed += 1;
    return closed;
  }

  /** `!giveaway cancel`: cancels the open link giveaway (no links are created for it). */
  cancel(): Promise<ActionResult> {
    return this.links.cancel();
  }

  /**
   * `!giveaway reroll <login>`: replaces that winner by the next pick among the other entrants;
   * in draw `drawId` when given (the dashboard names the draw its button belongs to).
   */
  reroll(login: string, by: ChatMessage, drawId?: string): Promise<ActionResult> {
    return reroll(this.c, login, by, drawId);
  }

  /**
   * Why winner `login` of draw `drawId` (in memory) may not be rerolled now, the same answer
   * `reroll` gives (reroll.ts `winnerRefusal`); undefined when a reroll would be accepted. The
   * dashboard offers Reroll only where this is undefined (a draw no longer in memory: busy).
   */
  rerollRefusal(drawId: string, login: string): RerollRefusal | undefined {
    const s = this.c.draws.active.get(drawId) ?? this.c.draws.findRecent(drawId);
    return s ? winnerRefusal(this.c.repo, s.phase, s.record, login.toLowerCase()) : 'busy';
  }

  /** `!giveaway retry`: delivers the links of the latest giveaway whose links failed. */
  retryLinks(): Promise<ActionResult> {
    return this.links.retry();
  }
}
