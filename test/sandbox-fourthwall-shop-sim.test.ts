/**
 * The Fourthwall sandbox's supporters over its HTTP control routes (another process drives the
 * demo shop this way): a paid order carries the personal data real orders carry and is sent as a
 * signed ORDER_PLACED; donations, memberships, thank-yous and promotion status changes emit their
 * webhooks; bad input is a 400 naming the field; unknown products a 404.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseWebhookEvent, verifyWebhookSignature } from '../src/fourthwall/webhooks.js';
import { startFourthwallSandbox, type FourthwallSandbox } from '../src/sandbox/fourthwall/index.js';
import { waitUntil } from './support/e2e-stack.js';

let sb: FourthwallSandbox;
let receiver: Server;
const received: { type: string; body: Buffer; ok: boolean }[] = [];

beforeEach(async () => {
  sb = await startFourthwallSandbox({});
  received.length = 0;
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const ok = verifyWebhookSignature(body, req.headers, { webhookSecret: sb.webhookSecret }).ok;
      received.push({ type: parseWebhookEvent(body).type, body, ok });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const types = ['ORDER_PLACED', 'DONATION', 'SUBSCRIPTION_PURCHASED', 'THANK_YOU_SENT', 'PROMOTION_STATUS_CHANGED'];
  const res = await call('POST', `${sb.apiUrl}/webhooks`, { url, allowedTypes: types });
  expect(res.status).toBe(200);
});
afterEach(async () => {
  await sb.close();
  await new Promise<void>((r) => receiver.close(() => r()));
});

async function call(
  method: string,
  url: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, {
    method,
    headers: {
      authorization: `Basic ${Buffer.from(`${sb.username}:${sb.password}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}
const control = (path: string) => `${new URL(sb.apiUrl).origin}/__sandbox${path}`;

describe('sandbox supporters over HTTP', () => {
  it('orders, donations, memberships, thank-yous and promotion status changes emit signed webhooks', async () => {
    const order = await call('POST', control('/orders'), {
      product: 'giftdrop-mug',
      username: 'ana',
      quantity: 2,
      email: 'ana.private@example.org',
    });
    expect(order.status).toBe(201);
    expect(order.json).toMatchObject({
      username: 'ana',
      email: 'ana.private@example.org',
      status: 'CONFIRMED',
      source: { type: 'ORDER' },
    });
    expect((order.json['shipping'] as { address: { address1: string } }).address.address1).toMatch(/Private Lane/);
    expect(sb.state.orders.get(order.json['id'] as string)).toBeDefined();
    expect((await call('POST', control('/donations'), { username: 'dora', amount: 7 })).status).toBe(201);
    expect((await call('POST', control('/subscriptions'), { nickname: 'mia' })).status).toBe(201);
    expect((await call('POST', control('/thank-yous'), { contributionType: 'ORDER' })).status).toBe(201);
    const promo = await call('PUT', control('/promotions/prm_EdJvIXu3SEiXe_QkPavHSA/status'), { status: 'Ended' });
    expect(promo.status).toBe(200);
    expect(promo.json['status']).toBe('Ended');

    await waitUntil(() => received.length >= 5, 5000, 'five deliveries');
    expect(received.map((r) => r.type)).toEqual([
      'ORDER_PLACED',
      'DONATION',
      'SUBSCRIPTION_PURCHASED',
      'THANK_YOU_SENT',
      'PROMOTION_STATUS_CHANGED',
    ]);
    expect(received.every((r) => r.ok)).toBe(true);
  });

  it('bad input is a 400 naming the field; an unknown product a 404', async () => {
    const bad = await call('POST', control('/orders'), { quantity: 'two' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toContain('quantity');
    expect((await call('POST', control('/orders'), { product: 'no-such-thing' })).status).toBe(404);
    expect((await call('POST', control('/donations'), { amount: -1 })).status).toBe(400);
    expect(
      (await call('PUT', control('/promotions/prm_EdJvIXu3SEiXe_QkPavHSA/status'), { status: 'Paused' })).status,
    ).toBe(400);
  });
});
