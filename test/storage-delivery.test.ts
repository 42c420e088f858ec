/**
 * Delivery state in the storage (issue 30): kept in DATA_DIR/delivery.json beside the history,
 * attached to the winners of every record read, never overwritten by a draw save, and absent
 * (not an error) for histories from before it existed.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileDrawRepository } from '../src/storage/index.js';
import { toExport } from '../src/storage/export.js';
import { deliveryLabel, deliverySummary } from '../src/delivery/state.js';
import { finishedRecord } from './support/fairness-records.js';
import { readHistoryLog, tempDataDir } from './support/storage-helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDataDir());
});
afterEach(async () => cleanup());

describe('delivery state in the history', () => {
  it('old records have none; updates are stored apart, survive a reopen and a stale draw save, and are exported', async () => {
    const repo = await FileDrawRepository.open(dir);
    const record = finishedRecord({ id: 'lg_d', entrants: 5, winners: 2 });
    await repo.saveDraw(record);
    const [a, b] = record.winners as [(typeof record.winners)[0], (typeof record.winners)[0]];
    // Before delivery was tracked: no state, summary '-', export without the field.
    const before = (await repo.getDraw('lg_d'))!;
    expect(before.winners.every((w) => w.delivery === undefined)).toBe(true);
    expect(deliverySummary(before)).toBe('-');
    expect(toExport(before).winners.every((w) => !('delivery' in w))).toBe(true);

    // A patch without announcedAt creates nothing.
    expect(await repo.updateDelivery('lg_d', a.userId, { whisperedAt: '2026-01-01T00:00:01.000Z' })).toBeUndefined();
    await repo.updateDelivery('lg_d', a.userId, { announcedAt: '2026-01-01T00:00:00.000Z' });
    await repo.updateDelivery('lg_d', b.userId, { announcedAt: '2026-01-01T00:00:00.000Z' });
    await repo.updateDelivery('lg_d', a.userId, { whisperedAt: '2026-01-01T00:00:02.000Z' });
    // The engine saving its own (stale) copy of the record changes no delivery state.
    const stale = structuredClone(record);
    stale.winners[0]!.delivery = { announcedAt: '1999-01-01T00:00:00.000Z' };
    await repo.saveDraw(stale);
    await repo.updateDelivery('lg_d', b.userId, { redeemedAt: '2026-01-01T00:01:00.000Z', orderFriendlyId: 'ORD1' });
    await repo.close();
    expect(((await readHistoryLog(dir)).draws[0]!['winners'] as { delivery?: unknown }[])[0]!.delivery).toBeUndefined();
    expect((await stat(join(dir, 'delivery.json'))).mode & 0o777).toBe(0o600);

    const ro = await FileDrawRepository.open(dir, { readOnly: true });
    const got = (await ro.getDraw('lg_d'))!;
    const da = got.winners.find((w) => w.userId === a.userId)!.delivery!;
    const db = got.winners.find((w) => w.userId === b.userId)!.delivery!;
    expect(da).toEqual({ announcedAt: '2026-01-01T00:00:00.000Z', whisperedAt: '2026-01-01T00:00:02.000Z' });
    expect(deliveryLabel(da)).toBe('whispered, not opened');
    expect(deliveryLabel(db)).toBe('redeemed');
    expect(deliverySummary(got)).toBe('1 redeemed, 1 whispered, not opened');
    const listed = (await ro.listDraws())[0]!;
    expect(toExport(listed).winners.find((w) => w.userId === b.userId)!.delivery).toEqual({
      announcedAt: '2026-01-01T00:00:00.000Z',
      redeemedAt: '2026-01-01T00:01:00.000Z',
      orderFriendlyId: 'ORD1',
    });
    await ro.close();
  });
});
