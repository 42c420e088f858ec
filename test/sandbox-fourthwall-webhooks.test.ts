import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/shared/clock.js';
import {
  startFourthwallSandbox,
  type FourthwallSandbox,
  type FourthwallSandboxOptions,
} from '../src/sandbox/fourthwall/index.js';
import {
  basic,
  call,
  signatureMatches,
  startReceiver,
  until,
  type Receiver,
} from './support/sandbox-fourthwall-helpers.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

async function sandbox(options: FourthwallSandboxOptions = {}): Promise<FourthwallSandbox> {
  const sb = await startFourthwallSandbox({
    deliveryRetry: { attempts: 3, delaysMs: [10], timeoutMs: 2000 },
    ...options,
  });
  open.push(sb);
  return sb;
}

async function receiver(respond?: (n: number) => number | 'hang'): Promise<Receiver> {
  const rx = await startReceiver(respond);
  open.push(rx);
  return rx;
}

async function subscribe(sb: FourthwallSandbox, url: string, allowedTypes: string[]): Promise<string> {
  const r = await call(`${sb.apiUrl}/webhooks`, { method: 'POST', headers: basic(sb), body: { url, allowedTypes } });
  expect(r.status).toBe(200);
  return r.body.id as string;
}

describe('Fourthwall sandbox webhooks', () => {
  it('creates, reads, lists, updates and deletes configurations', async () => {
    const sb = await sandbox();
    const created = await call(`${sb.apiUrl}/webhooks`, {
      method: 'POST',
      headers: basic(sb),
      body: { url: 'http://127.0.0.1:9/hook', allowedTypes: ['GIFT_PURCHASE', 'GIFT_PURCHASE'] },
    });
    expect(created.body).toEqual({
      id: created.body.id,
      url: 'http://127.0.0.1:9/hook',
      allowedTypes: ['GIFT_PURCHASE'],
      apiVersion: 'V1',
    });
    expect(created.body.id).toMatch(/^wcon_/);
    const id = created.body.id as string;
    expect((await call(`${sb.apiUrl}/webhooks/${id}`, { headers: basic(sb) })).body).toEqual(created.body);
    expect((await call(`${sb.apiUrl}/webhooks`, { headers: basic(sb) })).body.results).toEqual([created.body]);

    const updated = await call(`${sb.apiUrl}/webhooks/${id}`, {
      method: 'PUT',
      headers: basic(sb),
      body: { url: 'https://hooks.example.com/new', allowedTypes: ['GIFT_DRAW_STARTED'] },
    });
    expect(updated.body).toEqual({
      id,
      url: 'https://hooks.example.com/new',
      allowedTypes: ['GIFT_DRAW_STARTED'],
      apiVersion: 'V1',
    });

    const del = await call(`${sb.apiUrl}/webhooks/${id}`, { method: 'DELETE', headers: basic(sb) });
    expect(del.status).toBe(200);
    expect(del.text).toBe('');
    const gone = await call(`${sb.apiUrl}/webhooks/${id}`, { headers: basic(sb) });
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({
      code: 'WEBHOOK_CONFIGURATION_NOT_FOUND',
      webhookConfigurationId: id,
      shopId: sb.state.shop.id,
    });
  });

  it('applies the URI rules at creation (loopback allowed by default, switchable)', async () => {
    const sb = await sandbox();
    const post = (s: FourthwallSandbox, url: string) =>
      call(`${s.apiUrl}/webhooks`, { method: 'POST', headers: basic(s), body: { url, allowedTypes: [] } });
    expect((await post(sb, 'https://10.0.0.5/hook')).body).toEqual({ code: 'WEBHOOK_URI_IP_NOT_ALLOWED' });
    expect((await post(sb, 'https://hooks.example.com:8443/hook')).body).toEqual({
      code: 'WEBHOOK_URI_PORT_NOT_ALLOWED',
    });
    expect((await post(sb, 'https://intranet/hook')).body).toEqual({ code: 'WEBHOOK_URI_UNALLOWED_DOMAIN' });
    expect((await post(sb, 'not a url')).body).toMatchObject({ code: 'VALIDATION_ERROR', field: 'url' });
    expect((await post(sb, 'http://127.0.0.1:8787/webhooks/fourthwall')).status).toBe(200);

    const strict = await sandbox({ allowLoopbackWebhooks: false });
    expect((await post(strict, 'http://127.0.0.1:8787/hook')).body).toEqual({ code: 'WEBHOOK_URI_IP_NOT_ALLOWED' });
    expect((await post(strict, 'https://localhost/hook')).body).toEqual({ code: 'WEBHOOK_URI_UNALLOWED_DOMAIN' });
    expect(strict.state.shop.id).toBe(sb.state.shop.id);
  });

  it('delivers each event only to configurations whose allowedTypes holds its type', async () => {
    const sb = await sandbox();
    const a = await receiver();
    const b = await receiver();
    const aId = await subscribe(sb, a.url, ['GIFT_PURCHASE']);
    const bId = await subscribe(sb, b.url, ['GIFT_DRAW_STARTED', 'GIFT_DRAW_ENDED']);
    sb.control.setLive(true);
    sb.control.simulateGiftPurchase({ quantity: 1 });
    await until(
      () => sb.control.deliveries.length === 2 && sb.control.deliveries.every((d) => d.done),
      5000,
      'deliveries done',
    );
    expect(sb.control.deliveries.map((d) => [d.webhookId, d.type]).sort()).toEqual(
      [
        [aId, 'GIFT_PURCHASE'],
        [bId, 'GIFT_DRAW_STARTED'],
      ].sort(),
    );
    expect(a.received.map((w) => w.json.type)).toEqual(['GIFT_PURCHASE']);
    expect(b.received.map((w) => w.json.type)).toEqual(['GIFT_DRAW_STARTED']);
    expect(a.received[0]?.json.webhookId).toBe(aId);
    expect(b.received[0]?.json.webhookId).toBe(bId);
  });

  it('retries a delivery answered with anything but 200, same event id and bytes', async () => {
    const sb = await sandbox();
    const answers = [500, 201, 200];
    const rx = await receiver((n) => answers[n - 1] ?? 200);
    await subscribe(sb, rx.url, ['DONATION']);
    const [rec] = sb.control.emitEvent('DONATION', { id: 'don_1' });
    const done = await sb.control.waitForDelivery((d) => d.eventId === rec?.eventId && d.done);
    expect(done.statuses).toEqual([500, 201, 200]);
    expect(done.attempts).toBe(3);
    expect(done.delivered).toBe(true);
    expect(rx.received).toHaveLength(3);
    expect(new Set(rx.received.map((w) => w.raw.toString('utf8'))).size).toBe(1);
    for (const w of rx.received)
      expect(signatureMatches(w.raw, w.headers['x-fourthwall-hmac-sha256'], sb.webhookSecret)).toBe(true);
  });

  it('counts no answer within the timeout as a failure and retries (ManualClock transport)', async () => {
    // The attempt timeout runs on the transport clock: only advance() can expire it, so a slow
    // machine can neither time out the answered retry nor answer the held first attempt in time.
    const transportClock = new ManualClock();
    const sb = await sandbox({ deliveryRetry: { attempts: 2, delaysMs: [0], timeoutMs: 150 }, transportClock });
    const rx = await receiver((n) => (n === 1 ? 'hang' : 200));
    await subscribe(sb, rx.url, ['DONATION']);
    const [rec] = sb.control.emitEvent('DONATION', { id: 'don_2' });
    await rx.waitFor(() => true);
    transportClock.advance(149);
    expect(rec?.statuses).toEqual([]);
    transportClock.advance(1);
    const d = await sb.control.waitForDelivery((x) => x.done);
    expect(rx.received).toHaveLength(2);
    expect(d.statuses).toEqual(['timeout', 200]);
    expect(d.delivered).toBe(true);
  });

  it('gives up after the configured attempts and lists the event as FAILED in /webhook-events', async () => {
    const sb = await sandbox();
    const rx = await receiver(() => 503);
    await subscribe(sb, rx.url, ['DONATION', 'PROMOTION_CREATED']);
    sb.control.emitEvent('DONATION', { id: 'don_3' });
    const d = await sb.control.waitForDelivery((x) => x.done);
    expect(d).toMatchObject({ attempts: 3, delivered: false, statuses: [503, 503, 503], error: 'status 503' });

    const ok = await receiver();
    await subscribe(sb, ok.url, ['PROMOTION_CREATED']);
    sb.control.emitEvent('PROMOTION_CREATED', { id: 'prm_1' });
    await sb.control.waitForDelivery((x) => x.type === 'PROMOTION_CREATED' && x.url === ok.url && x.delivered);
    await sb.control.waitForDelivery((x) => x.type === 'PROMOTION_CREATED' && x.url === rx.url && x.done);

    const all = await call(`${sb.apiUrl}/webhook-events`, { headers: basic(sb) });
    expect(all.body.total).toBe(3);
    const failed = all.body.results.find((e: { type: string }) => e.type === 'DONATION');
    expect(failed).toMatchObject({
      state: 'FAILED',
      error: 'status 503',
      url: rx.url,
      apiVersion: 'V1',
      testMode: false,
    });
    expect(JSON.parse(failed.body).data).toEqual({ id: 'don_3' });
    const promos = await call(`${sb.apiUrl}/webhook-events?type=PROMOTION_CREATED`, { headers: basic(sb) });
    expect(promos.body.results.map((e: { state: string }) => e.state).sort()).toEqual(['DELIVERED', 'FAILED']);
  });

  it('signs with the app key too when one is configured', async () => {
    const sb = await sandbox({ appHmacKey: 'app-key-123' });
    const rx = await receiver();
    await subscribe(sb, rx.url, ['DONATION']);
    sb.control.emitEvent('DONATION', { id: 'don_4' });
    const w = await rx.waitFor(() => true);
    expect(signatureMatches(w.raw, w.headers['x-fourthwall-hmac-apps-sha256'], 'app-key-123')).toBe(true);
    expect(signatureMatches(w.raw, w.headers['x-fourthwall-hmac-sha256'], sb.webhookSecret)).toBe(true);
  });

  it('fault: duplicates an event (same id twice)', async () => {
    const sb = await sandbox();
    const rx = await receiver();
    await subscribe(sb, rx.url, ['DONATION']);
    sb.control.webhookFaults.duplicate({ type: 'DONATION' });
    sb.control.emitEvent('DONATION', { id: 'don_5' });
    await sb.control.waitForDelivery((d) => d.duplicate && d.delivered);
    expect(rx.received).toHaveLength(2);
    expect(rx.received[0]?.json.id).toBe(rx.received[1]?.json.id);
    // Only once: the next event is not duplicated.
    sb.control.emitEvent('DONATION', { id: 'don_6' });
    await sb.control.waitForDelivery((d) => JSON.parse(d.body).data.id === 'don_6' && d.done);
    expect(rx.received).toHaveLength(3);
  });

  it('fault: holds an event and delivers it after the next one (out of order), over HTTP control too', async () => {
    const sb = await sandbox();
    const rx = await receiver();
    await subscribe(sb, rx.url, ['GIFT_PURCHASE', 'GIFT_DRAW_STARTED']);
    const control = `${new URL(sb.apiUrl).origin}/__sandbox`;
    const f = await call(`${control}/webhook-faults`, {
      method: 'POST',
      headers: basic(sb),
      body: { kind: 'out-of-order', type: 'GIFT_PURCHASE' },
    });
    expect(f.status).toBe(201);
    sb.control.setLive(true);
    sb.control.simulateGiftPurchase({ quantity: 1 });
    await until(() => rx.received.length === 2, 5000, 'two deliveries');
    expect(rx.received.map((w) => w.json.type)).toEqual(['GIFT_DRAW_STARTED', 'GIFT_PURCHASE']);
  });

  it('fault: delays a delivery (on the transport clock)', async () => {
    const transportClock = new ManualClock();
    const sb = await sandbox({ transportClock });
    const rx = await receiver();
    await subscribe(sb, rx.url, ['DONATION']);
    sb.control.webhookFaults.delay(5000);
    const [rec] = sb.control.emitEvent('DONATION', { id: 'don_7' });
    expect(rec?.attempts).toBe(0);
    transportClock.advance(4999);
    expect(rec?.attempts).toBe(0);
    expect(rx.received).toHaveLength(0);
    transportClock.advance(1);
    await sb.control.waitForDelivery((d) => d.delivered);
    expect(rx.received).toHaveLength(1);
  });

  it('fault: drops an event (never sent, listed as FAILED by GET /webhook-events); test webhooks carry testMode, over HTTP control too', async () => {
    const sb = await sandbox();
    const rx = await receiver();
    await subscribe(sb, rx.url, ['GIFT_PURCHASE', 'GIFT_DRAW_STARTED']);
    const control = `${new URL(sb.apiUrl).origin}/__sandbox`;
    const f = await call(`${control}/webhook-faults`, {
      method: 'POST',
      headers: basic(sb),
      body: { kind: 'drop', type: 'GIFT_DRAW_STARTED' },
    });
    expect(f.status).toBe(201);
    sb.control.setLive(true);
    const { draw } = sb.control.simulateGiftPurchase({ quantity: 1 });
    await sb.control.waitForDelivery((d) => d.type === 'GIFT_PURCHASE' && d.delivered);
    const dropped = sb.control.deliveries.find((d) => d.type === 'GIFT_DRAW_STARTED')!;
    expect(dropped).toMatchObject({ dropped: true, done: true, delivered: false, attempts: 0 });
    expect(rx.received.map((w) => w.json.type)).toEqual(['GIFT_PURCHASE']);

    const test = await call(`${control}/events`, {
      method: 'POST',
      headers: basic(sb),
      body: { type: 'GIFT_DRAW_STARTED', data: { id: 'gdr_sample' }, testMode: true },
    });
    expect(test.status).toBe(201);
    await until(() => rx.received.length === 2, 5000, 'the test webhook');
    expect(rx.received[1]!.json).toMatchObject({ testMode: true, type: 'GIFT_DRAW_STARTED', shopId: sb.state.shop.id });

    const listed = await call(`${sb.apiUrl}/webhook-events?type=GIFT_DRAW_STARTED&page=0&size=50`, {
      headers: basic(sb),
    });
    expect(listed.status).toBe(200);
    const results = listed.body.results as {
      id: string;
      state: string;
      testMode: boolean;
      body: string;
      error?: string;
    }[];
    expect(results.map((e) => [e.state, e.testMode])).toEqual([
      ['DELIVERED', true],
      ['FAILED', false],
    ]);
    expect(results[1]!.id).toBe(dropped.eventId);
    expect(JSON.parse(results[1]!.body)).toMatchObject({
      id: dropped.eventId,
      type: 'GIFT_DRAW_STARTED',
      data: { id: draw['id'] },
    });
    expect(results[1]!.error).toMatch(/not delivered/);
  });
});
