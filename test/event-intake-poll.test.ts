/**
 * The event intake and the catch-up poll on a manual clock (no sleeps):
 * - EventIntake with the real file store: a failing handler leaves the event unprocessed and it
 *   is retried with backoff until it succeeds; the id is known (a duplicate) meanwhile; a webhook
 *   (`receive`) settles only once its id is in the file, is refused while it is not, and its
 *   redelivery runs the retry at once; testMode
 *   is set aside in live mode only; another shop's event is refused; an unreadable shop id keeps
 *   the event for a retry; a type no feature acts on is remembered in memory only, never written
 *   to the processed-events file.
 * - EventPoller against the real Fourthwall sandbox over HTTP: pages through GET /webhook-events,
 *   skips known ids and events older than the horizon, survives a failing list call, and logs an
 *   unreadable record once.
 * - The Basic-only notice for OAuth-only live credentials.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventIntake, NotAcknowledged, type IntakeOutcome } from '../src/events/event-intake.js';
import { EventPoller } from '../src/events/event-poll.js';
import { basicOnlyNotice } from '../src/events/catch-up.js';
import { loadConfig } from '../src/config/index.js';
import { FourthwallClient, parseWebhookEvent, type WebhookEvent } from '../src/fourthwall/index.js';
import { createLogger } from '../src/logging/index.js';
import { ManualClock } from '../src/shared/clock.js';
import { startFourthwallSandbox, type FourthwallSandbox } from '../src/sandbox/fourthwall/index.js';
import { FileDrawRepository } from '../src/storage/index.js';
import * as F from './support/fourthwall-fixtures.js';
import { LogCapture } from './support/log-capture.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const stores = new Map<FileDrawRepository, string>();
async function store() {
  const dir = await mkdtemp(join(tmpdir(), 'gd-intake-'));
  const repo = await FileDrawRepository.open(dir);
  stores.set(repo, dir);
  cleanups.push(
    () => rm(dir, { recursive: true, force: true }),
    () => repo.close(),
  );
  return repo;
}

const drawEvent = (id: string, overrides: Record<string, unknown> = {}): WebhookEvent =>
  parseWebhookEvent(JSON.stringify(F.envelopeFixture('GIFT_DRAW_STARTED', F.drawFixture(), { id, ...overrides })));

/** Lets promise callbacks (file writes) run between clock steps. */
const settle = async (intake: EventIntake) => {
  await intake.idle();
  await new Promise((r) => setImmediate(r));
};

describe('EventIntake', () => {
  async function intake(
    mode: 'live' | 'sandbox',
    handle: (e: WebhookEvent) => Promise<void>,
    shopId: () => Promise<string> = async () => F.IDS.shop,
  ) {
    const clock = new ManualClock();
    const repo = await store();
    const log = new LogCapture();
    const i = new EventIntake({
      mode,
      handle,
      handledTypes: new Set(['GIFT_DRAW_STARTED', 'GIFT_DRAW_ENDED', 'GIFT_PURCHASE']),
      store: repo,
      shopId,
      clock,
      logger: createLogger({ level: 'debug', destination: log }),
    });
    cleanups.push(() => i.stop());
    return { i, clock, repo, log };
  }

  it('a failing handler leaves the event unprocessed and retries it with backoff until it succeeds', async () => {
    let calls = 0;
    const { i, clock, repo, log } = await intake('live', async () => {
      calls += 1;
      if (calls <= 2) throw Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
    });
    const ev = drawEvent('weve_retry_1');
    expect(await i.submit(ev, 'webhook')).toBe('failed');
    expect(await repo.isEventProcessed(ev.id)).toBe(false);
    // meanwhile the id is known: a redelivery or the poll does not start a second handling
    expect(i.isKnown(ev.id)).toBe(true);
    expect(await i.submit(ev, 'poll')).toBe('duplicate');
    expect(i.retrying).toBe(1);

    clock.advance(999);
    await settle(i);
    expect(calls).toBe(1);
    clock.advance(1); // 1 s: second attempt, fails again
    await settle(i);
    expect(calls).toBe(2);
    expect(await repo.isEventProcessed(ev.id)).toBe(false);
    clock.advance(2000); // 2 s: third attempt succeeds
    await settle(i);
    expect(calls).toBe(3);
    expect(await repo.isEventProcessed(ev.id)).toBe(true);
    expect(i.retrying).toBe(0);
    expect(log.lines.filter((l) => l.includes('event handling failed'))).toHaveLength(2);
    // handled once: later deliveries are duplicates
    expect(await i.submit(ev, 'webhook')).toBe('duplicate');
    clock.advance(60_000);
    await settle(i);
    expect(calls).toBe(3);
  });

  it('receive (a webhook) resolves only once the id is in the events file, and rejects while it is not safe; a redelivery runs the retry at once', async () => {
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { i, repo, log } = await intake('live', async () => {
      calls += 1;
      if (calls === 1) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      await gate;
    });
    const eventsFile = join(stores.get(repo)!, 'events.jsonl');
    const ev = drawEvent('weve_receive');
    const refused = await i.receive(ev).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(NotAcknowledged);
    expect((refused as NotAcknowledged).message).toContain('ENOSPC: no space left on device');
    expect((refused as NotAcknowledged).retryInMs).toBe(1000);
    // The HTTP server says it; the intake adds no line of its own for a received webhook.
    expect(log.lines.filter((l) => l.includes('event handling failed'))).toHaveLength(0);
    expect(i.retrying).toBe(1);
    // Redelivered before the retry timer: the retry runs now; a second redelivery waits for it.
    let safe = 0;
    const second = i.receive(ev).then((o) => ((safe += 1), o));
    const third = i.receive(ev).then((o) => ((safe += 1), o));
    await new Promise((r) => setImmediate(r));
    expect(calls).toBe(2);
    expect(safe).toBe(0);
    release();
    const outcomes = await Promise.all([second, third]);
    expect(outcomes).toEqual(['handled', 'handled']);
    expect(await readFile(eventsFile, 'utf8')).toBe('"weve_receive"\n');
    expect(calls).toBe(2);
    expect(await i.receive(ev)).toBe('duplicate');
  });

  it('a type no feature acts on costs no write: remembered in memory only, set aside again after a restart', async () => {
    const seen: string[] = [];
    const { i, repo } = await intake('live', async (e) => void seen.push(e.id));
    const unused = (id: string) =>
      parseWebhookEvent(JSON.stringify(F.envelopeFixture('ORDER_PLACED', F.orderFixture(), { id })));
    const eventsFile = join(stores.get(repo)!, 'events.jsonl');
    expect(await i.submit(unused('weve_unused_1'), 'webhook')).toBe('ignored');
    expect(await i.submit(unused('weve_unused_1'), 'webhook')).toBe('duplicate'); // this run remembers it
    expect(await i.submit(unused('weve_unused_2'), 'poll')).toBe('ignored');
    await repo.flush();
    expect(await repo.isEventProcessed('weve_unused_1')).toBe(false);
    expect(await readFile(eventsFile, 'utf8').catch(() => '')).toBe(''); // nothing written
    // A handled event is still recorded durably, alone.
    expect(await i.submit(drawEvent('weve_handled'), 'webhook')).toBe('handled');
    await repo.flush();
    expect(await readFile(eventsFile, 'utf8')).toBe('"weve_handled"\n');
    expect(seen).toEqual(['weve_handled']);
    // A restart (a new intake on the same store): the unused type is set aside again, harmlessly;
    // the handled one is a duplicate from the file.
    const again = new EventIntake({
      mode: 'live',
      handle: async (e) => void seen.push(e.id),
      handledTypes: new Set(['GIFT_DRAW_STARTED']),
      store: repo,
      shopId: async () => F.IDS.shop,
      clock: new ManualClock(),
      logger: createLogger({ level: 'silent' }),
    });
    cleanups.push(() => again.stop());
    expect(await again.submit(unused('weve_unused_1'), 'webhook')).toBe('ignored');
    expect(await again.submit(drawEvent('weve_handled'), 'webhook')).toBe('duplicate');
    expect(seen).toEqual(['weve_handled']);
  });

  it('an id processed by an earlier run is not handled again', async () => {
    let calls = 0;
    const { i, repo } = await intake('live', async () => void (calls += 1));
    await repo.markEventProcessed('weve_old');
    expect(await i.submit(drawEvent('weve_old'), 'poll')).toBe('duplicate');
    expect(calls).toBe(0);
  });

  it('testMode is ignored in live mode (and recorded), acted on in sandbox mode', async () => {
    const seen: string[] = [];
    const live = await intake('live', async (e) => void seen.push(e.id));
    expect(await live.i.submit(drawEvent('weve_test_live', { testMode: true }), 'webhook')).toBe('ignored');
    expect(await live.repo.isEventProcessed('weve_test_live')).toBe(true);
    expect(live.log.lines.some((l) => l.includes('test-mode event'))).toBe(true);
    const sandbox = await intake('sandbox', async (e) => void seen.push(e.id));
    expect(await sandbox.i.submit(drawEvent('weve_test_sandbox', { testMode: true }), 'webhook')).toBe('handled');
    expect(seen).toEqual(['weve_test_sandbox']);
  });

  it("refuses another shop's event and one with no shop id at all; an envelope without shopId is checked by its data's", async () => {
    const seen: string[] = [];
    const { i, log, repo } = await intake('live', async (e) => void seen.push(e.id));
    const noShopAnywhere = parseWebhookEvent(
      JSON.stringify(
        F.envelopeFixture(
          'GIFT_DRAW_STARTED',
          { ...F.drawFixture(), shopId: undefined },
          { id: 'weve_noshop_at_all', shopId: null },
        ),
      ),
    );
    const otherInData = parseWebhookEvent(
      JSON.stringify(
        F.envelopeFixture(
          'GIFT_DRAW_STARTED',
          { ...F.drawFixture(), shopId: 'sh_other' },
          { id: 'weve_other_data', shopId: null },
        ),
      ),
    );
    const outcomes: IntakeOutcome[] = [
      await i.submit(drawEvent('weve_other', { shopId: 'sh_other' }), 'webhook'),
      await i.submit(drawEvent('weve_mine'), 'webhook'),
      await i.submit(drawEvent('weve_noshop', { shopId: null }), 'webhook'),
      await i.submit(noShopAnywhere, 'webhook'),
      await i.submit(otherInData, 'webhook'),
    ];
    expect(outcomes).toEqual(['refused', 'handled', 'handled', 'refused', 'refused']);
    expect(seen).toEqual(['weve_mine', 'weve_noshop']);
    expect(log.lines.some((l) => l.includes('event of another shop refused') && l.includes('sh_other'))).toBe(true);
    expect(log.lines.some((l) => l.includes('event without a shop id') && l.includes('weve_noshop_at_all'))).toBe(true);
    expect(await repo.isEventProcessed('weve_noshop_at_all')).toBe(true); // set aside for good, not retried
  });

  it('while the shop id cannot be read, the event waits for a retry instead of being dropped', async () => {
    let up = false;
    const seen: string[] = [];
    const { i, clock, repo } = await intake(
      'live',
      async (e) => void seen.push(e.id),
      async () => {
        if (!up) throw new Error('Fourthwall unreachable');
        return F.IDS.shop;
      },
    );
    expect(await i.submit(drawEvent('weve_wait'), 'webhook')).toBe('failed');
    up = true;
    clock.advance(1000);
    await settle(i);
    expect(seen).toEqual(['weve_wait']);
    expect(await repo.isEventProcessed('weve_wait')).toBe(true);
  });
});

describe('EventPoller against the Fourthwall sandbox (GET /webhook-events)', () => {
  async function setup() {
    const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
    const fw: FourthwallSandbox = await startFourthwallSandbox({ clock });
    cleanups.push(() => fw.close());
    const client = new FourthwallClient({
      apiUrl: fw.apiUrl,
      auth: { basic: { username: fw.username, password: fw.password } },
    });
    cleanups.push(() => client.close());
    // A subscribed configuration whose deliveries are all dropped: events are listed, never sent.
    await client.createWebhook({
      url: 'http://127.0.0.1:9/never',
      allowedTypes: ['GIFT_PURCHASE', 'GIFT_DRAW_STARTED'],
    });
    fw.control.webhookFaults.drop({ times: 1000 });
    const known = new Set<string>();
    const submitted: WebhookEvent[] = [];
    const log = new LogCapture();
    const poller = new EventPoller({
      list: (q) => client.listWebhookEvents(q),
      types: ['GIFT_DRAW_STARTED', 'GIFT_PURCHASE'],
      intervalMs: 5000,
      clock,
      logger: createLogger({ level: 'info', destination: log }),
      isKnown: (id) => known.has(id),
      submit: async (e) => {
        known.add(e.id);
        submitted.push(e);
        return 'handled';
      },
    });
    cleanups.push(() => poller.stop());
    return { clock, fw, poller, submitted, log };
  }

  it('pages through every new event, then only picks up what is new on each tick', async () => {
    const { clock, fw, poller, submitted } = await setup();
    for (let n = 0; n < 120; n++) fw.control.emitEvent('GIFT_PURCHASE', { ...F.giftPurchaseFixture(), id: `giv_${n}` });
    const first = await poller.start();
    expect(first.submitted).toBe(120);
    expect(new Set(submitted.map((e) => e.id)).size).toBe(120);
    expect(fw.control.requests.filter((r) => r.operation === 'listWebhookEvents').length).toBe(4); // 3 pages + the other type

    fw.control.emitEvent('GIFT_PURCHASE', { ...F.giftPurchaseFixture(), id: 'giv_late' });
    clock.advance(5000); // the next tick starts
    const second = await poller.pollOnce();
    expect(second.submitted).toBe(1);
    expect(submitted.at(-1)!.type).toBe('GIFT_PURCHASE');
    expect((submitted.at(-1)!.data as { id: string }).id).toBe('giv_late');
  });

  it('catches up whatever order the list comes in: oldest first, the new events on the last page', async () => {
    for (const order of ['oldest-first', 'newest-first'] as const) {
      for (const spread of [true, false]) {
        const { clock, fw, poller, submitted } = await setup();
        fw.control.setEventListOrder(order);
        // 110 old events (past the 1 hour horizon), then 25 new ones: with 50 a page the new ones
        // are all on page 2 when the list is oldest first, all on page 0 when it is newest first
        for (let n = 0; n < 110; n++) {
          fw.control.emitEvent('GIFT_PURCHASE', { ...F.giftPurchaseFixture(), id: `giv_old_${n}` });
          if (spread) clock.advance(1000);
        }
        clock.advance(2 * 3_600_000);
        for (let n = 0; n < 25; n++) {
          fw.control.emitEvent('GIFT_PURCHASE', { ...F.giftPurchaseFixture(), id: `giv_new_${n}` });
          if (spread) clock.advance(1000);
        }
        const report = await poller.start();
        const ids = submitted.map((e) => (e.data as { id: string }).id);
        expect(ids.sort(), `${order} spread=${spread}`).toEqual(
          Array.from({ length: 25 }, (_, n) => `giv_new_${n}`).sort(),
        );
        expect(report.submitted).toBe(25);
        // bounded: never more than maxPages (4) calls for a type (+1 for the empty GIFT_DRAW_STARTED list)
        expect(fw.control.requests.filter((r) => r.operation === 'listWebhookEvents').length).toBeLessThanOrEqual(5);
        await poller.stop();
      }
    }
  });

  it("hands a type's events over oldest first, whatever the list order", async () => {
    const { clock, fw, poller, submitted } = await setup();
    fw.control.setEventListOrder('oldest-first');
    for (let n = 0; n < 5; n++) {
      fw.control.emitEvent('GIFT_PURCHASE', { ...F.giftPurchaseFixture(), id: `giv_${n}` });
      clock.advance(1000);
    }
    await poller.start();
    expect(submitted.map((e) => (e.data as { id: string }).id)).toEqual(['giv_0', 'giv_1', 'giv_2', 'giv_3', 'giv_4']);
  });

  it('does not replay events older than the horizon (1 hour)', async () => {
    const { clock, fw, poller, submitted } = await setup();
    fw.control.emitEvent('GIFT_PURCHASE', { ...F.giftPurchaseFixture(), id: 'giv_old' });
    clock.advance(2 * 3_600_000);
    fw.control.emitEvent('GIFT_PURCHASE', { ...F.giftPurchaseFixture(), id: 'giv_new' });
    await poller.start();
    expect(submitted.map((e) => (e.data as { id: string }).id)).toEqual(['giv_new']);
  });

  it('a failing list call is logged and retried on the next tick; an unreadable record is logged once', async () => {
    const { clock, fw, poller, submitted, log } = await setup();
    fw.control.emitEvent('GIFT_PURCHASE', { ...F.giftPurchaseFixture(), id: 'giv_ok' });
    fw.control.emitEvent('GIFT_PURCHASE', { not: 'a purchase' });
    fw.control.faults.fail('listWebhookEvents', 50, 400);
    const first = await poller.start();
    expect(first.failedTypes).toEqual(['GIFT_DRAW_STARTED', 'GIFT_PURCHASE']);
    expect(submitted).toEqual([]);
    fw.control.faults.clear();
    clock.advance(5000);
    await poller.pollOnce();
    expect(submitted.map((e) => (e.data as { id: string }).id)).toEqual(['giv_ok']);
    clock.advance(5000);
    await poller.pollOnce();
    expect(log.lines.filter((l) => l.includes('could not read the past webhook events'))).toHaveLength(1);
    expect(log.lines.filter((l) => l.includes('could not be read; skipped'))).toHaveLength(1);
  });
});

describe('Basic-only operations', () => {
  const env = {
    TWITCH_CHANNEL: 'chan',
    TWITCH_USERNAME: 'botty',
    TWITCH_TOKEN: 'tok',
    FOURTHWALL_WEBHOOK_SECRET: 's',
    GIFTDROP_MODE: 'live',
  };
  it('live mode with OAuth credentials only gets one line naming the Basic-only calls; Basic credentials get none', () => {
    const oauth = loadConfig({ env: { ...env, FOURTHWALL_ACCESS_TOKEN: 'at' }, dotenv: false });
    const line = basicOnlyNotice(oauth)!;
    expect(line).not.toContain('\n');
    for (const p of [
      'PUT /gifting/draw/{id}/finish',
      'GET /gifting/draw/{id}',
      'PUT /streaming/start',
      'PUT /streaming/end',
      'GET /streaming',
      'GET /gift-purchase/{giftPurchaseId}',
    ])
      expect(line).toContain(p);
    expect(line).toContain('FOURTHWALL_USERNAME');
    const basic = loadConfig({ env: { ...env, FOURTHWALL_USERNAME: 'u', FOURTHWALL_PASSWORD: 'p' }, dotenv: false });
    expect(basicOnlyNotice(basic)).toBeUndefined();
  });
});
