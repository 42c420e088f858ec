/**
 * The three giveaway flows by record kind, for the runner (runner.ts).
 *
 * Contract: every DrawRecord kind has exactly one flow. Does not: hold state.
 */
import type { DrawRecord } from '../model.js';
import type { DrawFlow } from './flow.js';
import { giftDrawFlow } from './gift-draw.js';
import { giftPurchaseFlow } from './gift-purchase.js';
import { linkGiveawayFlow } from './link-giveaway.js';

const FLOWS: Record<DrawRecord['kind'], DrawFlow> = {
  'gift-draw': giftDrawFlow,
  'gift-purchase': giftPurchaseFlow,
  'link-giveaway': linkGiveawayFlow,
};

/** The flow a draw of `kind` follows. */
export function flowOf(kind: DrawRecord['kind']): DrawFlow {
  return FLOWS[kind];
}
