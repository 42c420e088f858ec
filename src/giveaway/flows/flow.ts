/**
 * What a giveaway flow plugs into the draw state machine (draw-machine.ts). The three flows -
 * Fourthwall gift draws (gift-draw.ts), gift purchases (gift-purchase.ts) and moderators' link
 * giveaways (link-giveaway.ts) - share every phase and transition; they differ only in this data
 * and these functions.
 *
 * Contract: `deliver` runs in phase `finishing` and returns the trigger its outcome feeds back
 * (`delivered`, `too-few`, `failed`), or undefined when the engine stopped meanwhile (the journal
 * stays as it is for the next start). `resumeDelivery` is the same after a restart, and never
 * repeats a shop call whose outcome is unknown. Does not: change the phase, announce or settle.
 */
import type { FlowContext } from '../context.js';
import type { DrawPhase, Trigger } from '../draw-machine.js';
import type { DrawRecord } from '../model.js';
import type { DrawSession } from '../session.js';
import type { Backoff } from '../../shared/retry.js';

export interface DrawFlow {
  readonly kind: DrawRecord['kind'];
  /** The phases a draw of this flow can pass through, in order (the machine's table has the moves). */
  readonly phases: readonly DrawPhase[];
  /** Whether a claim window of `ms` from `now` still fits (a gift draw must finish before Fourthwall's deadline). */
  claimWindowFits(s: DrawSession, ms: number, now: number): boolean;
  /** Delivers the prizes of a draw in `finishing`; returns the trigger of the outcome. */
  deliver(c: FlowContext, s: DrawSession): Promise<Trigger | undefined>;
  /** Delivery after a restart (the record says which step it was at). */
  resumeDelivery(c: FlowContext, s: DrawSession): Promise<Trigger | undefined>;
}

/** How long a claim window leaves free after it so the finish call still fits Fourthwall's deadline. */
export const FINISH_RESERVE_MS = 15_000;

/** Backoff of the shop calls the flows retry: about 1 s, 2 s, 4 s ... capped at 15 s, with jitter (shared/retry.ts). */
export const SHOP_BACKOFF: Backoff = { baseMs: 1000, maxMs: 15_000 };
