/**
 * Delivery states in words: one label per winner (what `npm run history`, the dashboard and the
 * tests show), the one sentence the claim page and the dashboard both show (`prizeState`), and a
 * one-cell summary per draw. Pure; no I/O.
 *
 * A winner's label is the furthest step seen: `redeemed` > a closure (`cancelled`, `changed to a
 * promotion`, `changed to a gift card`: Fourthwall will no longer let it be redeemed) > `opened`
 * (logged in on the claim page) > `whispered, not opened` (Twitch accepted a whisper; it may have
 * been dropped silently, so this is never proof of delivery) > `announced`. A prize is *waiting*
 * until it is redeemed or closed.
 */
import {
  PRIZE_CLOSURE_WORDS,
  type Delivery,
  type DrawRecord,
  type PrizeClosure,
  type Winner,
} from '../giveaway/model.js';

type ClosureLabel = (typeof PRIZE_CLOSURE_WORDS)[PrizeClosure];

export type DeliveryLabel = 'redeemed' | ClosureLabel | 'opened' | 'whispered, not opened' | 'announced';

export function deliveryLabel(d: Delivery): DeliveryLabel {
  if (d.redeemedAt) return 'redeemed';
  if (d.closedAt) return PRIZE_CLOSURE_WORDS[d.closedAs ?? 'CANCELLED'];
  if (d.claimPageOpenedAt) return 'opened';
  if (d.whisperedAt) return 'whispered, not opened';
  return 'announced';
}

/** A prize's state as every page says it: the claim page (the winner) and the dashboard (the streamer). */
export interface PrizeState {
  label: DeliveryLabel;
  /** `Redeemed ✔ (order 1234)`, `Can no longer be redeemed: the shop says it was cancelled`, `Not redeemed yet (opened)`. */
  text: string;
  /** Neither redeemed nor closed by the shop (`isWaiting`). */
  waiting: boolean;
}

/** The one wording of a prize's state (see PrizeState). */
export function prizeState(d: Delivery): PrizeState {
  const label = deliveryLabel(d);
  if (d.redeemedAt)
    return { label, text: `Redeemed ✔${d.orderFriendlyId ? ` (order ${d.orderFriendlyId})` : ''}`, waiting: false };
  if (d.closedAt) return { label, text: `Can no longer be redeemed: the shop says it was ${label}`, waiting: false };
  return { label, text: `Not redeemed yet (${label})`, waiting: true };
}

/** One holder of a draw's prize: a winner, or a replaced winner who kept the link they had seen. */
export interface PrizeHolder {
  holder: Winner;
  /** Replaced by a reroll, keeping the link that had gone out to them (the replacement got a new one). */
  replaced: boolean;
}

/**
 * Who holds a prize link of `record`: its winners, then each replaced winner whose link had gone
 * out and stays theirs (a reroll's `kept`), with their delivery state: a redemption of that link
 * is theirs, never the replacement's.
 */
export function prizeHolders(record: Pick<DrawRecord, 'winners' | 'rerolls'>): PrizeHolder[] {
  const out: PrizeHolder[] = record.winners.map((holder) => ({ holder, replaced: false }));
  for (const rr of record.rerolls ?? []) {
    if (!rr.kept) continue;
    const holder: Winner = {
      userId: rr.replacedUserId,
      login: rr.replacedLogin,
      displayName: rr.replacedLogin,
      pick: -1,
      ...(rr.kept.giftId !== undefined ? { giftId: rr.kept.giftId } : {}),
      ...(rr.kept.redeemUrl !== undefined ? { redeemUrl: rr.kept.redeemUrl } : {}),
      ...(rr.delivery ? { delivery: rr.delivery } : {}),
    };
    out.push({ holder, replaced: true });
  }
  return out;
}

/** True when the winner has a tracked prize that is neither redeemed nor closed by the shop. */
export function isWaiting(w: Pick<Winner, 'delivery'>): boolean {
  return w.delivery !== undefined && !w.delivery.redeemedAt && !w.delivery.closedAt;
}

/**
 * One cell for a draw: `-` when nothing is tracked, `all redeemed`, or counts per label (`1
 * redeemed, 1 cancelled, 2 announced`), over every prize holder (a replaced winner's kept link too).
 */
export function deliverySummary(record: Pick<DrawRecord, 'winners' | 'rerolls'>): string {
  const tracked = prizeHolders(record)
    .map((h) => h.holder)
    .filter((w) => w.delivery);
  if (tracked.length === 0) return '-';
  const counts = new Map<DeliveryLabel, number>();
  for (const w of tracked) {
    const l = deliveryLabel(w.delivery!);
    counts.set(l, (counts.get(l) ?? 0) + 1);
  }
  if (counts.get('redeemed') === tracked.length) return 'all redeemed';
  const order: DeliveryLabel[] = [
    'redeemed',
    ...Object.values(PRIZE_CLOSURE_WORDS),
    'opened',
    'whispered, not opened',
    'announced',
  ];
  return order
    .filter((l) => counts.has(l))
    .map((l) => `${counts.get(l)} ${l}`)
    .join(', ');
}
