/**
 * Closing entries and picking the winners: the step from `open` to a claim window or to
 * delivering the prizes.
 *
 * Contract: `close` is the single gate out of `open`: the first caller (timer, command or restore)
 * flips the phase to `picking` synchronously and wins; later callers get false and do nothing.
 * Picking applies eligibility (including the winner cooldown), freezes the eligible entrants,
 * reveals the seed and takes the first picks with the provably fair sequence; with Twitch account
 * rules in force each pick is checked and one that fails is set aside for the next
 * (checked-picks.ts), within one deadline derived from Fourthwall's; nobody eligible ends the draw
 * as finished without winners. Any internal error fails the draw. The freeze runs in
 * slices that yield to I/O (freeze.ts), so a draw of any size never blocks the event loop for long;
 * the frozen list stays beside the record (DrawSession.frozen), never copied into events. Does not: collect
 * entries, talk to the shop, or deliver prizes (claim-window.ts and finalize.ts do).
 */
import { snapshot } from './context.js';
import { channelIdentity, persistQuietly, type Engine } from './engine.js';
import { freezeEntrantTable } from './entrants/index.js';
import { type ExclusionReason } from './eligibility.js';
import type { FrozenList } from './entrants/index.js';
import type { ClaimWindow } from './claim-window.js';
import type { Finalizer } from './finalize.js';
import { picksDeadline, takeCheckedPicks } from './checked-picks.js';
import { keyForPicks } from './beacon-step.js';
import type { DrawSession } from './session.js';
import type { Settler } from './settle.js';

/** What closed a draw's entries (logged). */
export type CloseTrigger = 'timer' | 'command' | 'restore';

export class Drawing {
  constructor(
    private readonly e: Engine,
    private readonly claims: ClaimWindow,
    private readonly finalizer: Finalizer,
    private readonly settle: Settler,
  ) {}

  /** Closes entries of an open draw. The first caller wins; later callers get false. */
  close(s: DrawSession, trigger: CloseTrigger): boolean {
    if (s.phase !== 'open') return false;
    s.phase = 'picking';
    s.clearTimers();
    s.record.status = 'drawing';
    this.e.ctx.logger.info({ drawId: s.id, trigger, entrants: s.entrants.size }, 'entries closed');
    this.e.ctx.events.emit('draw-closed', snapshot(s.record));
    void this.e.runtime.track(this.pick(s));
    return true;
  }

  private async pick(s: DrawSession): Promise<void> {
    const { ctx } = this.e;
    const r = s.record;
    try {
      // A draw restored while it waited for its beacon round keeps the list it already announced
      // (digest and round are public): it is never frozen a second time.
      const announced = s.frozen && s.frozen.digest === r.fairness.entrantsDigest ? s.frozen : undefined;
      // One deadline for the whole close (beacon wait and account checks), set when entries closed.
      const until = picksDeadline(s, ctx.clock.now());
      const { frozen, excluded } = announced ? { frozen: announced, excluded: {} } : await this.freeze(s);
      const key = await keyForPicks(this.e, s, frozen.digest, frozen.length);
      if (!key) return;
      s.reveal();
      ctx.events.emit('entrants-frozen', r.id, frozen.digest, frozen.length);
      const gate = ctx.accounts?.active ? ctx.accounts : undefined;
      const got = await takeCheckedPicks({ key, frozen, from: 0, wanted: r.gifts, ...(gate ? { gate } : {}), until, now: () => ctx.clock.now() });
      r.winners = got.picks.map(({ entrant, pick, accountCheck }) => ({
        userId: entrant.userId,
        login: entrant.login,
        displayName: s.displayNameOf(entrant.userId) ?? entrant.login,
        pick,
        ...(accountCheck ? { accountCheck } : {}),
      }));
      if (gate) {
        const unfilled = Math.max(0, r.gifts - r.winners.length);
        const outcome = {
          setAside: got.setAside,
          checked: got.checked,
          unchecked: got.unchecked,
          ...(got.problem ? { problem: got.problem } : {}),
          ...(unfilled > 0
            ? { unfilled: { count: unfilled, of: r.gifts, prize: r.offer.name, why: got.outOfTime ? ('time' as const) : ('exhausted' as const) } }
            : {}),
        };
        r.setAside = got.setAside;
        r.rules = { ...r.rules, account: gate.accountRecord(outcome) };
        gate.report(r.id, outcome);
        if (got.outOfTime) ctx.logger.warn({ drawId: s.id, unfilled }, 'account checks ran out of time: going on with the winners checked so far (a gift draw short of winners is handed back)');
      }
      ctx.logger.info(
        { drawId: s.id, eligible: frozen.length, winners: r.winners.map((w) => w.login), excluded, setAside: got.setAside.length },
        'winners picked',
      );
      if (r.winners.length === 0) return await this.settle.finishEmpty(s);
      if (this.claims.begin(s)) {
        await persistQuietly(this.e, s);
        return;
      }
      s.phase = 'finalizing';
      await this.finalizer.finalize(s);
    } catch (err) {
      await this.settle.fail(s, 'an internal error while drawing', err);
    }
  }

  /**
   * Applies the chat rules (eligibility, winner cooldown) and freezes the eligible entrants into
   * s.frozen (digest and rules on the record), over the table's columns. Twitch account rules are
   * not applied here: they are checked for the picks only (checked-picks.ts).
   */
  private async freeze(s: DrawSession): Promise<{ frozen: FrozenList; excluded: Partial<Record<ExclusionReason, number>> }> {
    const { ctx } = this.e;
    const r = s.record;
    const hours = ctx.settings.eligibility.winnerCooldownHours;
    const recentWinners =
      hours > 0 ? await ctx.repo.recentWinnerIds(ctx.clock.now() - hours * 3_600_000) : new Set<string>();
    const result = await freezeEntrantTable(s.entrants, ctx.settings, channelIdentity(ctx.chat), recentWinners);
    r.rules = result.rules;
    s.frozen = result.frozen;
    r.fairness.entrantsDigest = result.frozen.digest;
    return { frozen: result.frozen, excluded: result.excluded };
  }
}
