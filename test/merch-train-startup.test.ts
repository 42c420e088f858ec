/**
 * The merch train while it starts (real files in a temp data dir, the engine's real EventEmitter,
 * a ManualClock): nothing acts on a half-started train. An order delivered before start() has read
 * the counter waits and is counted on the saved counter (the Nth order departs); a giveaway ending
 * while start() still checks the history for a departure made before a restart does not open a
 * second giveaway; a train stopped while start() still reads the history never listens to the
 * engine afterwards (no leaked listener, no departure after the stop).
 */
import { EventEmitter } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { merchTrainSchema } from '../src/config/shop.js';
import type { Order } from '../src/fourthwall/index.js';
import type { GiveawayEventMap } from '../src/giveaway/context.js';
import { silentLogger } from '../src/logging/index.js';
import { ManualClock } from '../src/shared/clock.js';
import { MERCH_TRAIN_FILE, MerchTrain } from '../src/shop/merch-train.js';
import * as F from './support/fourthwall-fixtures.js';
import { FakeChat, START_MS, makeTempDir, removeDir } from './support/giveaway-fakes.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const paidOrder = (): Order => ({ ...F.orderFixture(), source: { type: 'ORDER' } });

async function train(state: Record<string, unknown>, findDeparture?: (since: string) => Promise<string | undefined>) {
  const dir = await makeTempDir();
  cleanups.push(() => removeDir(dir));
  await writeFile(
    join(dir, MERCH_TRAIN_FILE),
    JSON.stringify({ version: 1, departures: 0, boarding: false, ...state }),
  );
  const events = new EventEmitter<GiveawayEventMap>();
  const opened: string[] = [];
  const t = new MerchTrain({
    settings: merchTrainSchema.parse({ enabled: true, everyOrders: 5, product: 'mug', onlyWhileLive: false }),
    dataDir: dir,
    startLinkGiveaway: async (by) => {
      opened.push(by.id);
      return { ok: true, id: `lg_${opened.length}`, message: 'started' };
    },
    events,
    isLive: async () => true,
    ...(findDeparture ? { findDeparture } : {}),
    chat: new FakeChat(),
    clock: new ManualClock(START_MS),
    logger: silentLogger(),
  });
  cleanups.push(() => t.stop());
  return { t, dir, events, opened };
}

/** A train saved as boarding before a restart, whose history check waits until `answer` is called. */
async function boardingTrainAskingHistory() {
  let answer!: (id: string | undefined) => void;
  let asked!: () => void;
  const askedP = new Promise<void>((r) => (asked = r));
  const made = await train(
    { count: 0, departures: 1, boarding: true, boardingSince: new Date(START_MS - 60_000).toISOString() },
    () => {
      asked();
      return new Promise((r) => (answer = r));
    },
  );
  return { ...made, askedP, answer: (id: string | undefined) => answer(id) };
}

describe('the merch train while it starts', () => {
  it('an order arriving before start() has read the counter waits and counts on the saved counter', async () => {
    const { t, dir, opened } = await train({ count: 4 });
    const starting = t.start();
    const counted = t.onOrder(paidOrder()); // delivered while the counter is still being read
    await starting;
    await counted;
    expect(opened).toEqual(['merch-train-1']); // the 5th order departs
    const saved = JSON.parse(await readFile(join(dir, MERCH_TRAIN_FILE), 'utf8')) as {
      count: number;
      departures: number;
    };
    expect(saved).toMatchObject({ count: 0, departures: 1, boarding: false });
  });

  it('a giveaway ending while start() checks for a departure made before the restart does not open a second one', async () => {
    const { t, events, opened, askedP, answer } = await boardingTrainAskingHistory();
    const starting = t.start();
    await askedP; // start() is waiting for the history
    events.emit('draw-finished', { kind: 'link-giveaway' } as never); // another giveaway ends meanwhile
    answer('lg_before_restart'); // the train had departed before the restart
    await starting;
    await t.stop();
    expect(opened).toEqual([]);
    expect(t.snapshot()).toMatchObject({ boarding: false, drawId: 'lg_before_restart' });
  });

  it('stopped while start() still checks the history: no engine listener is left and nothing departs afterwards', async () => {
    const { t, events, opened, askedP, answer } = await boardingTrainAskingHistory();
    const starting = t.start();
    await askedP; // start() is waiting for the history
    const stopping = t.stop(); // the bot shuts down meanwhile
    answer(undefined); // no departure found: a train that had started would depart now
    await starting;
    await stopping;
    for (const e of ['draw-finished', 'draw-failed', 'draw-cancelled'] as const)
      expect(events.listenerCount(e)).toBe(0);
    events.emit('draw-finished', { kind: 'link-giveaway' } as never);
    await t.onOrder(paidOrder()); // skipped: the train is stopped
    expect(opened).toEqual([]);
    expect(t.snapshot()).toMatchObject({ boarding: true, count: 0 });
  });
});
