/**
 * Claim windows: after the picks, each winner must say `!claim` before a deadline; winners who do
 * not are replaced by the next pick (up to `claim.maxRerolls`; with account rules in force each
 * replacement is checked with Twitch like the first picks, checked-picks.ts), and the replacements
 * get a window of their own. Also announces every replacement of a winner (here and by moderator rerolls).
 *
 * Contract: only sessions in phase `claim` are touched. The window ends (synchronously moving the
 * session to `finalizing`, then handing it to finalize.ts) when every winner has claimed or the
 * deadline passes with nobody left to replace; unclaimed winners are kept. For gift draws a window
 * is only opened if it still leaves FINISH_RESERVE_MS before Fourthwall's deadline. Once the engine is
 * stopped a window is only recorded (no timer, no prompt), for the next start to resume. Does not: pick
 * the first winners, deliver prizes, or persist synchronously (saves are tracked in the runtime).
 */
import type { ChatMessage } from '../shared/chat.js';
import { snapshot } from './context.js';
import { isoNow, persistQuietly, type Engine } from './engine.js';
import type { Finalizer } from './finalize.js';
import { replaceWinnerChecked, replaceWinnerPlain } from './checked-picks.js';
import type { ReplaceMeta } from './picks.js';
import type { Winner } from './ports.js';
import type { DrawSession } from './session.js';

/** Time kept free after a claim window so the finish call still fits Fourthwall's deadline. */
const FINISH_RESERVE_MS = 15_000;

export class ClaimWindow {
  constructor(
    private readonly e: Engine,
    private readonly finalizer: Finalizer,
  ) {}

  /**
   * Opens the first claim window of a freshly picked session, when claim windows are on and one
   * fits. True when it did (the session is then in phase `claim`; the caller saves it).
   */
  begin(s: DrawSession): boolean {
    const { ctx } = this.e;
    const r = s.record;
    const claimMs = ctx.settings.claim.seconds * 1000;
    if (!(claimMs > 0)) return false;
    if (this.fits(s, claimMs)) {
      r.claim = { deadline: new Date(ctx.clock.now() + claimMs).toISOString(), rerollsUsed: 0 };
      for (const w of r.winners) w.claimed = false;
      s.phase = 'claim';
      this.open(s, ctx.clock.now() + claimMs, r.winners);
      return true;
    }
    ctx.logger.info({ drawId: s.id }, 'claim window skipped: it does not fit before the Fourthwall deadline');
    return false;
  }

  /** `!claim`: a pending winner confirms. True when it counted. */
  claim(msg: ChatMessage): boolean {
    const { ctx } = this.e;
    let counted = false;
    for (const s of this.e.draws.activeSessions()) {
      if (s.phase !== 'claim') continue;
      const w = s.record.winners.find((x) => x.userId === msg.userId && x.claimed === false);
      if (!w) continue;
      w.claimed = true;
      counted = true;
      ctx.logger.info({ drawId: s.id, login: w.login }, 'winner claimed');
      this.e.announce.say('claimed', { winner: `@${w.login}`, product: s.record.offer.name }, 'normal');
      ctx.events.emit('claimed', snapshot(s.record), { ...w });
      if (s.record.winners.every((x) => x.claimed !== false)) {
        s.clearTimers();
        this.end(s);
      } else {
        void this.e.runtime.track(persistQuietly(this.e, s));
      }
    }
    return counted;
  }

  /**
   * A moderator replaced a winner during the window: the replacement is asked to claim, with at
   * least a full window of time when that still fits.
   */
  askReplacement(s: DrawSession, winner: Winner): void {
    const { ctx } = this.e;
    const claimMs = ctx.settings.claim.seconds * 1000;
    const deadline = Math.max(Date.parse(s.record.claim!.deadline), ctx.clock.now() + claimMs);
    if (this.fits(s, deadline - ctx.clock.now())) {
      this.open(s, deadline, [winner]);
    }
  }

  /** A restored session in phase `claim`: its deadline is scheduled, or handled now if passed at `now`. */
  resume(s: DrawSession, deadlineMs: number, now: number): void {
    if (now < deadlineMs) {
      s.schedule(this.e.ctx.clock, deadlineMs, () => this.onDeadline(s));
      this.e.ctx.events.emit('claim-opened', s.id, new Date(deadlineMs).toISOString());
    } else this.onDeadline(s);
  }

  /** Logs, announces and emits the replacement of `old` by `winner`. */
  announceReroll(s: DrawSession, old: Winner, winner: Winner, reason: string): void {
    this.e.ctx.logger.info({ drawId: s.id, replaced: old.login, winner: winner.login, reason }, 'winner replaced');
    this.e.announce.rerolled(s, old, winner, reason);
    this.e.ctx.events.emit('rerolled', snapshot(s.record), { ...old }, { ...winner });
  }

  /** A claim window of `ms` fits (gift draws must still be finished before Fourthwall's deadline). */
  private fits(s: DrawSession, ms: number): boolean {
    if (s.record.kind !== 'gift-draw') return true;
    return this.e.ctx.clock.now() + ms + FINISH_RESERVE_MS <= s.fourthwallDeadlineMs;
  }

  private open(s: DrawSession, deadlineMs: number, asked: readonly Winner[]): void {
    const r = s.record;
    r.claim = { deadline: new Date(deadlineMs).toISOString(), rerollsUsed: r.claim?.rerollsUsed ?? 0 };
    s.clearTimers();
    // Stopped while picking: the window is journaled (the next start resumes it), nothing is scheduled or said.
    if (this.e.runtime.isStopped()) return;
    s.schedule(this.e.ctx.clock, deadlineMs, () => this.onDeadline(s));
    this.e.announce.claimPrompt(s, asked, deadlineMs);
    this.e.ctx.events.emit('claim-opened', s.id, r.claim.deadline);
  }

  private onDeadline(s: DrawSession): void {
    if (s.phase !== 'claim' || s.replacing) return;
    const { ctx } = this.e;
    const claim = (s.record.claim ??= { deadline: isoNow(ctx.clock), rerollsUsed: 0 });
    const unclaimed = s.record.winners.filter((x) => x.claimed === false);
    const replaced: Winner[] = [];
    const gate = ctx.accounts?.active ? ctx.accounts : undefined;
    if (!gate) {
      // No account rules: the next picks need no lookup, so the window moves on at once.
      for (const w of unclaimed) {
        if (claim.rerollsUsed >= ctx.settings.claim.maxRerolls) break;
        if (!this.took(s, w, replaceWinnerPlain(s, w.userId, this.meta(s)), replaced)) break;
      }
      return this.afterReplacements(s, replaced);
    }
    s.replacing = true;
    const run = async () => {
      for (const w of unclaimed) {
        if (claim.rerollsUsed >= ctx.settings.claim.maxRerolls) break;
        const swap = await replaceWinnerChecked(s, w.userId, { gate, now: () => ctx.clock.now(), still: () => s.phase === 'claim', meta: this.meta(s) });
        if (s.phase !== 'claim') return; // every winner claimed meanwhile: the window already ended
        if (!this.took(s, w, swap, replaced)) break;
      }
      this.afterReplacements(s, replaced);
    };
    void this.e.runtime.track(
      run().finally(() => {
        s.replacing = false;
      }),
    );
  }

  private meta(s: DrawSession): ReplaceMeta {
    return { at: isoNow(this.e.ctx.clock), reason: 'unclaimed', displayNameOf: (id) => s.displayNameOf(id), claimPending: true };
  }

  /** Records one replacement of the unclaimed `w`; false when nobody was left (said in chat). */
  private took(s: DrawSession, w: Winner, swap: { old: Winner; winner: Winner } | undefined, replaced: Winner[]): boolean {
    if (!swap) {
      this.e.announce.say('rerollExhausted', { old: `@${w.login}`, product: s.record.offer.name }, 'normal');
      return false;
    }
    s.record.claim!.rerollsUsed += 1;
    replaced.push(swap.winner);
    this.announceReroll(s, swap.old, swap.winner, 'did not claim in time');
    return true;
  }

  /** After the deadline's replacements: a new window for them when it fits, else the end of claiming. */
  private afterReplacements(s: DrawSession, replaced: readonly Winner[]): void {
    const { ctx } = this.e;
    const ms = ctx.settings.claim.seconds * 1000;
    if (replaced.length && this.fits(s, ms)) {
      this.open(s, ctx.clock.now() + ms, replaced);
      void this.e.runtime.track(persistQuietly(this.e, s));
      return;
    }
    const unclaimed = s.record.winners.filter((x) => x.claimed === false).map((x) => x.login);
    if (unclaimed.length) ctx.logger.info({ drawId: s.id, unclaimed }, 'claim window over: unclaimed winners kept');
    this.end(s);
  }

  private end(s: DrawSession): void {
    if (s.phase !== 'claim') return;
    s.phase = 'finalizing';
    void this.e.runtime.track(this.finalizer.finalize(s));
  }
}
