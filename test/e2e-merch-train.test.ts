/**
 * The merch train end to end (issue 14): paid orders from the Fourthwall sandbox reach the real
 * bot as signed webhooks; the Nth order while live opens exactly one link giveaway of the
 * configured product (the `!giveaway start` engine call), announced as the train's reward; the
 * counter is shown by `!merch train`, kept in DATA_DIR/merch-train.json (mode 0600) and survives
 * a restart at N-1; orders while offline do not count; one train at a time.
 */
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DrawRecord } from '../src/giveaway/model.js';
import { SEED_PRODUCT_IDS } from '../src/sandbox/fourthwall/index.js';
import { startLinkStack, tempDir, type LinkStack } from './support/e2e-link-stack.js';
import { waitUntil } from './support/e2e-stack.js';

const TRAIN = {
  merchTrain: { enabled: true, everyOrders: 3, product: 'giftdrop-mug', winners: 1, seconds: 30 },
  alerts: { order: { enabled: false } },
};

const stacks: LinkStack[] = [];
const dirs: string[] = [];
async function stack(dataDir?: string): Promise<LinkStack> {
  const s = await startLinkStack({ settings: TRAIN, ...(dataDir ? { dataDir } : {}) });
  stacks.push(s);
  return s;
}
afterEach(async () => {
  for (const s of stacks.splice(0)) await s.close(!dirs.includes(s.dataDir));
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

function live(s: LinkStack, on = true): void {
  s.fw.control.setLive(on, { broadcasterId: s.chat.channelId, broadcasterLogin: s.chat.channel });
}

function opened(s: LinkStack): DrawRecord[] {
  const list: DrawRecord[] = [];
  s.bot.engine.events.on('draw-opened', (r) => list.push(r));
  return list;
}

async function counter(s: LinkStack): Promise<{ count: number; departures: number; boarding: boolean }> {
  return JSON.parse(await readFile(join(s.dataDir, 'merch-train.json'), 'utf8'));
}

/** Places an order and waits until the bot has fully handled its webhook. */
async function order(s: LinkStack, username: string): Promise<void> {
  const before = s.fw.control.deliveries.length;
  s.fw.control.shop.placeOrder({ product: 'giftdrop-t-shirt', username });
  await s.fw.control.waitForDelivery(
    (d) => d.type === 'ORDER_PLACED' && d.done && s.fw.control.deliveries.indexOf(d) >= before,
  );
  await s.bot.http.idle();
}

describe('merch train', () => {
  it('the Nth order while live opens exactly one link giveaway of the product, announced as the reward', async () => {
    const s = await stack();
    const draws = opened(s);

    live(s, false);
    await order(s, 'offline_buyer');
    live(s);
    await order(s, 'buyer1');
    await order(s, 'buyer2');
    expect(draws).toHaveLength(0);
    const from = s.mark();
    s.say(s.viewer('curious'), '!merch train');
    expect(await s.nextBotLine(/Merch train/, from)).toBe(
      '🚂 Merch train: 2/3 orders. Next stop: a giveaway of Giftdrop Mug!',
    );
    expect(await counter(s)).toMatchObject({ count: 2, departures: 0, boarding: false });

    await order(s, 'buyer3');
    await s.nextBotLine(/All aboard the merch train! Order #3 unlocked a giveaway of Giftdrop Mug\./);
    await s.chat.waitFor(() => draws.length === 1, 5000, 'the train giveaway');
    expect(draws[0]).toMatchObject({ kind: 'link-giveaway', offer: { id: SEED_PRODUCT_IDS.mug }, gifts: 1 });
    await s.nextBotLine(/Giveaway: 1x Giftdrop Mug! Type !enter/);
    expect(await counter(s)).toMatchObject({ count: 0, departures: 1, boarding: false });

    // More orders while the train's giveaway runs: counted, never a second giveaway meanwhile.
    await order(s, 'buyer4');
    await order(s, 'buyer5');
    await order(s, 'buyer6');
    expect(draws).toHaveLength(1);
    // The third of them fills the train again: it boards and waits for the running giveaway.
    expect(await counter(s)).toMatchObject({ count: 0, departures: 2, boarding: true });

    // When it ends, the waiting train departs: the second giveaway.
    s.enter(['ana', 'ben']);
    s.say(s.mod, '!giveaway end');
    await s.chat.waitFor(() => draws.length === 2, 10_000, 'the boarding train to depart');
    await waitUntil(async () => !(await counter(s)).boarding, 5000, 'the departure to be saved');
    expect(await counter(s)).toMatchObject({ count: 0, departures: 2, boarding: false });

    const mode = (await stat(join(s.dataDir, 'merch-train.json'))).mode & 0o777;
    expect(mode).toBe(0o600);
  }, 60_000);

  it('survives a restart at N-1: the next order after the restart opens exactly one giveaway', async () => {
    const dataDir = await tempDir('gd-e2e-train-');
    dirs.push(dataDir);
    const first = await stack(dataDir);
    live(first);
    await order(first, 'a');
    await order(first, 'b');
    expect(await counter(first)).toMatchObject({ count: 2, departures: 0 });
    await first.close(false);
    stacks.splice(stacks.indexOf(first), 1);

    const second = await stack(dataDir);
    const draws = opened(second);
    live(second);
    const from = second.mark();
    second.say(second.viewer('curious'), '!merch train');
    expect(await second.nextBotLine(/Merch train/, from)).toContain('2/3 orders');
    await order(second, 'c');
    await second.chat.waitFor(() => draws.length === 1, 5000, 'the train giveaway after the restart');
    await order(second, 'd');
    expect(draws).toHaveLength(1);
    expect(await counter(second)).toMatchObject({ count: 1, departures: 1, boarding: false });
  }, 60_000);

  it('a departure cut off by a crash (giveaway opened, counter still boarding) does not open a second giveaway', async () => {
    const dataDir = await tempDir('gd-e2e-train-');
    dirs.push(dataDir);
    const first = await stack(dataDir);
    const draws = opened(first);
    live(first);
    const boardingSince = new Date(Date.now() - 1000).toISOString();
    for (const u of ['a', 'b', 'c']) await order(first, u);
    expect(draws).toHaveLength(1);
    await first.close(false);
    stacks.splice(stacks.indexOf(first), 1);
    // The state a crash between "giveaway opened" and "departure saved" leaves behind.
    const file = join(dataDir, 'merch-train.json');
    await writeFile(file, JSON.stringify({ version: 1, count: 0, departures: 1, boarding: true, boardingSince }), {
      mode: 0o600,
    });

    const second = await stack(dataDir);
    const again = opened(second);
    await waitUntil(async () => !(await counter(second)).boarding, 5000, 'the departure found in the history');
    expect(await counter(second)).toMatchObject({ boarding: false, departures: 1, drawId: draws[0]!.id });
    // The restored train giveaway ends; nothing departs after it.
    second.enter(['ana']);
    second.say(second.mod, '!giveaway end');
    await waitUntil(
      async () => (await second.bot.repo.getDraw(draws[0]!.id))?.status === 'finished',
      10_000,
      'the restored giveaway to finish',
    );
    await second.bot.engine.whenIdle();
    expect(again.filter((r) => r.kind === 'link-giveaway' && r.id !== draws[0]!.id)).toEqual([]);
    const trainDraws = (await second.bot.repo.listDraws()).filter((r) => r.startedBy?.login === 'merch_train');
    expect(trainDraws.map((r) => r.id)).toEqual([draws[0]!.id]);
  }, 60_000);
});
