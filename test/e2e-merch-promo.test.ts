/**
 * `!merch` and `!promo` end to end (issue 14), through the local chat server, the real bot and
 * the Fourthwall sandbox over HTTP: the shop link and products from the public product feed,
 * `!merch` silent within its cooldown, the moderators' sold-out / restock round trip at the
 * sandbox (a viewer cannot), `!promo` picking the live code, and the automatic announcement when
 * a promotion goes live.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SEED_PRODUCT_IDS } from '../src/sandbox/fourthwall/index.js';
import { startLinkStack, type LinkStack } from './support/e2e-link-stack.js';

const stacks: LinkStack[] = [];
async function stack(settings: Record<string, unknown> = {}): Promise<LinkStack> {
  const s = await startLinkStack({ settings });
  stacks.push(s);
  return s;
}
afterEach(async () => {
  for (const s of stacks.splice(0)) await s.close(true);
});

const PROMO_ID = 'prm_EdJvIXu3SEiXe_QkPavHSA';

describe('!merch', () => {
  it('answers the shop link and products from the feed, then stays silent within its cooldown', async () => {
    const s = await stack({ merch: { products: 2, cooldownSeconds: 600 } });
    await s.bot.shop.catalog.refresh();
    const from = s.mark();
    s.say(s.viewer('viewer_one'), '!merch');
    const line = await s.nextBotLine(/Merch:/, from);
    expect(line).toBe(`🛍️ Merch: ${s.fw.shopUrl} · Giftdrop T-Shirt ($25.00) · Giftdrop Mug ($15.00)`);
    expect(s.fw.control.requests.some((r) => r.path.endsWith('/.well-known/merchant-center/rss.xml'))).toBe(true);

    // Within the cooldown another viewer gets nothing; a moderator's line after it proves the
    // bot read both.
    s.say(s.viewer('viewer_two'), '!merch');
    s.say(s.mod, '!merch train');
    await s.nextBotLine(/merch train is not running/, from);
    expect(s.botLines(from).filter((l) => l.includes('Merch:'))).toHaveLength(1);
  });

  it('sold-out / restock round trip at the sandbox, confirmed in chat; a viewer cannot', async () => {
    const s = await stack({ merch: { cooldownSeconds: 0, products: 5 } });
    const mug = () => s.fw.state.products.get(SEED_PRODUCT_IDS.mug)!;
    expect(mug().state.type).toBe('AVAILABLE');

    let from = s.mark();
    s.say(s.viewer('sneaky'), '!merch soldout giftdrop-mug');
    await s.nextBotLine(/Merch:/, from);
    expect(mug().state.type).toBe('AVAILABLE');
    expect(s.requests('updateProductAvailability')).toHaveLength(0);

    from = s.mark();
    s.say(s.mod, '!merch soldout giftdrop-mug');
    expect(await s.nextBotLine(/sold out/, from)).toBe('⛔ Giftdrop Mug is now marked sold out.');
    expect(mug().state.type).toBe('SOLD_OUT');
    from = s.mark();
    s.say(s.mod, '!merch');
    expect(await s.nextBotLine(/Merch:/, from)).toContain('Giftdrop Mug (sold out)');

    from = s.mark();
    s.say(s.chat.broadcaster, '!merch restock Giftdrop Mug');
    expect(await s.nextBotLine(/back in stock/, from)).toBe('✅ Giftdrop Mug is back in stock.');
    expect(mug().state.type).toBe('AVAILABLE');
    expect(s.requests('updateProductAvailability').map((r) => r.status)).toEqual([200, 200]);

    from = s.mark();
    s.say(s.mod, '!merch soldout nothing-like-this');
    expect(await s.nextBotLine(/No product matches/, from)).toBe('No product matches "nothing-like-this".');
  });
});

describe('!promo', () => {
  it('picks the live code for moderators, says when none is live, ignores viewers', async () => {
    const s = await stack();
    let from = s.mark();
    s.say(s.mod, '!promo');
    expect(await s.nextBotLine(/LAUNCH10/, from)).toBe('🏷️ Use code LAUNCH10 in the shop: Stream launch (10% off)');

    s.fw.control.shop.setPromotionStatus(PROMO_ID, 'Ended');
    from = s.mark();
    s.say(s.chat.broadcaster, '!promo');
    expect(await s.nextBotLine(/promotion/, from)).toBe('No promotion code is live right now.');

    s.say(s.viewer('viewer'), '!promo');
    s.say(s.mod, '!merch train');
    await s.nextBotLine(/merch train/, from);
    expect(s.botLines(from).filter((l) => /promotion|LAUNCH10/.test(l))).toHaveLength(1);
  });

  it('announces a promotion that goes live when autoAnnounce is on', async () => {
    const s = await stack({ promo: { autoAnnounce: true } });
    expect(s.bot.webhookTypes).toContain('PROMOTION_STATUS_CHANGED');
    s.fw.control.shop.setPromotionStatus(PROMO_ID, 'Ended');
    const from = s.mark();
    s.fw.control.shop.setPromotionStatus(PROMO_ID, 'Live');
    expect(await s.nextBotLine(/LAUNCH10/, from)).toBe('🏷️ Use code LAUNCH10 in the shop: Stream launch (10% off)');
    expect(s.botLines(from).filter((l) => l.includes('LAUNCH10'))).toHaveLength(1);
  });
});
