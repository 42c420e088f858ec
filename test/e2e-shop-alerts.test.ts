/**
 * Supporter alerts end to end (issue 14): the Fourthwall sandbox's supporters place orders,
 * donate, become members, get thank-yous and buy gifts; the signed webhooks reach the real bot
 * (in-process, live code paths) over HTTP; the alerts appear in the local Twitch chat server and
 * as `alert` events. Privacy: an order's email, address and ids reach neither chat, nor the log,
 * nor the alert event. Bursts: 20 orders become a few coalesced lines, with no NOTICE.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AlertView } from '../src/shop/index.js';
import { startLinkStack, type LinkStack } from './support/e2e-link-stack.js';

const stacks: LinkStack[] = [];
async function stack(
  settings: Record<string, unknown>,
  chat?: NonNullable<Parameters<typeof startLinkStack>[0]>['chat'],
): Promise<LinkStack> {
  const s = await startLinkStack({ settings, ...(chat ? { chat } : {}) });
  stacks.push(s);
  return s;
}
afterEach(async () => {
  for (const s of stacks.splice(0)) await s.close(true);
});

function alertsOf(s: LinkStack): AlertView[] {
  const seen: AlertView[] = [];
  s.bot.shop.alerts.on('alert', (a: AlertView) => seen.push(a));
  return seen;
}

describe('supporter alerts', () => {
  it('announces each alert type with its template, at low priority, and emits the safe view', async () => {
    const s = await stack({
      alerts: {
        showAmounts: true,
        order: { template: 'ORDER by {user}: {products}{amount}' },
        donation: { template: 'DONATION by {user}{amount}' },
        subscription: { enabled: true, template: 'MEMBER {user} ({tier}){amount}' },
        thankYou: { enabled: true, template: 'THANKS sent to {user}' },
        giftPurchase: { enabled: true, template: 'GIFT by {user}: {products}{amount}' }, // off by default
      },
    });
    const seen = alertsOf(s);
    const sim = s.fw.control.shop;

    sim.placeOrder({ product: 'giftdrop-mug', username: 'ana_buys', quantity: 2 });
    expect(await s.nextBotLine(/^ORDER by/)).toBe('ORDER by ana_buys: Giftdrop Mug ($35.00)');
    sim.donate({ username: 'dora', amount: 7.5 });
    expect(await s.nextBotLine(/^DONATION by/)).toBe('DONATION by dora ($7.50)');
    sim.subscribe({ nickname: 'mia', amount: 5 });
    expect(await s.nextBotLine(/^MEMBER/)).toBe('MEMBER mia (monthly) ($5.00)');
    sim.sendThankYou({ contributionType: 'DONATION' });
    expect(await s.nextBotLine(/^THANKS/)).toBe('THANKS sent to dora');
    s.fw.control.setLive(true, { broadcasterId: s.chat.channelId, broadcasterLogin: s.chat.channel });
    s.fw.control.simulateGiftPurchase({ quantity: 3, username: 'gus_gives' });
    expect(await s.nextBotLine(/^GIFT by/)).toMatch(/^GIFT by gus_gives: 3× Giftdrop .+ \(\$\d+\.\d\d\)$/);

    expect(seen.map((a) => a.kind)).toEqual(['order', 'donation', 'subscription', 'thankYou', 'giftPurchase']);
    expect(seen[0]).toEqual({
      kind: 'order',
      user: 'ana_buys',
      products: ['Giftdrop Mug'],
      amount: { value: 35, currency: 'USD' },
      at: expect.any(String),
    });
    // Dashboard feed: the order and the donation, newest first, no PII.
    const feed = s.bot.shop.feed.recent();
    expect(feed.slice(0, 2).map((e) => [e.kind, e.user])).toEqual([
      ['donation', 'dora'],
      ['order', 'ana_buys'],
    ]);
  });

  it("never lets an order's email, address or ids reach chat, the log or the alert event, and neutralises chat commands in names", async () => {
    const s = await stack({ alerts: { order: { template: '{user} bought {products}' } } });
    const seen = alertsOf(s);
    const order = s.fw.control.shop.placeOrder({
      product: 'giftdrop-hoodie',
      username: '/ban streamer',
      email: 'very.private.person@example.org',
      message: 'my phone is 555 0199',
    });
    const line = await s.nextBotLine(/bought Giftdrop Hoodie/);
    expect(line).not.toMatch(/^[/.]/);
    expect(line).toContain('ban streamer bought Giftdrop Hoodie');
    await s.idle();

    const address = order.shipping.address;
    const secrets = [
      order.email,
      order.id,
      order.friendlyId,
      order.checkoutId,
      address.address1,
      address.name,
      address.zip!,
      order.message,
    ];
    const transcript = s.chat.transcript.map((e) => e.text).join('\n');
    const logs = s.log.text();
    const events = JSON.stringify(seen);
    const feed = JSON.stringify(s.bot.shop.feed.recent());
    for (const secret of secrets) {
      expect(transcript).not.toContain(secret);
      expect(logs).not.toContain(secret);
      expect(events).not.toContain(secret);
      expect(feed).not.toContain(secret);
    }
    expect(seen).toHaveLength(1);
    expect(Object.keys(seen[0]!).sort()).toEqual(['at', 'kind', 'products', 'user']);
  });

  it('coalesces a burst of 20 orders into a few lines, with zero NOTICEs (bot not a moderator)', async () => {
    const s = await stack({ alerts: { burstWindowSeconds: 4 } }, { botIsMod: false });
    const seen = alertsOf(s);
    const from = s.mark();
    for (let i = 0; i < 20; i++) s.fw.control.shop.placeOrder({ product: 'giftdrop-mug', username: `fan${i}` });
    await s.chat.waitFor(() => seen.length === 20, 15_000, '20 alerts');
    // Every order is accounted for in chat: one line for the first, then coalesced counts.
    const covered = () =>
      s.botLines(from).reduce((n, l) => {
        const m = /^(\d+) new orders in the last 4 seconds/.exec(l);
        if (m) return n + Number(m[1]);
        return /just bought/.test(l) ? n + 1 : n;
      }, 0);
    await s.chat.waitFor(() => covered() === 20, 20_000, 'all 20 orders said');
    const lines = s.botLines(from).filter((l) => /just bought|new orders/.test(l));
    // One line for the first order, one per window after it (a slow machine may need a second window).
    expect(lines.length).toBeLessThanOrEqual(5);
    expect(lines[0]).toBe('🛍️ fan0 just bought Giftdrop Mug. Thank you!');
    expect(lines.some((l) => /^\d+ new orders in the last 4 seconds\. Thank you fan\d+, /.test(l))).toBe(true);
    expect(s.chat.notices()).toEqual([]);
  }, 60_000);

  it('turns an alert type off (not even subscribed), and does not alert gift redemptions as orders', async () => {
    const s = await stack({ alerts: { donation: { enabled: false }, order: { template: 'ORDER {user}' } } });
    const seen = alertsOf(s);
    expect(s.bot.webhookTypes).not.toContain('DONATION');
    expect(s.bot.webhookTypes).toContain('ORDER_PLACED');

    // A giveaway-link redemption is an order the winner did not pay for.
    const paid = s.fw.control.shop.placeOrder({ product: 'mug', username: 'first_payer' });
    await s.nextBotLine(/^ORDER first_payer$/);
    const [redemption] = s.fw.control.emitEvent('ORDER_PLACED', {
      ...paid,
      id: 'a1b2c3d4-0000-4000-8000-000000000001',
      username: 'link_winner',
      source: { type: 'GIVEAWAY_LINKS', giftId: 'gft_EdJvIXu3SEiXe_QkPavHSA' },
    });
    await s.fw.control.waitForDelivery((d) => d.eventId === redemption!.eventId && d.done);
    s.fw.control.shop.donate({ username: 'silent_donor' });
    await s.bot.http.idle();

    expect(seen.map((a) => a.user)).toEqual(['first_payer']);
    expect(s.botLines().join('\n')).not.toMatch(/link_winner|silent_donor/);
    expect(s.fw.control.deliveries.filter((d) => d.type === 'DONATION')).toEqual([]);
  });
});
