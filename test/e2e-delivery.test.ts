/**
 * Prize delivery end to end (issue 30), on the whole local stack: winners of a link giveaway get
 * a delivery state in the history (`npm run history` column, `--json` full state) and on the
 * dashboard's "prizes waiting" list; a redemption in the local Fourthwall moves a winner to
 * "redeemed" by the ORDER_PLACED webhook, or, when that webhook is lost, within one redemption
 * poll; once every prize is redeemed nothing is polled any more.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runHistoryCli } from '../src/cli/history.js';
import type { Delivery } from '../src/giveaway/model.js';
import type { PrizeView } from '../src/delivery/tracker.js';
import { captureIo } from './support/cli-io.js';
import {
  deliveryReaches,
  drawSettled,
  nextDrawOpened,
  startLinkStack,
  type LinkStack,
} from './support/e2e-link-stack.js';

const stacks: LinkStack[] = [];
afterEach(async () => {
  for (const s of stacks.splice(0)) await s.close(true);
});

/** The prizes waiting once `pred` holds (checked now and on every delivery change). */
async function waitingReaches(s: LinkStack, pred: (list: PrizeView[]) => boolean): Promise<PrizeView[]> {
  let changes = 0;
  const on = () => void changes++;
  s.bot.delivery.on('changed', on);
  try {
    for (;;) {
      const seen = changes;
      const list = await s.bot.delivery.waiting();
      if (pred(list)) return list;
      if (changes === seen) await new Promise<void>((resolve) => s.bot.delivery.once('changed', () => resolve()));
    }
  } finally {
    s.bot.delivery.off('changed', on);
  }
}

async function linkGiveaway(s: LinkStack, winners: number, logins: string[]) {
  const opened = nextDrawOpened(s);
  s.say(s.mod, `!giveaway start mug ${winners} 30`);
  const open = await opened;
  s.enter(logins);
  const settled = drawSettled(s, open.id);
  s.say(s.mod, '!giveaway end');
  const { record } = await settled;
  return record;
}

async function dashboardPrizes(s: LinkStack): Promise<{ login: string; label: string }[]> {
  const res = await fetch(`${s.bot.http.localUrl}/dashboard/api/prizes`, {
    headers: { authorization: `Bearer ${s.bot.pages.token.token}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { prizes: { login: string; label: string }[] }).prizes;
}

describe('delivery states and redemption', () => {
  it('announced -> redeemed by webhook, and by one poll when the webhook is lost; then nothing is polled', async () => {
    const s = await startLinkStack({ settings: { delivery: { pollSeconds: 3600 } } });
    stacks.push(s);
    const logins = ['ana', 'ben', 'cai'];
    const record = await linkGiveaway(s, 2, logins);
    expect(record.winners).toHaveLength(2);
    const [w1, w2] = record.winners as [(typeof record.winners)[0], (typeof record.winners)[0]];
    // Both winners are tracked as announced, on the dashboard and in the history.
    const waiting = await waitingReaches(s, (list) => list.length === 2);
    expect(waiting.map((p) => p.login).sort()).toEqual([w1.login, w2.login].sort());
    expect((await dashboardPrizes(s)).map((p) => [p.login, p.label]).sort()).toEqual(
      [
        [w1.login, 'announced'],
        [w2.login, 'announced'],
      ].sort(),
    );
    expect(s.bot.delivery.pollArmed()).toBe(true);
    let rows = await s.history();
    const row = () =>
      rows.find((r) => r.id === record.id)! as unknown as { winners: { login: string; delivery?: Delivery }[] };
    for (const w of row().winners) expect(w.delivery?.announcedAt).toMatch(/^\d{4}-/);
    const table = captureIo(s.dataDir);
    expect(await runHistoryCli([], table.io)).toBe(0);
    expect(table.out()).toMatch(/DELIVERY/);
    expect(table.out()).toContain('2 announced');
    // One draw's detail: a prize only announced is its time alone, in the tables' local time shape.
    const LOCAL = '\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d';
    const detail = captureIo(s.dataDir);
    expect(await runHistoryCli(['--draw', record.id], detail.io)).toBe(0);
    expect(detail.out()).toMatch(new RegExp(`^ {4}delivery announced ${LOCAL}$`, 'm'));
    // (no ISO time: its "T" between date and time; a bare "\d\dZ" also matched the random gift ids)
    expect(detail.out()).not.toMatch(/announced: announced|\d{4}-\d\d-\d\dT\d\d:\d\d/);

    // Winner 1 redeems on the shop's redeem page: ORDER_PLACED moves them to redeemed.
    const redeemed1 = deliveryReaches(s, w1.userId, (d) => !!d.redeemedAt);
    const page = await fetch(w1.redeemUrl!, { method: 'POST' });
    expect(page.status).toBe(200);
    const d1 = await redeemed1;
    const order1 = [...s.fw.state.orders.values()].find(
      (o) => (o.source as { giftId?: string } | undefined)?.giftId === w1.giftId,
    )!;
    expect(d1.orderFriendlyId).toBe(order1.friendlyId);
    expect((await dashboardPrizes(s)).map((p) => p.login)).toEqual([w2.login]);

    // Winner 2 redeems while the webhook is lost: one poll finds it.
    s.fw.control.webhookFaults.drop({ type: 'ORDER_PLACED' });
    s.fw.control.redeemGift(w2.giftId!);
    const before = s.requests('getGiveawayPackage').length;
    await s.bot.delivery.tick();
    expect(s.requests('getGiveawayPackage').length - before).toBe(1);
    expect(await dashboardPrizes(s)).toEqual([]);
    rows = await s.history();
    for (const w of row().winners) expect(w.delivery?.redeemedAt).toMatch(/^\d{4}-/);
    const after = captureIo(s.dataDir);
    expect(await runHistoryCli([], after.io)).toBe(0);
    expect(after.out()).toContain('all redeemed');
    const detail2 = captureIo(s.dataDir);
    expect(await runHistoryCli(['--draw', record.id], detail2.io)).toBe(0);
    expect(detail2.out()).toMatch(
      new RegExp(
        `^ {4}delivery redeemed; announced ${LOCAL}, redeemed ${LOCAL} \\(order ${order1.friendlyId}\\)$`,
        'm',
      ),
    );

    // Every prize redeemed: no poll is armed, and a poll round asks Fourthwall nothing.
    expect(s.bot.delivery.pollArmed()).toBe(false);
    const settledCount = s.requests('getGiveawayPackage').length;
    await s.bot.delivery.tick();
    expect(s.requests('getGiveawayPackage').length).toBe(settledCount);
  });

  it('a reroll: the replacement is tracked with a new link, the other winner keeps their state, the replaced one keeps the link they had (listed as replaced)', async () => {
    const s = await startLinkStack({ settings: { delivery: { pollSeconds: 3600 } } });
    stacks.push(s);
    const record = await linkGiveaway(s, 2, ['ana', 'ben', 'cai', 'dee']);
    const before = await waitingReaches(s, (list) => list.length === 2);
    const [kept, replaced] = record.winners as [(typeof record.winners)[0], (typeof record.winners)[0]];
    const keptAt = before.find((p) => p.userId === kept.userId)!.delivery.announcedAt;
    const from = s.mark();
    s.say(s.mod, `!giveaway reroll ${replaced.login}`);
    await s.nextBotLine(/is replaced by/, from);
    const after = await waitingReaches(s, (list) => list.length === 3);
    const newcomer = after.find((p) => p.userId !== kept.userId && p.userId !== replaced.userId)!;
    expect(newcomer.link).toMatch(/\/gifts\//);
    expect(newcomer.link).not.toBe(replaced.redeemUrl);
    expect(newcomer.replaced).toBeUndefined();
    expect(after.find((p) => p.userId === kept.userId)!.delivery.announcedAt).toBe(keptAt);
    const old = after.find((p) => p.userId === replaced.userId)!;
    expect(old).toMatchObject({ link: replaced.redeemUrl, replaced: true });
  });
});
