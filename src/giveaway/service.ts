/**
 * GiveawayService: the giveaway engine's facade. It opens draws (Fourthwall gift draws, gift
 * purchases, link giveaways), collects `!enter`, closes them on time or on command, applies
 * eligibility and luck, picks winners with the provably fair sequence, runs claim windows and
 * rerolls, finishes draws at Fourthwall exactly once, creates and delivers links, and keeps every
 * draw journaled. The work is done by focused modules this class wires together and routes to:
 *
 *   opening.ts       a Fourthwall event or a start command -> a journaled, announced draw
 *   entries.ts       `!enter`, close timer, reminders, batched acknowledgements
 *   drawing.ts       closing entries (first trigger wins) and picking the winners
 *   claim-window.ts  `!claim`, claim deadlines, replacing unclaimed winners
 *   finalize.ts      finishing at Fourthwall / gift links / giveaway links; GIFT_DRAW_ENDED
 *   settle.ts        finished, finished-empty and failed
 *   restore.ts       resuming open draws and reconciling finishes in flight after a restart
 *   link-flow.ts     `!giveaway start|cancel|retry`
 *   reroll.ts        `!giveaway reroll`
 *   registry.ts, runtime.ts, engine.ts   draws in memory, stop/in-flight work, shared parts
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
import type { ChatMessage } from '../shared/chat.js';
import { Announcer } from './announcer.js';
import { ClaimWindow } from './claim-window.js';
import type { GiveawayDeps, GiveawayEventMap } from './context.js';
import { Drawing } from './drawing.js';
import type { Engine } from './engine.js';
import type { EntrantTable } from './entrants/index.js';
import { Entries } from './entries.js';
import { Finalizer } from './finalize.js';
import { LinkFlow, type ActionResult } from './link-flow.js';
import { render } from './messages.js';
import { Opener } from './opening.js';
import type { DrawRecord, GiftDrawInfo, GiftPurchaseInfo } from './ports.js';
import { DrawRegistry } from './registry.js';
import { Reroller } from './reroll.js';
import { Restorer } from './restore.js';
import { EngineRuntime } from './runtime.js';
import type { DrawSession, SessionPhase } from './session.js';
import { Settler } from './settle.js';

export type { ActionResult } from './link-flow.js';

const NO_DRAWS: readonly Readonly<DrawRecord>[] = Object.freeze([]);

/** One draw in memory as the operator pages see it (live objects: read, never change). */
export interface DrawView {
  readonly record: Readonly<DrawRecord>;
  readonly phase: SessionPhase;
  /** The draw's entrants (read-only; EntrantTable holds them in columns). */
  readonly entrants: Pick<EntrantTable, 'size' | 'get' | 'values' | 'loginAt' | 'displayNameAt'>;
  /** Open, picking, in a claim window or finalizing (false: recently closed). */
  readonly active: boolean;
}

export class GiveawayService {
  /** Engine events (draw-opened, draw-closed, draw-finished, draw-failed, draw-cancelled, winners, ...). */
  readonly events = new EventEmitter<GiveawayEventMap>();
  private readonly e: Engine;
  private readonly entries: Entries;
  private readonly drawing: Drawing;
  private readonly claims: ClaimWindow;
  private readonly finalizer: Finalizer;
  private readonly opener: Opener;
  private readonly restorer: Restorer;
  private readonly links: LinkFlow;
  private readonly rerolls: Reroller;

  constructor(deps: GiveawayDeps) {
    const runtime = new EngineRuntime(deps.clock);
    const ctx = {
      ...deps,
      logger: deps.logger.child({ module: 'giveaway' }),
      events: this.events,
      isStopped: () => runtime.isStopped(),
      sleep: (ms: number) => runtime.sleep(ms),
    };
    this.e = {
      ctx,
      announce: new Announcer(deps.chat, deps.operator, deps.settings, deps.clock, deps.checkHint, deps.privateDelivery),
      draws: new DrawRegistry(deps.repo),
      runtime,
    };
    const settle = new Settler(this.e);
    this.finalizer = new Finalizer(this.e, settle);
    this.claims = new ClaimWindow(this.e, this.finalizer);
    this.drawing = new Drawing(this.e, this.claims, this.finalizer, settle);
    this.entries = new Entries(this.e, this.drawing);
    this.opener = new Opener(this.e, this.entries);
    this.restorer = new Restorer(this.e, this.entries, this.drawing, this.claims, this.finalizer, settle);
    this.links = new LinkFlow(this.e, this.opener, this.finalizer);
    this.rerolls = new Reroller(this.e, this.claims);
  }

  // Lifecycle

  /** Restores draws left open or drawing by an earlier run. */
  async start(): Promise<void> {
    this.e.runtime.resume();
    await this.restorer.restoreAll();
  }

  /** Cancels every timer and waits for work in flight; draws stay journaled for the next start. */
  async stop(): Promise<void> {
    const { draws, runtime } = this.e;
    for (const s of draws.active.values()) s.clearTimers();
    this.entries.cancelAck();
    runtime.halt();
    await this.whenIdle();
    draws.active.clear();
    await this.e.ctx.repo.flush();
  }

  /** Resolves once no asynchronous work of the engine is in flight (timers may still be set). */
  whenIdle(): Promise<void> {
    return this.e.runtime.whenIdle();
  }

  /**
   * The draws in memory (active ones, then recently closed ones), uncopied and read-only, for the
   * operator pages (src/web). Callers must not change them.
   */
  drawViews(): DrawView[] {
    const view = (s: DrawSession, active: boolean): DrawView => ({ record: s.record, phase: s.phase, entrants: s.entrants, active });
    return [
      ...this.e.draws.activeSessions().map((s) => view(s, true)),
      ...this.e.draws.recentSessions().map((s) => view(s, false)),
    ];
  }

  /** True while some active draw is in its claim window (one number read). */
  claimsOpen(): boolean {
    return this.e.draws.active.inClaim() !== 0;
  }

  /**
   * The active draws in their claim window that `userId` won (for the winners' chat catch in
   * src/web), uncopied and read-only. O(1) while no draw is in a claim window (every chat line
   * asks), else O(active draws); nothing allocated when none.
   */
  claimDrawsOf(userId: string): readonly Readonly<DrawRecord>[] {
    if (!this.claimsOpen()) return NO_DRAWS;
    let out: Readonly<DrawRecord>[] | undefined;
    const active = this.e.draws.active.list();
    for (let i = 0; i < active.length; i++) {
      const s = active[i]!;
      if (s.phase !== 'claim') continue;
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
    return this.e.draws.active.size;
  }

  /** Distinct entrants of an active draw (undefined when it is not active). */
  entrantCount(drawId: string): number | undefined {
    return this.e.draws.active.get(drawId)?.entrants.size;
  }

  // Fourthwall events

  /** A Fourthwall gift draw started (GIFT_DRAW_STARTED): opens it for entries (once per draw id). */
  handleGiftDrawStarted(draw: GiftDrawInfo, eventId?: string): Promise<void> {
    return this.opener.giftDrawStarted(draw, eventId);
  }

  /** A gift purchase (GIFT_PURCHASE, purchase flow): runs one entry window for its gifts. */
  handleGiftPurchase(purchase: GiftPurchaseInfo, eventId?: string): Promise<void> {
    return this.opener.giftPurchase(purchase, eventId);
  }

  /** A gift draw ended at Fourthwall (GIFT_DRAW_ENDED): brings the record in line, announcing nothing twice. */
  handleGiftDrawEnded(draw: GiftDrawInfo): Promise<void> {
    return this.e.runtime.track(this.finalizer.reconcileEnded(draw));
  }

  // Chat

  /** `!enter`: joins every open draw once per user id. Returns how many draws it joined. */
  enter(msg: ChatMessage): number {
    return this.entries.enter(msg);
  }

  /** `!claim`: a pending winner confirms. True when it counted. */
  claim(msg: ChatMessage): boolean {
    return this.claims.claim(msg);
  }

  /** `!giveaway`: one line about what is open. */
  status(): string {
    const lines = this.e.draws
      .activeSessions()
      .map((s) => this.e.announce.statusLine(s))
      .filter((l): l is string => !!l);
    return lines.length ? lines.join(' | ') : render(this.e.ctx.settings.messages.statusNone, {});
  }

  // Moderator actions

  /** `!giveaway start`: a link giveaway of the product `query` names (id, slug or name). */
  startLinkGiveaway(by: ChatMessage, query: string, winners?: number, seconds?: number): Promise<ActionResult> {
    return this.links.start(by, query, winners, seconds);
  }

  /** `!giveaway end`: closes every open draw now and draws. Returns how many it closed. */
  endNow(): number {
    let closed = 0;
    for (const s of this.e.draws.activeSessions()) if (this.drawing.close(s, 'command')) closed += 1;
    return closed;
  }

  /** `!giveaway cancel`: cancels the open link giveaway (no links are created for it). */
  cancel(): Promise<ActionResult> {
    return this.links.cancel();
  }

  /** `!giveaway reroll <login>`: replaces that winner by the next pick among the other entrants. */
  reroll(login: string, by: ChatMessage): Promise<ActionResult> {
    return this.rerolls.reroll(login, by);
  }

  /** `!giveaway retry`: delivers the links of the latest giveaway whose links failed. */
  retryLinks(): Promise<ActionResult> {
    return this.links.retry();
  }
}
