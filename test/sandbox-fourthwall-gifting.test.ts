import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/shared/clock.js';
import {
  SEED_PRODUCT_IDS,
  startFourthwallSandbox,
  type FourthwallSandbox,
  type FourthwallSandboxOptions,
} from '../src/sandbox/fourthwall/index.js';
import { basic, call, signatureMatches, startReceiver, type Receiver } from './support/sandbox-fourthwall-helpers.js';

let sb: FourthwallSandbox | undefined;
let rx: Receiver | undefined;
afterEach(async () => {
  await sb?.close();
  await rx?.close();
  sb = undefined;
  rx = undefined;
});

const GIFT_TYPES = ['GIFT_PURCHASE', 'GIFT_DRAW_STARTED', 'GIFT_DRAW_ENDED'];

async function setup(
  options: FourthwallSandboxOptions = {},
): Promise<{ sb: FourthwallSandbox; rx: Receiver; control: string }> {
  sb = await startFourthwallSandbox({ webhookSecret: 'e3f93c7c-c92b-4b8f-a9b1-5b70e0891abc', ...options });
  rx = await startReceiver();
  const created = await call(`${sb.apiUrl}/webhooks`, {
    method: 'POST',
    headers: basic(sb),
    body: { url: rx.url, allowedTypes: GIFT_TYPES },
  });
  expect(created.status).toBe(200);
  return { sb, rx, control: `${new URL(sb.apiUrl).origin}/__sandbox` };
}

async function goLive(s: FourthwallSandbox): Promise<void> {
  const r = await call(`${s.apiUrl}/streaming/start`, {
    method: 'PUT',
    headers: basic(s),
    body: {
      services: [
        {
          type: 'TWITCH',
          broadcasterId: '4242',
          broadcasterLogin: 'streamer',
          thumbnailUrl: 'https://example.com/t.jpg',
        },
      ],
    },
  });
  expect(r.body).toEqual({
    shopId: s.state.shop.id,
    services: [
      {
        type: 'TWITCH',
        status: 'ONLINE',
        broadcasterId: '4242',
        broadcasterLogin: 'streamer',
        thumbnailUrl: 'https://example.com/t.jpg',
      },
    ],
  });
}

function participants(n: number): { service: string; userId: string; userName: string }[] {
  return Array.from({ length: n }, (_, i) => ({ service: 'TWITCH', userId: `${1000 + i}`, userName: `viewer${i}` }));
}

describe('Fourthwall sandbox gifting', () => {
  it('refuses a purchase while offline, then runs purchase -> signed webhooks -> finish -> GIFT_DRAW_ENDED', async () => {
    const { sb, rx, control } = await setup();
    const offline = await call(`${control}/gift-purchases`, {
      method: 'POST',
      headers: basic(sb),
      body: { quantity: 2 },
    });
    expect(offline.status).toBe(409);
    expect(offline.body.code).toBe('SHOP_NOT_LIVE');
    expect(() => sb.control.simulateGiftPurchase({ quantity: 1 })).toThrow(/SHOP_NOT_LIVE/);
    expect(sb.state.giftPurchases.size).toBe(0);

    await goLive(sb);
    const bought = await call(`${control}/gift-purchases`, {
      method: 'POST',
      headers: basic(sb),
      body: { quantity: 2, productId: SEED_PRODUCT_IDS.hoodie, username: 'big_gifter', message: 'gg' },
    });
    expect(bought.status).toBe(201);
    const { purchase, draw } = bought.body;
    expect(purchase.id).toMatch(/^giv_[A-Za-z0-9_-]{22}$/);
    expect(purchase.gifts).toHaveLength(2);
    expect(
      purchase.gifts.every((g: { id: string; status: string }) => /^gft_/.test(g.id) && g.status === 'AVAILABLE'),
    ).toBe(true);
    expect(draw).toMatchObject({
      type: 'INITIAL',
      giveawayId: purchase.id,
      durationSeconds: 60,
      username: 'big_gifter',
      message: 'gg',
    });
    expect(draw.id).toMatch(/^gdr_/);
    expect(draw.offer).toMatchObject({ id: SEED_PRODUCT_IDS.hoodie, slug: 'giftdrop-hoodie' });

    const purchaseEvt = await rx.waitFor((w) => w.json.type === 'GIFT_PURCHASE');
    const startedEvt = await rx.waitFor((w) => w.json.type === 'GIFT_DRAW_STARTED');
    for (const evt of [purchaseEvt, startedEvt]) {
      expect(
        signatureMatches(evt.raw, evt.headers['x-fourthwall-hmac-sha256'], 'e3f93c7c-c92b-4b8f-a9b1-5b70e0891abc'),
      ).toBe(true);
      expect(signatureMatches(evt.raw, evt.headers['x-fourthwall-hmac-sha256'], 'wrong-secret')).toBe(false);
      expect(evt.headers['content-type']).toBe('application/json');
      expect(evt.headers['x-fourthwall-hmac-apps-sha256']).toBeUndefined();
      expect(evt.json).toMatchObject({ testMode: false, shopId: sb.state.shop.id, apiVersion: 'V1' });
      expect(evt.json.id).toMatch(/^weve_/);
      expect(evt.json.webhookId).toMatch(/^wcon_/);
    }
    expect(purchaseEvt.json.data).toEqual(purchase);
    expect(startedEvt.json.data).toEqual(draw);

    // Get draw and gift purchase agree.
    expect((await call(`${sb.apiUrl}/gifting/draw/${draw.id}`, { headers: basic(sb) })).body).toEqual(draw);
    expect((await call(`${sb.apiUrl}/gift-purchase/${purchase.id}`, { headers: basic(sb) })).body).toEqual(purchase);

    const finished = await call(`${sb.apiUrl}/gifting/draw/${draw.id}/finish`, {
      method: 'PUT',
      headers: basic(sb),
      body: { participants: participants(2) },
    });
    expect(finished.status).toBe(200);
    const winners = finished.body.gifts.map(
      (g: { winner: { username: string; redeemUri: string; selectedAt: string } }) => g.winner,
    );
    expect(winners.map((w: { username: string }) => w.username)).toEqual(['viewer0', 'viewer1']);
    for (const [i, w] of winners.entries()) {
      expect(w.redeemUri.startsWith(`${sb.shopUrl}/gifts/${finished.body.gifts[i].id}/redeem?`)).toBe(true);
      expect(w.selectedAt).toBe(new Date(Date.parse(w.selectedAt)).toISOString());
    }
    const endedEvt = await rx.waitFor((w) => w.json.type === 'GIFT_DRAW_ENDED');
    expect(endedEvt.json.data).toEqual(finished.body);

    // The purchase shows winners without redeem links.
    const after = await call(`${sb.apiUrl}/gift-purchase/${purchase.id}`, { headers: basic(sb) });
    expect(after.body.gifts[0].winner).toEqual({ selectedAt: winners[0].selectedAt, username: 'viewer0' });

    // Finishing twice is refused and changes nothing.
    const twice = await call(`${sb.apiUrl}/gifting/draw/${draw.id}/finish`, {
      method: 'PUT',
      headers: basic(sb),
      body: { participants: participants(1) },
    });
    expect(twice.status).toBe(400);
    expect(twice.body).toEqual({ code: 'GIVEAWAY_DRAW_ALREADY_FINISHED', drawId: draw.id });
    expect((await call(`${sb.apiUrl}/gifting/draw/${draw.id}`, { headers: basic(sb) })).body).toEqual(finished.body);

    // Winners can redeem: an order is placed with the gift as its source.
    const order = sb.control.redeemGift(finished.body.gifts[0].id);
    expect(order.source).toEqual({
      type: 'TWITCH_GIFT_REDEMPTION',
      giftPurchaseId: purchase.id,
      giftId: finished.body.gifts[0].id,
    });
    const redeemedDraw = await call(`${sb.apiUrl}/gifting/draw/${draw.id}`, { headers: basic(sb) });
    expect(redeemedDraw.body.gifts[0]).toMatchObject({
      status: 'REDEEMED',
      orderId: order.id,
      orderFriendlyId: order.friendlyId,
    });
  });

  it('refuses a participant count that does not match the AVAILABLE gifts (more or fewer) with DATA_MISMATCH, then accepts one per gift', async () => {
    const { sb } = await setup();
    sb.control.setLive(true);
    const { draw } = sb.control.simulateGiftPurchase({ quantity: 2 });
    const mismatch = await call(`${sb.apiUrl}/gifting/draw/${draw['id']}/finish`, {
      method: 'PUT',
      headers: basic(sb),
      body: { participants: participants(3) },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toEqual({ code: 'GIVEAWAY_DRAW_FINISHED_DATA_MISMATCH', availableGifts: 2, participants: 3 });
    expect(sb.state.draw(draw['id'] as string).status).toBe('OPEN');

    const bad = await call(`${sb.apiUrl}/gifting/draw/${draw['id']}/finish`, {
      method: 'PUT',
      headers: basic(sb),
      body: { participants: [{ service: 'TWITCH', userId: '1' }] },
    });
    expect(bad.body).toMatchObject({ code: 'VALIDATION_ERROR', field: 'participants[0].userName' });

    const fewer = await call(`${sb.apiUrl}/gifting/draw/${draw['id']}/finish`, {
      method: 'PUT',
      headers: basic(sb),
      body: { participants: participants(1) },
    });
    expect(fewer.status).toBe(400);
    expect(fewer.body).toEqual({ code: 'GIVEAWAY_DRAW_FINISHED_DATA_MISMATCH', availableGifts: 2, participants: 1 });
    expect(sb.state.draw(draw['id'] as string).status).toBe('OPEN');

    const two = await call(`${sb.apiUrl}/gifting/draw/${draw['id']}/finish`, {
      method: 'PUT',
      headers: basic(sb),
      body: { participants: participants(2) },
    });
    expect(two.status).toBe(200);
    expect(two.body.gifts.filter((g: { winner?: unknown }) => g.winner)).toHaveLength(2);
  });

  it('finishing with zero participants is a mismatch too: the draw stays open for Fourthwall to close', async () => {
    const { sb } = await setup();
    sb.control.setLive(true);
    const { draw } = sb.control.simulateGiftPurchase({ quantity: 1 });
    const r = await call(`${sb.apiUrl}/gifting/draw/${draw['id']}/finish`, {
      method: 'PUT',
      headers: basic(sb),
      body: { participants: [] },
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ code: 'GIVEAWAY_DRAW_FINISHED_DATA_MISMATCH', availableGifts: 1, participants: 0 });
    expect(sb.state.draw(draw['id'] as string).status).toBe('OPEN');
  });

  it('closes an unfinished draw after durationSeconds + 60 s and opens a REDO draw (ManualClock)', async () => {
    const clock = new ManualClock();
    const { sb, rx } = await setup({ clock, drawDurationSeconds: 30 });
    sb.control.setLive(true);
    const { draw, purchase } = sb.control.simulateGiftPurchase({ quantity: 2 });
    expect(draw['durationSeconds']).toBe(30);
    await rx.waitFor((w) => w.json.type === 'GIFT_DRAW_STARTED');

    clock.advance(89_999);
    expect(sb.state.draw(draw['id'] as string).status).toBe('OPEN');
    clock.advance(1);
    expect(sb.state.draw(draw['id'] as string).status).toBe('EXPIRED');

    const ended = await rx.waitFor((w) => w.json.type === 'GIFT_DRAW_ENDED');
    expect(ended.json.data.id).toBe(draw['id']);
    expect(ended.json.data.gifts.every((g: { winner?: unknown }) => g.winner === undefined)).toBe(true);
    const redoEvt = await rx.waitFor((w) => w.json.type === 'GIFT_DRAW_STARTED' && w.json.data.type === 'REDO');
    const redo = redoEvt.json.data;
    expect(redo.id).not.toBe(draw['id']);
    expect(redo.giveawayId).toBe(purchase['id']);
    expect(redo.gifts.map((g: { id: string }) => g.id)).toEqual((draw['gifts'] as { id: string }[]).map((g) => g.id));
    expect(redo.createdAt).toBe(new Date(clock.now()).toISOString());

    const late = await call(`${sb.apiUrl}/gifting/draw/${draw['id']}/finish`, {
      method: 'PUT',
      headers: basic(sb),
      body: { participants: participants(1) },
    });
    expect(late.body).toEqual({ code: 'GIVEAWAY_DRAW_ALREADY_FINISHED', drawId: draw['id'] });
    const ok = await call(`${sb.apiUrl}/gifting/draw/${redo.id}/finish`, {
      method: 'PUT',
      headers: basic(sb),
      body: { participants: participants(2) },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.type).toBe('REDO');

    // A finished REDO draw never expires.
    clock.advance(200_000);
    expect(sb.state.draw(redo.id).status).toBe('FINISHED');
  });

  it('expires a draw on demand over HTTP control (REDO follows) and refuses to expire it twice', async () => {
    const { sb, rx, control } = await setup();
    sb.control.setLive(true);
    const { draw } = sb.control.simulateGiftPurchase({ quantity: 1 });
    const r = await call(`${control}/draws/${draw['id']}/expire`, { method: 'POST', headers: basic(sb) });
    expect(r.status).toBe(200);
    expect(r.body.ended.id).toBe(draw['id']);
    expect(r.body.redo.type).toBe('REDO');
    await rx.waitFor((w) => w.json.type === 'GIFT_DRAW_STARTED' && w.json.data.id === r.body.redo.id);
    const again = await call(`${control}/draws/${draw['id']}/expire`, { method: 'POST', headers: basic(sb) });
    expect(again.body.code).toBe('GIVEAWAY_DRAW_ALREADY_FINISHED');
  });

  it('creates, lists and fetches giveaway link packages', async () => {
    const { sb } = await setup();
    const created = await call(`${sb.apiUrl}/giveaway-links`, {
      method: 'POST',
      headers: basic(sb),
      body: { productId: SEED_PRODUCT_IDS.tshirt, number: 3 },
    });
    expect(created.status).toBe(200);
    expect(created.body.packageId).toMatch(/^gpg_/);
    expect(created.body.giveawayLinks).toHaveLength(3);
    for (const l of created.body.giveawayLinks) {
      expect(l).toMatchObject({ status: 'AVAILABLE', productId: SEED_PRODUCT_IDS.tshirt });
      expect(l.id).toMatch(/^gft_/);
      expect(l.link).toBe(`${sb.shopUrl}/gifts/${l.id}`);
    }
    expect(new Set(created.body.giveawayLinks.map((l: { id: string }) => l.id)).size).toBe(3);

    const list = await call(`${sb.apiUrl}/giveaway-links/packages`, { headers: basic(sb) });
    expect(list.body).toEqual({
      packages: [{ packageId: created.body.packageId, createdAt: created.body.giveawayLinks[0].createdAt }],
    });
    const fetched = await call(`${sb.apiUrl}/giveaway-links/packages/${created.body.packageId}`, {
      headers: basic(sb),
    });
    expect(fetched.body).toEqual(created.body);

    // Redeeming a link on the shop site marks it REDEEMED and places a GIVEAWAY_LINKS order.
    const page = await fetch(created.body.giveawayLinks[0].link);
    expect(page.status).toBe(200);
    const redeem = await fetch(created.body.giveawayLinks[0].link, { method: 'POST' });
    expect(redeem.status).toBe(200);
    const again = await call(`${sb.apiUrl}/giveaway-links/packages/${created.body.packageId}`, { headers: basic(sb) });
    expect(again.body.giveawayLinks[0].status).toBe('REDEEMED');
    const orders = [...sb.state.orders.values()].filter((o) => o.source.type === 'GIVEAWAY_LINKS');
    expect(orders.map((o) => o.source.giftId)).toEqual([created.body.giveawayLinks[0].id]);
  });

  it('the shop closes a prize over HTTP control: a link CANCELLED (with cancelledAt), a gift changed to a gift card; neither redeemable then', async () => {
    const { sb, control } = await setup();
    const created = await call(`${sb.apiUrl}/giveaway-links`, {
      method: 'POST',
      headers: basic(sb),
      body: { productId: SEED_PRODUCT_IDS.mug, number: 2 },
    });
    const [first, second] = created.body.giveawayLinks as { id: string; link: string }[];
    const cancelled = await call(`${control}/gifts/${first!.id}/close`, {
      method: 'POST',
      headers: basic(sb),
      body: {},
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id: first!.id, status: 'CANCELLED' });
    const pkg = await call(`${sb.apiUrl}/giveaway-links/packages/${created.body.packageId}`, { headers: basic(sb) });
    expect(pkg.body.giveawayLinks[0]).toMatchObject({ status: 'CANCELLED', cancelledAt: cancelled.body.cancelledAt });
    expect(Number.isFinite(Date.parse(pkg.body.giveawayLinks[0].cancelledAt))).toBe(true);
    expect(pkg.body.giveawayLinks[1].status).toBe('AVAILABLE');
    // a cancelled link cannot be redeemed, nor closed again; a link has no gift-card status
    expect((await fetch(first!.link, { method: 'POST' })).status).toBe(400);
    expect(
      (await call(`${control}/gifts/${first!.id}/close`, { method: 'POST', headers: basic(sb), body: {} })).body.code,
    ).toBe('GIFT_NOT_REDEEMABLE');
    expect(
      (
        await call(`${control}/gifts/${second!.id}/close`, {
          method: 'POST',
          headers: basic(sb),
          body: { status: 'CHANGED_TO_GIFT_CARD' },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await call(`${control}/gifts/${second!.id}/close`, {
          method: 'POST',
          headers: basic(sb),
          body: { status: 'REDEEMED' },
        })
      ).status,
    ).toBe(400);
    expect(
      (await call(`${control}/gifts/gft_nope/close`, { method: 'POST', headers: basic(sb), body: {} })).status,
    ).toBe(404);

    // a drawn gift changed to a gift card: GET draw says so, and it cannot be redeemed
    sb.control.setLive(true);
    const { draw } = sb.control.simulateGiftPurchase({ quantity: 1 });
    const finished = await call(`${sb.apiUrl}/gifting/draw/${draw['id']}/finish`, {
      method: 'PUT',
      headers: basic(sb),
      body: { participants: participants(1) },
    });
    const giftId = finished.body.gifts[0].id as string;
    const changed = await call(`${control}/gifts/${giftId}/close`, {
      method: 'POST',
      headers: basic(sb),
      body: { status: 'CHANGED_TO_GIFT_CARD' },
    });
    expect(changed.body).toMatchObject({ id: giftId, status: 'CHANGED_TO_GIFT_CARD' });
    expect((await call(`${sb.apiUrl}/gifting/draw/${draw['id']}`, { headers: basic(sb) })).body.gifts[0].status).toBe(
      'CHANGED_TO_GIFT_CARD',
    );
    expect(() => sb.control.redeemGift(giftId)).toThrow();
  });

  it('reproduces ids with a seed', async () => {
    const a = await startFourthwallSandbox({ seed: 'demo' });
    const b = await startFourthwallSandbox({ seed: 'demo' });
    try {
      a.control.setLive(true);
      b.control.setLive(true);
      expect(a.control.simulateGiftPurchase({ quantity: 1 }).draw['id']).toBe(
        b.control.simulateGiftPurchase({ quantity: 1 }).draw['id'],
      );
    } finally {
      await a.close();
      await b.close();
    }
  });
});
