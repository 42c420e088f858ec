/**
 * Resuming after a restart: every draw the journal still has open or drawing is put back where
 * it was.
 *
 * Contract (per restored record):
 * - no valid seed (neither pending nor revealed) -> failed: the draw cannot be resumed fairly;
 * - open -> entries resume with their timers and a reminder, or close at once if the time passed;
 * - `finishInFlight` -> reconciled, never repeated blindly: a gift draw asks Fourthwall first and
 *   only resends the SAME winners (finalize.ts / gift-draw.ts), a purchase rebuilds its links, a
 *   link giveaway fails with a pointer to the dashboard (a second package must not be created);
 * - in a claim window -> the window resumes (or its deadline is handled at once);
 * - winners picked and frozen -> their prizes are delivered;
 * - otherwise (drawing, not picked) -> closed again and picked.
 * A record already active is left alone. Does not: read storage beyond `openDraws`, or pick,
 * finish or announce anything itself.
 */
import type { ClaimWindow } from './claim-window.js';
import type { Drawing } from './drawing.js';
import type { Engine } from './engine.js';
import type { Entries } from './entries.js';
import type { Finalizer } from './finalize.js';
import type { DrawRecord, Entrant } from './ports.js';
import { DrawSession } from './session.js';
import type { Settler } from './settle.js';

export class Restorer {
  constructor(
    private readonly e: Engine,
    private readonly entries: Entries,
    private readonly drawing: Drawing,
    private readonly claims: ClaimWindow,
    private readonly finalizer: Finalizer,
    private readonly settle: Settler,
  ) {}

  /** Restores every open or drawing draw from the journal that is not active already. */
  async restoreAll(): Promise<void> {
    const open = await this.e.ctx.repo.openDraws();
    for (const { record, entrants } of open) {
      if (this.e.draws.active.has(record.id)) continue;
      this.restore(record, entrants);
    }
  }

  private restore(record: DrawRecord, entrants: Entrant[]): void {
    const { ctx, draws, runtime } = this.e;
    const seedHex = record.pendingSeed ?? record.fairness.seed;
    if (!seedHex || !/^[0-9a-f]{64}$/i.test(seedHex)) {
      ctx.logger.error({ drawId: record.id }, 'restored draw has no seed: marked failed');
      const s = new DrawSession(record, Buffer.alloc(32), entrants, 'picking');
      draws.active.set(record.id, s);
      void runtime.track(this.settle.fail(s, 'the draw could not be resumed after a restart'));
      return;
    }
    const seed = Buffer.from(seedHex, 'hex');
    const now = ctx.clock.now();
    if (record.status === 'open') {
      const s = new DrawSession(record, seed, entrants, 'open');
      draws.active.set(record.id, s);
      ctx.logger.info({ drawId: record.id, entrants: s.entrants.size }, 'open draw restored');
      if (now < s.closesAtMs) {
        this.entries.remind(s);
        this.entries.scheduleOpen(s);
      } else {
        this.drawing.close(s, 'restore');
      }
      return;
    }
    const s = new DrawSession(record, seed, entrants, 'finalizing');
    draws.active.set(record.id, s);
    if (record.finishInFlight) {
      ctx.logger.info({ drawId: record.id }, 'restored draw had a finish in flight: reconciling');
      if (record.kind === 'gift-draw') void runtime.track(this.finalizer.finalize(s, 'reconcile'));
      else if (record.kind === 'gift-purchase') void runtime.track(this.finalizer.finalize(s));
      else {
        void runtime.track(
          this.settle.fail(
            s,
            'the bot stopped while creating the links; check the giveaway packages in the Fourthwall dashboard before !giveaway retry',
          ),
        );
      }
      return;
    }
    if (record.claim && record.winners.length) {
      s.phase = 'claim';
      this.claims.resume(s, Date.parse(record.claim.deadline), now);
      return;
    }
    if (record.winners.length && s.frozen) {
      void runtime.track(this.finalizer.finalize(s));
      return;
    }
    s.phase = 'open';
    this.drawing.close(s, 'restore');
  }
}
