/**
 * The one runner of the draw state machine: it feeds a trigger to the machine (draw-machine.ts),
 * moves the session to the phase the table says, performs the transition's effects in order and
 * feeds each effect's outcome back as the next trigger.
 *
 * Contract: `fire` changes the phase synchronously, and runs the effects up to the first one that
 * awaits before it returns, so a timer and a command racing for one draw can never both act (the
 * second trigger finds no row). A trigger without a row in the draw's phase, or one leading to a
 * phase the draw's flow does not have (a gift draw is never cancelled), does nothing and returns
 * undefined. Every chain of effects is tracked as work in flight. An effect that throws
 * fails the draw ('an internal error while drawing' / '... while delivering the prizes'). The
 * effects themselves live where their concern does: entries.ts, closing.ts, claim-window.ts,
 * flows/*.ts (delivery), settle.ts. Does not: decide which phase comes next (the table does).
 */
import { redrawVoice } from './redraws.js';
import {
  askReplacement,
  openFirstWindow,
  openReplacementWindow,
  replaceUnclaimed,
  resumeWindow,
} from './claim-window.js';
import { persistQuietly, type FlowContext } from './context.js';
import { next, type Effect, type Trigger } from './draw-machine.js';
import type { Entries } from './entries.js';
import { flowOf } from './flows/index.js';
import { awaitBeacon, freezeEntrants, takePicks } from './closing.js';
import type { DrawSession } from './session.js';
import { snapshot } from './session.js';
import { handBack, reconcileWinners, recordCancel, recordFailure, settleEmpty, settleWinners } from './settle.js';

type Outcome = Trigger | undefined | void;

/** The trigger's data, when it is the trigger an effect expects. */
function data<N extends Trigger['name']>(t: Trigger, name: N): Extract<Trigger, { name: N }> {
  if (t.name !== name) throw new Error(`draw machine: an effect expected ${name}, got ${t.name}`);
  return t as Extract<Trigger, { name: N }>;
}

/** Why the draw failed when an effect threw. */
function internalError(effect: Effect): string {
  return effect === 'deliver-prizes' || effect === 'resume-delivery'
    ? 'an internal error while delivering the prizes'
    : 'an internal error while drawing';
}

export class DrawRunner {
  constructor(
    private readonly c: FlowContext,
    private readonly entries: Entries,
  ) {}

  /** Feeds `t` to the draw's machine (see the module contract). */
  fire(s: DrawSession, t: Trigger): Promise<void> | undefined {
    const move = next(s.phase, t.name);
    if (!move || !flowOf(s.record.kind).phases.includes(move.to)) {
      this.c.logger.debug({ drawId: s.id, phase: s.phase, trigger: t.name }, 'trigger does not apply in this phase');
      return undefined;
    }
    s.phase = move.to;
    return this.c.work.track(this.run(s, move.effects, t));
  }

  private async run(s: DrawSession, effects: readonly Effect[], t: Trigger): Promise<void> {
    for (const effect of effects) {
      let outcome: Outcome;
      try {
        const out = this.perform(effect, s, t);
        outcome = out instanceof Promise ? await out : out;
      } catch (err) {
        const failed = this.fire(s, { name: 'failed', reason: internalError(effect), cause: err });
        if (failed) await failed;
        else this.c.logger.error({ drawId: s.id, effect, err }, 'a draw effect failed');
        return;
      }
      if (outcome) {
        const after = this.fire(s, outcome);
        if (after) await after;
      }
    }
  }

  /** Performs one effect; its outcome (a trigger) is fed back by `run`. */
  private perform(effect: Effect, s: DrawSession, t: Trigger): Outcome | Promise<Outcome> {
    const { c } = this;
    const r = s.record;
    const onClaimDeadline = () => {
      if (!s.replacing) void this.fire(s, { name: 'claim-deadline' });
    };
    switch (effect) {
      case 'announce-opened':
        s.quiet = redrawVoice(c.draws, s) === 'quiet';
        c.logger.info(
          { drawId: s.id, kind: r.kind, gifts: r.gifts, ...(s.quiet ? { quiet: true } : {}) },
          'draw opened',
        );
        if (!s.quiet) c.announce.opened(s);
        c.events.emit('draw-opened', snapshot(r));
        return;
      case 'schedule-entries':
        return this.entries.scheduleOpen(s);
      case 'resume-entries':
        this.entries.remind(s);
        return this.entries.scheduleOpen(s);
      case 'close-entries':
        s.clearTimers();
        r.status = 'drawing';
        c.logger.info(
          { drawId: s.id, trigger: t.name === 'close' ? t.by : 'restore', entrants: s.entrants.size },
          'entries closed',
        );
        c.events.emit('draw-closed', snapshot(r));
        return;
      case 'freeze-entrants':
        return freezeEntrants(c, s);
      case 'await-beacon':
        return awaitBeacon(c, s);
      case 'take-picks':
        return takePicks(c, s, data(t, 'beacon-ready').key);
      case 'open-claim-window':
        if (t.name === 'replacements-asked') return openReplacementWindow(c, s, t.asked, onClaimDeadline);
        return openFirstWindow(c, s, onClaimDeadline);
      case 'resume-claim-window':
        return resumeWindow(c, s, onClaimDeadline);
      case 'ask-replacement':
        return askReplacement(c, s, data(t, 'rerolled-in-claim').winner, onClaimDeadline);
      case 'save-record':
        return persistQuietly(c, s);
      case 'replace-unclaimed':
        return replaceUnclaimed(c, s);
      case 'stop-timers':
        return s.clearTimers();
      case 'deliver-prizes':
        return flowOf(r.kind).deliver(c, s);
      case 'resume-delivery':
        return flowOf(r.kind).resumeDelivery(c, s);
      case 'reopen-for-retry':
        r.status = 'drawing';
        delete r.failure;
        return c.draws.unretire(s);
      case 'settle-winners':
        return settleWinners(c, s, data(t, 'delivered').winners);
      case 'settle-empty':
        return settleEmpty(c, s);
      case 'hand-back':
        return handBack(c, s);
      case 'record-failure': {
        const f = data(t, 'failed');
        return recordFailure(c, s, f.reason, f.cause);
      }
      case 'record-cancel':
        return recordCancel(c, s);
      case 'apply-fourthwall-winners':
        return settleWinners(c, s, data(t, 'ended-at-fourthwall').winners);
      case 'reconcile-fourthwall-winners':
        return reconcileWinners(c, s, data(t, 'ended-at-fourthwall').winners);
    }
  }
}
