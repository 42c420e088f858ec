/**
 * How loud each round of one gift purchase is in chat. A gift draw with fewer eligible entrants
 * than gifts is handed back (settle.ts handBack) and Fourthwall redraws it (a `REDO` draw) one
 * entry window + 60 s later, for as long as nobody enters: every ~75 s with the default window.
 * Chat hears each thing once:
 *   round 1 (the first draw)   opened, reminders; handed back: `tooFewEntrants` (one line)
 *   round 2 (the first redraw) `redrawOpened`, reminders; handed back: `redrawsContinue` (once:
 *                              the shop keeps redrawing, and why)
 *   round 3 and later          quiet: no opened line, no reminders; handed back without a line,
 *                              unless someone entered it (they hear `tooFewEntrants`). Entries
 *                              are still acknowledged, winners announced, and `!giveaway` answers.
 *
 * Contract: `redrawVoice` counts the rounds of the same purchase (`source.giveawayId`; without
 * one, the same offer and supporter) that the engine holds in memory and that were handed back
 * before this one; pure over the registry, synchronous. After a restart the count starts again
 * from what is in memory (at worst one more `redrawOpened` and `redrawsContinue`). Does not send
 * anything, change a draw or read storage.
 */
import type { DrawRecord } from './model.js';
import type { DrawRegistry } from './registry.js';
import type { DrawSession } from './session.js';

/** How a round speaks (see the module comment). */
export type RedrawVoice = 'first' | 'redraw' | 'quiet';

/** The purchase a gift draw belongs to: its REDO draws share it. */
function purchaseKey(r: Readonly<DrawRecord>): string | undefined {
  if (r.kind !== 'gift-draw') return undefined;
  return r.source.giveawayId ?? `${r.offer.id}\u0000${r.supporter?.username ?? ''}`;
}

/** Rounds of `s`'s purchase handed back before it (in memory). */
function earlierHandedBack(draws: DrawRegistry, s: DrawSession): number {
  const key = purchaseKey(s.record);
  if (key === undefined) return 0;
  const opened = Date.parse(s.record.openedAt);
  let n = 0;
  for (const x of draws.recentSessions()) {
    const r = x.record;
    if (
      x !== s &&
      r.status === 'failed' &&
      r.kind === 'gift-draw' &&
      !r.winners.length &&
      purchaseKey(r) === key &&
      Date.parse(r.openedAt) <= opened
    )
      n += 1;
  }
  return n;
}

/** How round `s` speaks: 'first' for any draw that is not a redraw of a purchase handed back already. */
export function redrawVoice(draws: DrawRegistry, s: DrawSession): RedrawVoice {
  if (s.record.kind !== 'gift-draw' || !s.record.source.redo) return 'first';
  return earlierHandedBack(draws, s) >= 2 ? 'quiet' : 'redraw';
}
