/**
 * The bot's webhook receiver and health endpoint over real HTTP, with the whole stack running
 * (in-process): signatures are checked before anything changes (401), unknown or unused event
 * types are acknowledged and ignored, bodies over 1 MiB get 413 (declared or streamed), bad
 * payloads 400, and /healthz has the contract's shape and counts open draws.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_WEBHOOK_BYTES } from '../src/http/server.js';
import { signWebhookBody } from '../src/fourthwall/webhooks.js';
import {
  logins,
  enterAll,
  postWebhook,
  setShopLive,
  startInProcessStack,
  waitUntil,
  webhookEnvelope,
  type InProcessStack,
} from './support/e2e-stack.js';

let s: InProcessStack;
let url: string;
let secret: string;

beforeAll(async () => {
  // The receiver under test, without the shop alerts (they act on ORDER_PLACED, DONATION and
  // GIFT_PURCHASE; test/e2e-shop-alerts.test.ts covers them): those types stay unused here.
  const alertsOff = { order: { enabled: false }, donation: { enabled: false }, giftPurchase: { enabled: false } };
  s = await startInProcessStack({
    fourthwall: { drawDurationSeconds: 2 },
    settings: { alerts: alertsOff },
    logLevel: 'debug',
  }); // per-request lines are at debug
  setShopLive({ fourthwall: s.fourthwall, chat: s.chatServer });
  url = s.bot.webhookUrl;
  secret = s.fourthwall.webhookSecret;
});
afterAll(async () => {
  await s?.close();
});

async function nothingChanged(chatLines: number): Promise<void> {
  await s.bot.http.idle();
  await s.bot.engine.whenIdle();
  expect(await s.bot.repo.listDraws()).toEqual([]);
  expect(s.bot.health().openDraws).toBe(0);
  expect(s.chatServer.botMessages()).toHaveLength(chatLines);
}

/** Sends a body of `size` bytes without a content-length (chunked) and returns the status, if any came back. */
function postChunked(target: string, size: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    // (a signature-shaped header: a body is read only with one; this one never matches)
    const sig = Buffer.alloc(32, 1).toString('base64');
    const req = request(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked', 'x-fourthwall-hmac-sha256': sig },
    });
    let status: number | undefined;
    req.on('response', (res) => {
      status = res.statusCode;
      res.resume();
      res.on('end', () => resolve(status));
    });
    req.on('error', () => resolve(status));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

describe('POST /webhooks/fourthwall (whole bot, real HTTP)', () => {
  it('a bad or missing signature gets 401 and changes nothing; the same body correctly signed then opens the draw once', async () => {
    // capture a real GIFT_DRAW_STARTED body from the sandbox, held back so the bot has not seen it
    s.fourthwall.control.webhookFaults.outOfOrder({ type: 'GIFT_DRAW_STARTED' });
    const { draw } = s.fourthwall.control.simulateGiftPurchase({ quantity: 1, username: 'sig_fan' });
    const held = await s.fourthwall.control.waitForDelivery(
      (d) => d.type === 'GIFT_DRAW_STARTED' && d.body.includes(draw['id'] as string),
    );
    const body = held.body;
    expect(held.attempts).toBe(0);
    await s.bot.http.idle();
    const chatLines = s.chatServer.botMessages().length;

    const forged = [
      { signature: signWebhookBody(body, 'not-the-secret') },
      { signature: signWebhookBody(body.replace('sig_fan', 'sig_fam'), secret) },
      { signature: 'bm90IGEgc2lnbmF0dXJl' },
      { signature: '***' },
      {},
    ];
    for (const f of forged) {
      const res = await postWebhook(url, body, f);
      expect(res.status).toBe(401);
      expect(res.text).not.toContain(secret);
    }
    // a valid signature over a different body does not validate this body
    const tampered = await postWebhook(url, body.replace('sig_fan', 'sig_fam'), {
      signature: signWebhookBody(body, secret),
    });
    expect(tampered.status).toBe(401);
    await nothingChanged(chatLines);
    expect(s.logs.lines.filter((l) => l.includes('signature not verified'))).toHaveLength(forged.length + 1);

    // the rejected attempts did not mark the event id as seen
    const ok = await postWebhook(url, body, { secret });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text)).toEqual({ ok: true });
    await s.chatServer.waitFor(
      () => s.chatServer.botMessages().some((m) => m.startsWith('🎁 sig_fan gifted')),
      5000,
      'draw opened',
    );
    expect(s.bot.health().openDraws).toBe(1);
    // Fourthwall's own (late) delivery of the same event is a duplicate: 200, ignored
    s.fourthwall.control.webhookFaults.releaseHeld();
    await s.fourthwall.control.waitForDelivery((d) => d.eventId === held.eventId && d.done);
    expect(held.delivered).toBe(true);
    await s.bot.http.idle();
    expect(s.chatServer.botMessages().filter((m) => m.startsWith('🎁 sig_fan gifted'))).toHaveLength(1);

    // /healthz counts the open draw
    const health = await fetch(`${s.bot.http.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', openDraws: 1 });

    enterAll(s.chatServer, logins('sig', 2));
    await waitUntil(
      async () => (await s.bot.repo.getDraw(draw['id'] as string))?.status === 'finished',
      10_000,
      'draw finished',
    );
    await waitUntil(() => s.bot.health().openDraws === 0, 5000, 'no open draw');
    // the last line of a draw (the seed reveal) is in the channel, so later tests see a quiet chat
    await s.chatServer.waitFor(
      () =>
        s.chatServer
          .botMessages()
          .some((m) =>
            m.includes(`Anyone can check draw ${draw['id'] as string}: ask the streamer for its verify page`),
          ),
      5000,
      'the fairness line',
    );
    await s.fourthwall.control.waitForDelivery((d) => d.type === 'GIFT_DRAW_ENDED' && d.done);
    await s.bot.http.idle();
    await s.bot.engine.whenIdle();
  });

  it('unknown and unused event types are acknowledged with 200 and ignored', async () => {
    const before = s.chatServer.botMessages().length;
    const draws = (await s.bot.repo.listDraws()).length;
    for (const [type, data] of [
      ['SOMETHING_FOURTHWALL_ADDS_LATER', { anything: [1, 2, 3] }],
      // a known type the bot does not use, with a real payload (a seeded sandbox order)
      ['ORDER_PLACED', [...s.fourthwall.state.orders.values()][0]],
      // a known type the bot does not use, with data in a shape the schema does not expect
      ['DONATION', { id: 42, amounts: 'not money' }],
    ] as const) {
      const res = await postWebhook(url, webhookEnvelope(type, data), { secret });
      expect(res.status).toBe(200);
    }
    await s.bot.http.idle();
    expect(s.chatServer.botMessages()).toHaveLength(before);
    expect(await s.bot.repo.listDraws()).toHaveLength(draws);
    expect(s.logs.lines.filter((l) => l.includes('webhook handling failed'))).toEqual([]);
  });

  it('a known type with a bad payload gets 400 (logged), a bad envelope too; nothing changes', async () => {
    const before = s.chatServer.botMessages().length;
    const draws = (await s.bot.repo.listDraws()).length;
    const badData = webhookEnvelope('GIFT_DRAW_STARTED', { id: 42 });
    expect((await postWebhook(url, badData, { secret })).status).toBe(400);
    expect((await postWebhook(url, '{"type":', { secret })).status).toBe(400);
    expect((await postWebhook(url, '{"id":"x"}', { secret })).status).toBe(400);
    await s.bot.http.idle();
    expect(s.chatServer.botMessages()).toHaveLength(before);
    expect(await s.bot.repo.listDraws()).toHaveLength(draws);
    expect(s.logs.lines.filter((l) => l.includes('webhook rejected: bad payload'))).toHaveLength(3);
  });

  it('bodies over 1 MiB get 413 (declared length or streamed), a body of exactly 1 MiB is read', async () => {
    const big = Buffer.alloc(MAX_WEBHOOK_BYTES + 1, 0x20);
    const declared = await postWebhook(url, big, { secret });
    expect(declared.status).toBe(413);
    expect(await postChunked(url, MAX_WEBHOOK_BYTES + 64 * 1024)).toBe(413);
    // exactly the limit: read and checked (a valid JSON envelope padded with spaces)
    const env = webhookEnvelope('SOMETHING_NEW', {});
    const padded = Buffer.concat([Buffer.from(env), Buffer.alloc(MAX_WEBHOOK_BYTES - Buffer.byteLength(env), 0x20)]);
    expect(padded.length).toBe(MAX_WEBHOOK_BYTES);
    expect((await postWebhook(url, padded, { secret })).status).toBe(200);
    // the server is still healthy afterwards
    expect((await fetch(`${s.bot.http.url}/healthz`)).status).toBe(200);
  });

  it('answers 200 fast and only other methods/paths get 405/404', async () => {
    const t0 = performance.now();
    const res = await postWebhook(url, webhookEnvelope('SOMETHING_NEW', {}), { secret });
    expect(res.status).toBe(200);
    expect(performance.now() - t0).toBeLessThan(2000);
    expect((await fetch(url)).status).toBe(405);
    expect((await fetch(`${s.bot.http.url}/webhooks/other`, { method: 'POST', body: '{}' })).status).toBe(404);
  });
});

describe('GET /healthz', () => {
  it('has the contract shape', async () => {
    const res = await fetch(`${s.bot.http.url}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({ status: 'ok', mode: 'sandbox', chat: 'connected', chatTransport: 'irc', openDraws: 0 });
    const head = await fetch(`${s.bot.http.url}/healthz`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });
});
