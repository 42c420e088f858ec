/**
 * The delivery tracker's reminder and poll rules (issue 30) on a real file repository and an
 * injected clock: one reminder per waiting prize after `reminders.afterHours` (by the poll timer),
 * a whisper for a winner never whispered, a chat mention to the claim page for one whose whisper
 * was never followed by a visit; a failing status read is tried again at the next poll; nothing is
 * polled once every prize is redeemed or closed by the shop (a closed prize is recorded with its
 * status and never reminded); `idle()` covers the writes of winners just announced. The chat and whisper ports are recorders (they are the
 * adapters' side); the engine's events come from a real EventEmitter.
 */
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deliveryLabel, deliverySummary } from '../src/delivery/state.js';
import { DeliveryTracker, type PrizeStatus, type RedemptionPort, type WhisperPort } from '../src/delivery/tracker.js';
import type { GiveawayEventMap } from '../src/giveaway/context.js';
import type { DrawRecord } from '../src/giveaway/model.js';
import { silentLogger } from '../src/logging/index.js';
import { ManualClock } from '../src/shared/clock.js';
import { FileDrawRepository } from '../src/storage/index.js';
import { finishedRecord } from './support/fairness-records.js';
import { tempDataDir } from './support/storage-helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDataDir());
});
afterEach(async () => cleanup());

const HOUR = 3_600_000;

async function setup(o: { whispers: boolean; statuses?: () => Promise<Map<string, PrizeStatus>> }) {
  const clock = new ManualClock(Date.UTC(2026, 3, 1, 12));
  const repo = await FileDrawRepository.open(dir, { clock });
  const events = new EventEmitter<GiveawayEventMap>();
  const said: string[] = [];
  const whispered: { to: string; text: string }[] = [];
  const whispers: WhisperPort = {
    available: () => o.whispers,
    send: async (to, text) => {
      whispered.push({ to, text });
      return true;
    },
  };
  let reads = 0;
  const redemption: RedemptionPort = {
    statuses: async () => {
      reads++;
      return o.statuses ? o.statuses() : new Map();
    },
  };
  const tracker = new DeliveryTracker({
    store: repo,
    events,
    chat: { say: (t) => void said.push(t) },
    messages: { deliveryReminder: '{winners}: your {product} is still waiting! Get it at {claimUrl}' },
    clock,
    logger: silentLogger(),
    settings: {
      whispers: true,
      pollSeconds: 600,
      reminders: { whisper: true, chat: true, atStreamStart: true, afterHours: 2 },
    },
    claimUrl: 'https://example.test/claim',
    whispers,
    redemption,
  });
  await tracker.start();
  const record: DrawRecord = {
    ...finishedRecord({ id: 'lg_t', entrants: 5, winners: 2 }),
    kind: 'link-giveaway',
    source: { packageId: 'gpg_1' },
  };
  record.winners.forEach((w, i) => {
    w.giftId = `gft_${i}`;
    w.redeemUrl = `https://shop.test/gifts/gft_${i}`;
  });
  await repo.saveDraw(record);
  const changed = () => new Promise<void>((r) => tracker.once('changed', () => r()));
  return { clock, repo, events, tracker, said, whispered, record, reads: () => reads, changed };
}

/** Lets the tracker's promise chains (file writes) settle after an event or a timer. */
async function settle(t: DeliveryTracker, repo: FileDrawRepository) {
  for (let i = 0; i < 5; i++) {
    await t.idle();
    await repo.flush();
    await new Promise((r) => setImmediate(r));
  }
}

describe('DeliveryTracker', () => {
  it('after reminders.afterHours: one reminder each (whisper if never whispered, chat if the whisper went unanswered), never twice', async () => {
    const s = await setup({ whispers: false });
    const [a, b] = s.record.winners as [DrawRecord['winners'][0], DrawRecord['winners'][0]];
    s.events.emit('winners', s.record, s.record.winners);
    await settle(s.tracker, s.repo);
    expect((await s.tracker.waiting()).map((p) => p.label)).toEqual(['announced', 'announced']);
    // a was whispered by an earlier run (whispers are off in this one), b never was.
    await s.repo.updateDelivery(s.record.id, a.userId, { whisperedAt: new Date(s.clock.now()).toISOString() });
    s.clock.advance(HOUR);
    await settle(s.tracker, s.repo);
    expect(s.said).toEqual([]); // not due yet
    s.clock.advance(2 * HOUR);
    await settle(s.tracker, s.repo);
    // Whispers are off here: both reminded in chat, in one line.
    expect(s.said).toHaveLength(1);
    expect(s.said[0]).toContain(`@${a.login}`);
    expect(s.said[0]).toContain(`@${b.login}`);
    expect(s.said[0]).toContain('https://example.test/claim');
    expect(s.said[0]).not.toContain('shop.test');
    const after = await s.tracker.waiting();
    expect(after.map((p) => p.delivery.remindedBy)).toEqual(['chat', 'chat']);
    s.clock.advance(10 * HOUR);
    await settle(s.tracker, s.repo);
    expect(s.said).toHaveLength(1);
    s.tracker.stop();
    await s.repo.close();
  });

  it('with whispers: a never-whispered winner is reminded by whisper, a whispered one that never visited in chat', async () => {
    const s = await setup({ whispers: true });
    const [a, b] = s.record.winners as [DrawRecord['winners'][0], DrawRecord['winners'][0]];
    await s.repo.updateDelivery(s.record.id, a.userId, {
      announcedAt: '2026-03-30T00:00:00.000Z',
      whisperedAt: '2026-03-30T00:00:01.000Z',
    });
    await s.repo.updateDelivery(s.record.id, b.userId, { announcedAt: '2026-03-30T00:00:00.000Z' });
    await s.tracker.streamStarted();
    await settle(s.tracker, s.repo);
    expect(s.said).toHaveLength(1);
    expect(s.said[0]).toContain(`@${a.login}`);
    expect(s.said[0]).not.toContain(`@${b.login}`);
    expect(s.whispered).toEqual([{ to: b.userId, text: expect.stringContaining('https://example.test/claim') }]);
    expect(s.whispered[0]!.text).not.toContain('shop.test');
    const byUser = new Map((await s.tracker.waiting()).map((p) => [p.userId, p.delivery.remindedBy]));
    expect(byUser.get(a.userId)).toBe('chat');
    expect(byUser.get(b.userId)).toBe('whisper');
    await s.tracker.streamStarted();
    await settle(s.tracker, s.repo);
    expect(s.said).toHaveLength(1);
    expect(s.whispered).toHaveLength(1);
    s.tracker.stop();
    await s.repo.close();
  });

  it('a failed status read is tried at the next poll; once all are redeemed nothing is polled', async () => {
    let fail = true;
    let redeemed = new Set<string>();
    const s = await setup({
      whispers: false,
      statuses: async () => {
        if (fail) throw new Error('HTTP 503');
        return new Map(['gft_0', 'gft_1'].map((id) => [id, { redeemed: redeemed.has(id) }]));
      },
    });
    s.events.emit('winners', s.record, s.record.winners);
    await settle(s.tracker, s.repo);
    expect(s.tracker.pollArmed()).toBe(true);
    s.clock.advance(600_000);
    await settle(s.tracker, s.repo);
    expect(s.reads()).toBe(1);
    expect(await s.tracker.waiting()).toHaveLength(2); // the failure changed nothing
    fail = false;
    redeemed = new Set(['gft_0']);
    s.clock.advance(600_000);
    await settle(s.tracker, s.repo);
    expect(s.reads()).toBe(2);
    expect((await s.tracker.waiting()).map((p) => p.giftId)).toEqual(['gft_1']);
    redeemed = new Set(['gft_0', 'gft_1']);
    s.clock.advance(600_000);
    await settle(s.tracker, s.repo);
    expect(s.reads()).toBe(3);
    expect(await s.tracker.waiting()).toEqual([]);
    expect(s.tracker.pollArmed()).toBe(false);
    s.clock.advance(10 * 600_000);
    await settle(s.tracker, s.repo);
    expect(s.reads()).toBe(3);
    s.tracker.stop();
    await s.repo.close();
  });

  it('a prize Fourthwall closed (changed to a gift card) stops waiting: recorded with its status, never reminded, nothing polled once the rest is redeemed', async () => {
    const s = await setup({
      whispers: false,
      statuses: async () =>
        new Map<string, PrizeStatus>([
          ['gft_0', { redeemed: true }],
          ['gft_1', { redeemed: false, closedAs: 'CHANGED_TO_GIFT_CARD' }],
        ]),
    });
    s.events.emit('winners', s.record, s.record.winners);
    await settle(s.tracker, s.repo);
    s.clock.advance(600_000);
    await settle(s.tracker, s.repo);
    expect(s.reads()).toBe(1);
    const closed = s.repo.deliveryOf(s.record.id, s.record.winners[1]!.userId)!;
    expect(closed).toMatchObject({ closedAs: 'CHANGED_TO_GIFT_CARD', closedAt: new Date(s.clock.now()).toISOString() });
    expect(closed.redeemedAt).toBeUndefined();
    expect(deliveryLabel(closed)).toBe('changed to a gift card');
    expect(deliverySummary({ winners: (await s.repo.getDraw(s.record.id))!.winners })).toBe(
      '1 redeemed, 1 changed to a gift card',
    );
    expect(await s.tracker.waiting()).toEqual([]);
    expect(s.tracker.pollArmed()).toBe(false);
    // past reminders.afterHours and a stream start: no reminder for it
    s.clock.advance(3 * HOUR);
    await s.tracker.streamStarted();
    await settle(s.tracker, s.repo);
    expect(s.said).toEqual([]);
    expect(s.reads()).toBe(1);
    s.tracker.stop();
    await s.repo.close();
  });

  it('idle() waits until the winners just announced are recorded: the list read right after holds every one', async () => {
    const s = await setup({ whispers: false });
    s.events.emit('winners', s.record, s.record.winners);
    await s.tracker.idle();
    expect((await s.tracker.waiting()).map((p) => p.giftId).sort()).toEqual(['gft_0', 'gft_1']);
    s.tracker.stop();
    await s.repo.close();
  });
});
