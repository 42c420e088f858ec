/**
 * Delivery states in words: one label per winner (what `npm run history`, the dashboard and the
 * tests show) and a one-cell summary per draw. Pure; no I/O.
 *
 * A winner's label is the furthest step seen: `redeemed` > `opened` (logged in on the claim page)
 * > `whispered, not opened` (Twitch accepted a whisper; it may have been dropped silently, so
 * this is never proof of delivery) > `announced`. A prize is *waiting* until it is redeemed.
 */
import type { Delivery, DrawRecord, Winner } from '../giveaway/model.js';

export type DeliveryLabel = 'redeemed' | 'opened' | 'whispered, not opened' | 'announced';

export function deliveryLabel(d: Delivery): DeliveryLabel {
  if (d.redeemedAt) return 'redeemed';
  if (d.claimPageOpenedAt) return 'opened';
  if (d.whisperedAt) return 'whispered, not opened';
  return 'announced';
}

/** True when the winner has a tracked prize that is not redeemed yet. */
export function isWaiting(w: Pick<Winner, 'delivery'>): boolean {
  return w.delivery !== undefined && !w.delivery.redeemedAt;
}

/** One cell for a draw: `-` when nothing is tracked, `all redeemed`, or counts per label (`1 redeemed, 2 announced`). */
export function deliverySummary(record: Pick<DrawRecord, 'winners'>): string {
  const tracked = record.winners.filter((w) => w.delivery);
  if (tracked.length === 0) return '-';
  const counts = new Map<DeliveryLabel, number>();
  for (const w of tracked) {
    const l = deliveryLabel(w.delivery!);
    counts.set(l, (counts.get(l) ?? 0) + 1);
  }
  if (counts.get('redeemed') === tracked.length) return 'all redeemed';
  const order: DeliveryLabel[] = ['redeemed', 'opened', 'whispered, not opened', 'announced'];
  return order.filter((l) => counts.has(l)).map((l) => `${counts.get(l)} ${l}`).join(', ');
}
