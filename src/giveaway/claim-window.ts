/**
 * The effects of the claim window (draw-machine.ts phase `claim-window`): after the picks each
 * winner must say `!claim` before a deadline; winners who do not are replaced by the next pick (up
 * to `claim.maxRerolls`; with account rules in force each replacement is checked with Twitch like
 * the first picks, winner-picks.ts), and the replacements get a window of their own. Also
 * announces every replacement of a winner (here and by moderator rerolls).
 *
 * Contract: the runner calls these only for a session in `claim-window`. A window (or a
 * replacement's) opens only if the flow says it fits (a gift draw keeps FINISH_RESERVE_MS before
 * Fourthwall's deadline). Once the engine is stopped a window is only recorded (no timer, no
 * prompt), for the next start to resume. The deadline's replacements end in a trigger:
 * `replacements-asked` (a new window for them) or `claim-over` (unclaimed winners are kept).
 * Does not: pick the first winners, deliver prizes, change the phase or persist.
 */
import { isoNow, type FlowContext } from './context.js';
import { replaceWinnerChecked, replaceWinnerPlain, type ReplaceMeta } from './winner-picks.js';
import type { Trigger } from './draw-machine.js';
import { flowOf } from './flows/index.js';
import type { Winner } from './model.js';
import { snapshot, type DrawSession } from './session.js';

/** A claim window of the configured length fits now for this draw (used when the picks are made). */
export function claimWindowFits(c: FlowContext, s: DrawSession): boolean {
  const ms = c.settings.claim.seconds * 1000;
  if (!(ms > 0)) return false;
  if (flowOf(s.record.kind).claimWindowFits(s, ms, c.clock.now())) return true;
  c.logger.info({ drawId: s.id }, 'claim window skipped: it does not fit before the Fourthwall deadline');
  return false;
}

/** The first window after the picks: every winner is asked to claim. */
export function openFirstWindow(c: FlowContext, s: DrawSession, onDeadline: () => void): void {
  const ms = c.settings.claim.seconds * 1000;
  s.record.claim = { deadline: new Date(c.clock.now() + ms).toISOString(), rerollsUsed: 0 };
  for (const w of s.record.winners) w.claimed = false;
  openWindow(c, s, c.clock.now() + ms, s.record.winners, onDeadline);
}

/** A full window for the deadline's replacements. */
export function openReplacementWindow(
  c: FlowContext,
  s: DrawSession,
  asked: readonly Winner[],
  onDeadline: () => void,
): void {
  openWindow(c, s, c.clock.now() + c.settings.claim.seconds * 1000, asked, onDeadline);
}

/**
 * A moderator replaced a winner during the window: the replacement is asked to claim, with at
 * least a full window of time when that still fits.
 */
export function askReplacement(c: FlowContext, s: DrawSession, winner: Winner, onDeadline: () => void): void {
  const claimMs = c.settings.claim.seconds * 1000;
  const deadline = Math.max(Date.parse(s.record.claim!.deadline), c.clock.now() + claimMs);
  if (flowOf(s.record.kind).claimWindowFits(s, deadline - c.clock.now(), c.clock.now()))
    openWindow(c, s, deadline, [winner], onDeadline);
}

/** A restored window: its deadline is scheduled, or `claim-deadline` is returned when it passed. */
export function resumeWindow(c: FlowContext, s: DrawSession, onDeadline: () => void): Trigger | undefined {
  const deadlineMs = Date.parse(s.record.claim!.deadline);
  if (c.clock.now() >= deadlineMs) return { name: 'claim-deadline' };
  s.schedule(c.clock, deadlineMs, onDeadline);
  c.events.emit('claim-opened', s.id, new Date(deadlineMs).toISOString());
  return undefined;
}

/** `!claim` of `userId` in this draw's window: marks the winner; the trigger that follows, if it counted. */
export function markClaimed(c: FlowContext, s: DrawSession, userId: string): Trigger | undefined {
  const w = s.record.winners.find((x) => x.userId === userId && x.claimed === false);
  if (!w) return undefined;
  w.claimed = true;
  c.logger.info({ drawId: s.id, login: w.login }, 'winner claimed');
  c.announce.say('claimed', { winner: `@${w.login}`, product: s.record.offer.name }, 'normal');
  c.events.emit('claimed', snapshot(s.record), { ...w });
  return s.record.winners.every((x) => x.claimed !== false) ? { name: 'all-claimed' } : { name: 'claimed' };
}

/** Logs, announces and emits the replacement of `old` by `winner`. */
export function announceReroll(c: FlowContext, s: DrawSession, old: Winner, winner: Winner, reason: string): void {
  c.logger.info({ drawId: s.id, replaced: old.login, winner: winner.login, reason }, 'winner replaced');
  c.announce.rerolled(s, old, winner, reason);
  c.events.emit('rerolled', snapshot(s.record), { ...old }, { ...winner });
}

/**
 * The deadline passed: unclaimed winners are replaced while rerolls last (checked with Twitch
 * when account rules are in force; `s.replacing` meanwhile). Returns `replacements-asked` when
 * some were replaced and a window for them fits, else `claim-over`; undefined when the window
 * ended meanwhile (every winner claimed).
 */
export function replaceUnclaimed(c: FlowContext, s: DrawSession): Trigger | Promise<Trigger | undefined> {
  const claim = (s.record.claim ??= { deadline: isoNow(c.clock), rerollsUsed: 0 });
  const unclaimed = s.record.winners.filter((x) => x.claimed === false);
  const replaced: Winner[] = [];
  const gate = c.accounts?.active ? c.accounts : undefined;
  if (!gate) {
    // No account rules: the next picks need no lookup, so the window moves on at once (synchronously).
    for (const w of unclaimed) {
      if (claim.rerollsUsed >= c.settings.claim.maxRerolls) break;
      if (!took(c, s, w, replaceWinnerPlain(s, w.userId, meta(c, s)), replaced)) break;
    }
    return afterReplacements(c, s, replaced);
  }
  s.replacing = true;
  const checked = async (): Promise<Trigger | undefined> => {
    for (const w of unclaimed) {
      if (claim.rerollsUsed >= c.settings.claim.maxRerolls) break;
      const swap = await replaceWinnerChecked(s, w.userId, {
        gate,
        now: () => c.clock.now(),
        still: () => s.phase === 'claim-window',
        meta: meta(c, s),
      });
      if (s.phase !== 'claim-window') return undefined; // every winner claimed meanwhile: the window already ended
      if (!took(c, s, w, swap, replaced)) break;
    }
    return afterReplacements(c, s, replaced);
  };
  return checked().finally(() => {
    s.replacing = false;
  });
}

function meta(c: FlowContext, s: DrawSession): ReplaceMeta {
  return { at: isoNow(c.clock), reason: 'unclaimed', displayNameOf: (id) => s.displayNameOf(id), claimPending: true };
}

/** Records one replacement of the unclaimed `w`; false when nobody was left (said in chat). */
function took(
  c: FlowContext,
  s: DrawSession,
  w: Winner,
  swap: { old: Winner; winner: Winner } | undefined,
  replaced: Winner[],
): boolean {
  if (!swap) {
    c.announce.say('rerollExhausted', { old: `@${w.login}`, product: s.record.offer.name }, 'normal');
    return false;
  }
  s.record.claim!.rerollsUsed += 1;
  replaced.push(swap.winner);
  announceReroll(c, s, swap.old, swap.winner, 'did not claim in time');
  return true;
}

function afterReplacements(c: FlowContext, s: DrawSession, replaced: readonly Winner[]): Trigger {
  const ms = c.settings.claim.seconds * 1000;
  if (replaced.length && flowOf(s.record.kind).claimWindowFits(s, ms, c.clock.now()))
    return { name: 'replacements-asked', asked: replaced };
  const unclaimed = s.record.winners.filter((x) => x.claimed === false).map((x) => x.login);
  if (unclaimed.length) c.logger.info({ drawId: s.id, unclaimed }, 'claim window over: unclaimed winners kept');
  return { name: 'claim-over' };
}

function openWindow(
  c: FlowContext,
  s: DrawSession,
  deadlineMs: number,
  asked: readonly Winner[],
  onDeadline: () => void,
): void {
  const r = s.record;
  r.claim = { deadline: new Date(deadlineMs).toISOString(), rerollsUsed: r.claim?.rerollsUsed ?? 0 };
  s.clearTimers();
  // Stopped while picking: the window is journaled (the next start resumes it), nothing is scheduled or said.
  if (c.work.isStopped()) return;
  s.schedule(c.clock, deadlineMs, onDeadline);
  c.announce.claimPrompt(s, asked, deadlineMs);
  c.events.emit('claim-opened', s.id, r.claim.deadline);
}
