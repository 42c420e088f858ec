/**
 * The gift purchase flow end to end (issue 5): with `gifting.flow = "purchase"`, a GIFT_PURCHASE
 * webhook from the Fourthwall sandbox opens one entry window (the shop's gifting configuration
 * wins over the configured window), `!giveaway end` closes it early, one winner per gift id,
 * each winner's link `https://<shop domain>/gifts/<gift id>`, delivered privately. A duplicate
 * delivery and a second event for the same purchase never run a second draw; the flow's
 * GIFT_DRAW_STARTED is not drawn as a gift draw.
 */
import { describe, expect, it } from 'vitest';
import { SEED_PRODUCT_IDS } from '../src/sandbox/fourthwall/index.js';
import { drawSettled, nextDrawOpened, startLinkStack, type LinkStack } from './support/e2e-link-stack.js';
import { perTest } from './support/per-test.js';

const stack = perTest(startLinkStack, (s) => s.close(true));
const purchaseStack = () => stack({ settings: { gifting: { flow: 'purchase', entrySeconds: 120 } } });

/** Sets the shop's gifting entry window through the sandbox's HTTP API (PUT /gifting/config). */
async function setShopEntrySeconds(s: LinkStack, seconds: number): Promise<void> {
  const auth = Buffer.from(`${s.fw.username}:${s.fw.password}`).toString('base64');
  const res = await fetch(`${s.fw.apiUrl}/gifting/config`, {
    method: 'PUT',
    headers: { authorization: `Basic ${auth}`, 'content-type': 'application/json' },
    body: JSON.stringify({ entryTimeLimitSeconds: seconds }),
  });
  expect(res.status).toBe(200);
}

describe('gift purchase flow', () => {
  it('one purchase, one draw (even with a duplicate webhook), one winner per gift id, shop links kept private', async () => {
    const s = await purchaseStack();
    await setShopEntrySeconds(s, 25);
    s.fw.control.setLive(true);
    s.fw.control.webhookFaults.duplicate({ type: 'GIFT_PURCHASE' });

    const opened = nextDrawOpened(s);
    const { purchase } = s.fw.control.simulateGiftPurchase({
      quantity: 2,
      productId: SEED_PRODUCT_IDS.hoodie,
      username: 'generous_fan',
      message: 'for chat!',
    });
    const purchaseId = purchase['id'] as string;
    const giftIds = (purchase['gifts'] as { id: string }[]).map((g) => g.id);
    const open = await opened;
    expect(open).toMatchObject({
      id: purchaseId,
      kind: 'gift-purchase',
      gifts: 2,
      offer: { id: SEED_PRODUCT_IDS.hoodie },
    });
    expect(open.giftIds).toEqual(giftIds);
    // The shop's window (25 s) wins over the configured one (120 s).
    const announced = await s.nextBotLine(/generous_fan gifted/);
    expect(announced).toMatch(
      /^🎁 generous_fan gifted 2x Giftdrop Hoodie! Type !enter in the next (25|24)s for a chance to win\./,
    );

    // Both copies of the GIFT_PURCHASE event (same id) were answered; the draw webhook too.
    await s.fw.control.waitForDelivery((d) => d.type === 'GIFT_PURCHASE' && d.duplicate && d.done);
    await s.fw.control.waitForDelivery((d) => d.type === 'GIFT_DRAW_STARTED' && d.done);
    const copies = s.fw.control.deliveries.filter((d) => d.type === 'GIFT_PURCHASE');
    expect(copies).toHaveLength(2);
    expect(new Set(copies.map((d) => d.eventId)).size).toBe(1);
    expect(copies.every((d) => d.delivered && d.statuses.at(-1) === 200)).toBe(true);
    await s.idle();
    expect(s.bot.engine.openDrawCount()).toBe(1);

    const logins = ['ana', 'ben', 'cai', 'dee'];
    s.enter(logins);
    const from = s.mark();
    const settled = drawSettled(s, purchaseId);
    s.say(s.mod, '!giveaway end');
    const { event, record } = await settled;
    expect(event).toBe('draw-finished');

    // One winner per gift id, each with the shop's gift link.
    const host = new URL(s.fw.shopUrl).host;
    expect(record.winners).toHaveLength(2);
    expect(record.winners.map((w) => w.giftId).sort()).toEqual([...giftIds].sort());
    for (const w of record.winners) {
      expect(logins).toContain(w.login);
      expect(w.redeemUrl).toBe(`https://${host}/gifts/${w.giftId}`);
      expect(s.operator.some((l) => l.includes(`@${w.login}`) && l.includes(w.redeemUrl!))).toBe(true);
    }
    expect(new Set(record.winners.map((w) => w.login)).size).toBe(2);
    const line = await s.nextBotLine(/congratulations/, from);
    expect(line).toMatch(
      /^🏆 Giftdrop Hoodie: congratulations @\w+ and @\w+! The streamer will send you your redeem link\.$/,
    );
    // No giveaway-link packages in this flow.
    expect(s.requests('createGiveawayLinks')).toHaveLength(0);

    // The same purchase as a new event (another event id) after the draw: still one draw.
    s.fw.control.emitEvent('GIFT_PURCHASE', purchase);
    await s.fw.control.waitForDelivery(
      (d) => d.type === 'GIFT_PURCHASE' && !d.duplicate && d.eventId !== copies[0]!.eventId && d.done,
    );
    await s.idle();
    expect(s.bot.engine.openDrawCount()).toBe(0);
    const rows = await s.history();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      id: purchaseId,
      kind: 'gift-purchase',
      status: 'finished',
      gifts: 2,
      entrants: 4,
      source: { giveawayId: purchaseId },
    });
    expect(rows[0]!.winners.map((w) => w.redeemUrl).sort()).toEqual(
      giftIds.map((g) => `https://${host}/gifts/${g}`).sort(),
    );
    expect(s.chat.transcript.filter((e) => e.kind === 'bot' && e.text.includes('generous_fan gifted'))).toHaveLength(1);
    expect(s.chat.transcript.filter((e) => e.kind === 'bot' && e.text.includes('congratulations'))).toHaveLength(1);

    // Links private: not in chat, not in the log.
    const transcript = s.chat.transcript.map((e) => e.text).join('\n');
    for (const g of giftIds) {
      expect(transcript).not.toContain(g);
      expect(s.log.text()).not.toContain(`/gifts/${g}`);
    }
    expect((await s.verify(purchaseId)).code).toBe(0);
  });

  it('a purchase with nobody entering finishes with no winners and no links', async () => {
    const s = await purchaseStack();
    s.fw.control.setLive(true);
    const opened = nextDrawOpened(s);
    const { purchase } = s.fw.control.simulateGiftPurchase({ quantity: 1, productId: SEED_PRODUCT_IDS.mug });
    const open = await opened;
    expect(open.id).toBe(purchase['id']);
    await s.nextBotLine(/gifted 1x Giftdrop Mug/);
    const from = s.mark();
    const settled = drawSettled(s, open.id);
    s.say(s.mod, '!giveaway end');
    const { record } = await settled;
    expect(record.winners).toEqual([]);
    await s.nextBotLine(/^Nobody entered the Giftdrop Mug giveaway/, from);
    expect(s.operator.filter((l) => l.includes('/gifts/'))).toEqual([]);
  });

  it('beside a link giveaway: one !enter joins both; cancel only touches the link giveaway', async () => {
    const s = await purchaseStack();
    s.fw.control.setLive(true);
    const linkOpened = nextDrawOpened(s);
    s.say(s.mod, '!giveaway start giftdrop-hoodie 1 60');
    const link = await linkOpened;
    await s.nextBotLine(/Giveaway: 1x Giftdrop Hoodie/);
    const purchaseOpened = nextDrawOpened(s);
    const { purchase } = s.fw.control.simulateGiftPurchase({
      quantity: 1,
      productId: SEED_PRODUCT_IDS.mug,
      username: 'generous_fan',
    });
    const bought = await purchaseOpened;
    expect(bought.id).toBe(purchase['id']);
    await s.nextBotLine(/generous_fan gifted 1x Giftdrop Mug/);
    s.enter(['ana', 'ben']);

    const cancelled = drawSettled(s, link.id);
    s.say(s.mod, '!giveaway cancel');
    expect((await cancelled).event).toBe('draw-cancelled');
    expect(s.bot.engine.openDrawCount()).toBe(1);
    const finished = drawSettled(s, bought.id);
    s.say(s.mod, '!giveaway end');
    const { event, record } = await finished;
    expect(event).toBe('draw-finished');
    expect(record.entrants).toBe(2);
    expect(record.winners).toHaveLength(1);
    expect(record.winners[0]!.redeemUrl).toBe(`https://${new URL(s.fw.shopUrl).host}/gifts/${record.giftIds![0]}`);
    await s.idle();
    const rows = await s.history();
    expect(rows.map((r) => [r.kind, r.status, r.entrants]).sort()).toEqual([
      ['gift-purchase', 'finished', 2],
      ['link-giveaway', 'cancelled', 2],
    ]);
    expect(s.requests('createGiveawayLinks')).toHaveLength(0);
  });
});
