/**
 * The draw state machine: every phase a draw can be in, and, as one table, which trigger moves
 * which phase to which and which effects that transition asks for. This file is the single
 * written-down answer to "where is this draw, and what may happen next?".
 *
 *   opening --saved--> open --close--> closing --frozen--> awaiting-beacon --beacon-ready--> picking
 *   picking --picked--> finishing | --picked-for-claim--> claim-window | --nobody-eligible--> settled
 *   claim-window --all-claimed / claim-over--> finishing      (claim-deadline: replacements, same phase)
 *   finishing --delivered--> settled | --too-few--> failed (gifts handed back)
 *   any active phase --failed--> failed;  open, claim-window --cancel--> cancelled (link giveaways)
 *   failed --retry--> finishing (links);  GIFT_DRAW_ENDED --ended-at-fourthwall--> settled
 *
 * Contract: pure - no I/O, no clock of its own (callers pass `now`), no ports. `next(phase,
 * trigger)` returns the transition or undefined when the trigger does not apply in that phase (the
 * caller then does nothing: this is how a close timer and `!giveaway end` racing for one draw can
 * never both act). Effects are names; the runner (runner.ts) performs them, in the order listed,
 * and feeds their outcomes back as triggers. A flow (flows/*.ts) differs only in the data and the
 * functions it plugs in: which phases it passes through, how it delivers prizes, whether it can be
 * cancelled. `restoredPhase` maps a stored record to the phase a restarted bot resumes in. Does
 * not: perform effects, hold sessions, or know the shop, chat or storage.
 */
import type { DrawRecord, Winner } from './model.js';

/** Where a draw is. `settled`, `failed` and `cancelled` are terminal unless a row below leaves them. */
export type DrawPhase =
  | 'opening'
  | 'open'
  | 'closing'
  | 'awaiting-beacon'
  | 'picking'
  | 'claim-window'
  | 'finishing'
  | 'settled'
  | 'failed'
  | 'cancelled';

/** What closed a draw's entries (logged). */
type CloseCause = 'timer' | 'command' | 'restore';

/** A trigger and its data. */
export type Trigger =
  | { name: 'saved' }
  | { name: 'resume' }
  | { name: 'close'; by: CloseCause }
  | { name: 'frozen' }
  | { name: 'beacon-ready'; key: Buffer }
  | { name: 'picked' }
  | { name: 'picked-for-claim' }
  | { name: 'nobody-eligible' }
  | { name: 'claimed' }
  | { name: 'all-claimed' }
  | { name: 'claim-deadline' }
  | { name: 'replacements-asked'; asked: readonly Winner[] }
  | { name: 'rerolled-in-claim'; winner: Winner }
  | { name: 'claim-over' }
  /** `winners`: as the shop confirmed them (a gift draw: with Fourthwall's gift ids and links); absent: the recorded ones stand. */
  | { name: 'delivered'; winners?: Winner[] }
  | { name: 'too-few' }
  | { name: 'failed'; reason: string; cause?: unknown }
  | { name: 'cancel' }
  | { name: 'retry' }
  /** `winners`: the recorded winners brought in line with the ones Fourthwall reports (flows/gift-draw.ts). */
  | { name: 'ended-at-fourthwall'; winners: Winner[] };

export type TriggerName = Trigger['name'];

/** What a transition asks the runner to do (runner.ts `perform`). */
export type Effect =
  | 'announce-opened'
  | 'schedule-entries'
  | 'resume-entries'
  | 'close-entries'
  | 'freeze-entrants'
  | 'await-beacon'
  | 'take-picks'
  | 'open-claim-window'
  | 'resume-claim-window'
  | 'ask-replacement'
  | 'save-record'
  | 'replace-unclaimed'
  | 'stop-timers'
  | 'deliver-prizes'
  | 'resume-delivery'
  | 'reopen-for-retry'
  | 'settle-winners'
  | 'settle-empty'
  | 'hand-back'
  | 'record-failure'
  | 'record-cancel'
  | 'apply-fourthwall-winners'
  | 'reconcile-fourthwall-winners';

export interface Transition {
  readonly from: readonly DrawPhase[];
  readonly on: TriggerName;
  readonly to: DrawPhase;
  readonly effects: readonly Effect[];
}

/** Phases in which a draw is active (in memory, counted by `!giveaway`, restored after a crash). */
export const ACTIVE_PHASES: readonly DrawPhase[] = [
  'open',
  'closing',
  'awaiting-beacon',
  'picking',
  'claim-window',
  'finishing',
];
const RUNNING: DrawPhase[] = ['closing', 'awaiting-beacon', 'picking', 'claim-window', 'finishing'];

/** The whole machine. Order does not matter: a (phase, trigger) pair appears at most once. */
export const TRANSITIONS: readonly Transition[] = [
  // Opening: the record is saved (with the seed's commitment) before anything is said.
  { from: ['opening'], on: 'saved', to: 'open', effects: ['announce-opened', 'schedule-entries'] },
  { from: ['open'], on: 'resume', to: 'open', effects: ['resume-entries'] },
  // Entries close: timer, `!giveaway end`, or a restore past the close. The first trigger wins.
  { from: ['open'], on: 'close', to: 'closing', effects: ['close-entries', 'freeze-entrants'] },
  { from: ['closing'], on: 'resume', to: 'closing', effects: ['close-entries', 'freeze-entrants'] },
  { from: ['closing'], on: 'frozen', to: 'awaiting-beacon', effects: ['await-beacon'] },
  { from: ['awaiting-beacon'], on: 'beacon-ready', to: 'picking', effects: ['take-picks'] },
  { from: ['picking'], on: 'nobody-eligible', to: 'settled', effects: ['settle-empty'] },
  { from: ['picking'], on: 'picked-for-claim', to: 'claim-window', effects: ['open-claim-window', 'save-record'] },
  { from: ['picking'], on: 'picked', to: 'finishing', effects: ['deliver-prizes'] },
  // Claim window: `!claim`, the deadline (unclaimed winners replaced while rerolls last), rerolls.
  { from: ['claim-window'], on: 'resume', to: 'claim-window', effects: ['resume-claim-window'] },
  { from: ['claim-window'], on: 'claimed', to: 'claim-window', effects: ['save-record'] },
  { from: ['claim-window'], on: 'all-claimed', to: 'finishing', effects: ['stop-timers', 'deliver-prizes'] },
  { from: ['claim-window'], on: 'claim-deadline', to: 'claim-window', effects: ['replace-unclaimed'] },
  {
    from: ['claim-window'],
    on: 'replacements-asked',
    to: 'claim-window',
    effects: ['open-claim-window', 'save-record'],
  },
  { from: ['claim-window'], on: 'rerolled-in-claim', to: 'claim-window', effects: ['ask-replacement'] },
  { from: ['claim-window'], on: 'claim-over', to: 'finishing', effects: ['deliver-prizes'] },
  // Finishing: the flow delivers (Fourthwall finish, gift links, giveaway links).
  { from: ['finishing'], on: 'resume', to: 'finishing', effects: ['resume-delivery'] },
  { from: ['finishing'], on: 'delivered', to: 'settled', effects: ['settle-winners'] },
  { from: ['finishing'], on: 'too-few', to: 'failed', effects: ['hand-back'] },
  // Failures, cancel and retry.
  { from: ['open', ...RUNNING], on: 'failed', to: 'failed', effects: ['record-failure'] },
  { from: ['open', 'claim-window'], on: 'cancel', to: 'cancelled', effects: ['record-cancel'] },
  { from: ['failed'], on: 'retry', to: 'finishing', effects: ['reopen-for-retry', 'deliver-prizes'] },
  // Fourthwall reports the gift draw ended (GIFT_DRAW_ENDED) with its winners.
  {
    from: ['open', 'claim-window', 'failed'],
    on: 'ended-at-fourthwall',
    to: 'settled',
    effects: ['stop-timers', 'apply-fourthwall-winners'],
  },
  { from: ['settled'], on: 'ended-at-fourthwall', to: 'settled', effects: ['reconcile-fourthwall-winners'] },
];

const INDEX = new Map<string, Transition>();
for (const t of TRANSITIONS) {
  for (const from of t.from) {
    const key = `${from}|${t.on}`;
    if (INDEX.has(key)) throw new Error(`draw machine: ${key} appears twice`);
    INDEX.set(key, t);
  }
}

/** The transition `on` makes from `phase`, or undefined when it does not apply there. */
export function next(phase: DrawPhase, on: TriggerName): Transition | undefined {
  return INDEX.get(`${phase}|${on}`);
}

/**
 * The phase a stored record resumes in after a restart (its `resume` trigger does the rest), or
 * 'failed' with a reason when it cannot be resumed fairly.
 */
export function restoredPhase(
  record: DrawRecord,
  now: number,
): { phase: DrawPhase; trigger: 'resume' | 'close' } | { phase: 'closing'; failed: string } {
  const seedHex = record.pendingSeed ?? record.fairness.seed;
  if (!seedHex || !/^[0-9a-f]{64}$/i.test(seedHex))
    return { phase: 'closing', failed: 'the draw could not be resumed after a restart' };
  if (record.status === 'open')
    return { phase: 'open', trigger: now < Date.parse(record.closesAt) ? 'resume' : 'close' };
  if (record.finishInFlight) return { phase: 'finishing', trigger: 'resume' };
  if (record.claim && record.winners.length) return { phase: 'claim-window', trigger: 'resume' };
  if (record.winners.length && record.frozenEntrants) return { phase: 'finishing', trigger: 'resume' };
  return { phase: 'closing', trigger: 'resume' };
}

/** The coarse phase the operator pages show (dashboard, overlay, live console). */
export type DrawViewPhase = 'open' | 'picking' | 'claim' | 'finalizing' | 'done';

export function viewPhase(phase: DrawPhase): DrawViewPhase {
  switch (phase) {
    case 'opening':
    case 'open':
      return 'open';
    case 'closing':
    case 'awaiting-beacon':
    case 'picking':
      return 'picking';
    case 'claim-window':
      return 'claim';
    case 'finishing':
      return 'finalizing';
    default:
      return 'done';
  }
}

/** Why a winner may not be replaced (reroll.ts words each one for chat and the dashboard). */
export type RerollRefusal =
  'busy' | 'settled-at-fourthwall' | 'cancelled' | 'replaced' | 'redeemed' | 'not-redeemable' | 'gift-out';

/** What the reroll rule needs to know of the winner to replace (absent: only the phase is asked). */
export interface RerollTarget {
  /** This winner was replaced already (the draw's reroll log names them): one reroll per winner. */
  replaced: boolean;
  /** Fourthwall says this winner's prize was redeemed: the gift or link is spent, nothing is left to pass on. */
  redeemed: boolean;
  /** Fourthwall says this winner's prize can no longer be redeemed (cancelled, changed to a promotion or a gift card): nothing is left to pass on either. */
  closed: boolean;
  /**
   * This winner's link exists, so it has gone out (the console and the dashboard show a link the
   * moment it exists; whispers, the claim page and chat may have shown it too): it stays theirs.
   * A link giveaway makes the replacement a new link; a gift cannot be issued again (refused).
   */
  linkOut?: boolean;
}

/**
 * Whether a winner of a draw in `phase` may be replaced (`!giveaway reroll`, the dashboard's
 * Reroll): not while the winners are being picked or confirmed, never for a gift draw settled at
 * Fourthwall, never once cancelled, never twice for one winner, never once the prize was redeemed
 * or closed by the shop (cancelled, changed to a promotion or a gift card), and never for a gift
 * whose link has gone out (`gift-out`: a gift cannot be issued again, and the link stays its
 * winner's; a link giveaway's winner in that case is replaced with a new link, giveaway/reroll.ts).
 */
export function rerollRefusal(
  phase: DrawPhase,
  kind: DrawRecord['kind'],
  target?: RerollTarget,
): RerollRefusal | undefined {
  if (
    phase === 'closing' ||
    phase === 'awaiting-beacon' ||
    phase === 'picking' ||
    phase === 'finishing' ||
    phase === 'opening'
  )
    return 'busy';
  if (phase === 'cancelled') return 'cancelled';
  if ((phase === 'settled' || phase === 'failed') && kind === 'gift-draw') return 'settled-at-fourthwall';
  if (target?.replaced) return 'replaced';
  if (target?.redeemed) return 'redeemed';
  if (target?.closed) return 'not-redeemable';
  if (target?.linkOut && kind !== 'link-giveaway') return 'gift-out';
  return undefined;
}

/** The terminal phase a stored, closed record is in. */
export function storedPhase(record: DrawRecord): DrawPhase {
  if (record.status === 'cancelled') return 'cancelled';
  if (record.status === 'finished') return 'settled';
  return 'failed';
}
