/**
 * Promotions in chat: `!promo` picks a live promotion code from `GET /promotions` and says it;
 * when `promo.autoAnnounce` is on, a PROMOTION_STATUS_CHANGED that makes a promotion live is
 * announced too.
 *
 * Contract: a promotion is live when its status is `Live` (any case); single-code promotions
 * offer `code`, multi-code ones the first live entry of `codes[]`. `!promo <code>` picks that code
 * when it is live. Codes and titles are cleaned before they reach chat. An API failure is a chat
 * answer, never a throw. Does not create or change promotions.
 */
import type { FourthwallClient, Promotion } from '../fourthwall/index.js';
import type { PromoSettings } from '../config/shop.js';
import { render } from '../giveaway/messages.js';
import type { Logger } from '../logging/index.js';
import { cleanText } from './alerts.js';

export type PromotionsApi = Pick<FourthwallClient, 'listPromotions'>;

const isLive = (status: unknown) => typeof status === 'string' && status.toLowerCase() === 'live';

/** The live code a promotion offers, if any. */
export function liveCode(p: Promotion): string | undefined {
  if (!isLive(p.status)) return undefined;
  if (typeof p.code === 'string' && p.code) return cleanText(p.code, 40);
  const codes = (p as { codes?: { code?: unknown; status?: unknown }[] | null }).codes;
  const sub = Array.isArray(codes)
    ? codes.find((c) => typeof c?.code === 'string' && isLive(c.status ?? 'Live'))
    : undefined;
  return typeof sub?.code === 'string' ? cleanText(sub.code, 40) : undefined;
}

/** A short description of the discount: "20% off", "$5.00 off", "free shipping". */
function discountText(p: Promotion): string {
  const d = (
    p as { discount?: { type?: string; percentage?: number; money?: { value: number; currency: string } } | null }
  ).discount;
  if (d?.type?.endsWith('PERCENTAGE') && typeof d.percentage === 'number') return `${d.percentage}% off`;
  if (d?.type === 'FLAT_RATE' && d.money)
    return `${d.money.currency === 'USD' ? '$' : ''}${d.money.value.toFixed(2)}${d.money.currency === 'USD' ? '' : ` ${d.money.currency}`} off`;
  if (d?.type === 'FREE_SHIPPING') return 'free shipping';
  if (d?.type === 'FREE_PRODUCTS') return 'a free product';
  return 'a discount';
}

export class Promotions {
  private readonly log: Logger;

  constructor(private readonly o: { api: PromotionsApi; settings: PromoSettings; logger: Logger }) {
    this.log = o.logger.child({ module: 'promotions' });
  }

  /** The announcement of one promotion, or undefined when it has no live code. */
  line(p: Promotion): string | undefined {
    const code = liveCode(p);
    if (!code) return undefined;
    const title = cleanText(p.title, 80);
    return render(this.o.settings.template, { code, title: title ? `${title} (${discountText(p)})` : discountText(p) });
  }

  /** `!promo [code]`: the line to say. */
  async promoLine(wanted?: string): Promise<string> {
    let list: Promotion[];
    try {
      list = [];
      for (let page = 0; page < 5; page++) {
        const res = await this.o.api.listPromotions({ page, size: 50 });
        list.push(...res.results);
        if (res.results.length < 50 || (typeof res.totalPages === 'number' && page + 1 >= res.totalPages)) break;
      }
    } catch (err) {
      this.log.warn({ reason: (err as Error).message }, 'promotions could not be read');
      return 'The shop could not be reached for its promotions; try again.';
    }
    const w = wanted?.trim().toLowerCase();
    const pick = list.find((p) => {
      const code = liveCode(p);
      return code !== undefined && (!w || code.toLowerCase() === w);
    });
    if (!pick)
      return w ? `No live promotion has the code "${cleanText(wanted, 40)}".` : 'No promotion code is live right now.';
    return this.line(pick)!;
  }

  /** The automatic announcement for PROMOTION_STATUS_CHANGED, when enabled and live. */
  onStatusChanged(p: Promotion): string | undefined {
    if (!this.o.settings.enabled || !this.o.settings.autoAnnounce) return undefined;
    return this.line(p);
  }
}
