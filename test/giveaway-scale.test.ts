/**
 * Big draws through the real engine (GiveawayEngine with file storage): the compact entrant
 * table, the sliced freeze and the frozen list beside the record must give exactly the winners the
 * written procedure gives for the same seed and entrants (computed here independently), keep event
 * payloads free of entrant lists, survive a restart (open draw resumed from the journal; finished
 * draw adopted from storage and rerolled), and leave a history that verifies.
 */
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { freezeEntrants, pickSequence } from '../src/fairness/procedure.js';
import type { DrawRecord } from '../src/giveaway/model.js';
import { verifyDraw } from '../src/fairness/verify.js';
import { ManualClock } from '../src/shared/clock.js';
import {
  chatMsg,
  FakeShop,
  harness,
  makeTempDir,
  purchase,
  removeDir,
  START_MS,
  type Harness,
} from './support/giveaway-fakes.js';

const live: Harness[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const h of live.splice(0)) await h.shutdown();
  for (const d of dirs.splice(0)) await removeDir(d);
});

async function make(...args: Parameters<typeof harness>): Promise<Harness> {
  const h = await harness(...args);
  live.push(h);
  if (!args[0]?.dir) dirs.push(h.dir); // a dir the harness made is this test's to remove
  return h;
}

/** Viewer i: a decimal Twitch-like id (mixed lengths, so "10" < "9" matters), every 4th a subscriber. */
function viewer(i: number) {
  const userId = String(((i * 2_654_435_761) % 4_000_000_000) + 1).slice(0, 4 + (i % 7));
  return { login: `viewer_${i}`, userId: `${userId}${i}`, subscriber: i % 4 === 0 };
}

function enterViewers(h: Harness, from: number, count: number): { userId: string; login: string; weight: number }[] {
  const entered: { userId: string; login: string; weight: number }[] = [];
  for (let i = from; i < from + count; i++) {
    const v = viewer(i);
    const n = h.svc.enter(
      chatMsg(v.login, { userId: v.userId, roles: { subscriber: v.subscriber, subMonths: v.subscriber ? 3 : 0 } }),
    );
    if (n === 1) entered.push({ userId: v.userId, login: v.login, weight: v.subscriber ? 2 : 1 });
  }
  return entered;
}

/** Winners as the written procedure gives them for this seed and entrant list. */
function expectedWinners(
  seedHex: string,
  entrants: { userId: string; login: string; weight: number }[],
  count: number,
): string[] {
  const { frozen, digest } = freezeEntrants(entrants);
  return pickSequence(Buffer.from(seedHex, 'hex'), digest, frozen, count).map((i) => frozen[i]!.userId);
}

const SUB_LUCK = { luck: { subscriberMultiplier: 2 } };

describe('a 50,000-entrant gift draw through the engine', () => {
  it('picks the procedure winners, keeps lists out of events, stores a list that verifies', async () => {
    const h = await make({ settings: SUB_LUCK });
    const draw = h.shop.addDraw({ gifts: 25, durationSeconds: 60 });
    await h.svc.handleGiftDrawStarted(draw);
    const entered = enterViewers(h, 0, 50_000);
    expect(entered).toHaveLength(50_000);
    expect(enterViewers(h, 0, 10)).toHaveLength(0);
    expect(h.svc.entrantCount(draw.id)).toBe(50_000);

    const payloads: DrawRecord[] = [];
    for (const name of ['draw-closed', 'draw-finished'] as const) h.svc.events.on(name, (r) => payloads.push(r));
    h.svc.events.on('winners', (r) => payloads.push(r));
    const done = once(h.svc.events, 'draw-finished');
    h.clock.advance(60_000);
    const [rec] = (await done) as [DrawRecord];
    await h.svc.whenIdle();

    expect(rec.status).toBe('finished');
    expect(rec.entrants).toBe(50_000);
    expect(rec.winners.map((w) => w.userId)).toEqual(expectedWinners(rec.fairness.seed!, entered, 25));
    expect(rec.winners.map((w) => w.pick)).toEqual([...Array(25).keys()]);
    expect(rec.winners[0]!.displayName).toBe(rec.winners[0]!.login.toUpperCase());
    for (const p of payloads) expect(p.frozenEntrants).toBeUndefined();
    expect(payloads).toHaveLength(3);

    const stored = (await h.repo.getDraw(draw.id))!;
    expect(stored.frozenEntrants).toHaveLength(50_000);
    expect(stored.fairness.entrantsDigest).toBe(freezeEntrants(entered).digest);
    expect(verifyDraw(stored)).toEqual({ ok: true, winners: rec.winners.map((w) => w.login) });
    const [, participants] = h.shop.calls.find((c) => c.op === 'finishDraw')!.args as [string, { userId: string }[]];
    expect(participants.map((p) => p.userId)).toEqual(rec.winners.map((w) => w.userId));
  });

  it('eligibility applies at close: excluded viewers are neither frozen nor picked', async () => {
    const h = await make({ settings: { eligibility: { subscribersOnly: true }, ...SUB_LUCK } });
    const draw = h.shop.addDraw({ gifts: 10, durationSeconds: 60 });
    await h.svc.handleGiftDrawStarted(draw);
    const entered = enterViewers(h, 0, 8_000);
    const done = once(h.svc.events, 'draw-finished');
    h.clock.advance(60_000);
    const [rec] = (await done) as [DrawRecord];
    const subs = entered.filter((e) => e.weight === 2);
    expect(rec.winners.map((w) => w.userId)).toEqual(expectedWinners(rec.fairness.seed!, subs, 10));
    const stored = (await h.repo.getDraw(draw.id))!;
    expect(stored.frozenEntrants).toHaveLength(subs.length);
    expect((stored.rules!['excluded'] as Record<string, number>)['not-subscriber']).toBe(entered.length - subs.length);
    expect(verifyDraw(stored)).toMatchObject({ ok: true });
  });
});

describe('restarts', () => {
  async function twoRuns(settings = {}) {
    const dir = await makeTempDir();
    dirs.push(dir);
    const clock = new ManualClock(START_MS);
    const shop = new FakeShop();
    const first = await harness({ dir, clock, shop, settings });
    return { first, next: () => make({ dir, clock, shop, settings }) };
  }

  it('an open draw resumed from its journal draws the same winners as if it had never stopped', async () => {
    const { first, next } = await twoRuns(SUB_LUCK);
    const draw = first.shop.addDraw({ gifts: 5, durationSeconds: 60 });
    await first.svc.handleGiftDrawStarted(draw);
    const before = enterViewers(first, 0, 3_000);
    await first.shutdown();

    const h = await next();
    expect(h.svc.entrantCount(draw.id)).toBe(3_000);
    expect(enterViewers(h, 0, 3_000)).toHaveLength(0);
    const after = enterViewers(h, 3_000, 1_000);
    const done = once(h.svc.events, 'draw-finished');
    h.clock.advance(60_000);
    const [rec] = (await done) as [DrawRecord];
    expect(rec.winners.map((w) => w.userId)).toEqual(expectedWinners(rec.fairness.seed!, [...before, ...after], 5));
    expect(verifyDraw((await h.repo.getDraw(draw.id))!)).toMatchObject({ ok: true });
  });

  it('a finished purchase adopted from storage after a restart keeps its winners: its gift links went out, so a reroll is refused with the reason', async () => {
    const { first, next } = await twoRuns({ giftFlow: 'purchase', ...SUB_LUCK });
    await first.svc.handleGiftPurchase(purchase('giv_big', 3));
    const entered = enterViewers(first, 0, 5_000);
    const done = once(first.svc.events, 'draw-finished');
    first.clock.advance(60_000);
    const [rec] = (await done) as [DrawRecord];
    await first.shutdown();
    const sequence = expectedWinners(rec.fairness.seed!, entered, 5);
    expect(rec.winners.map((w) => w.userId)).toEqual(sequence.slice(0, 3));

    const h = await next();
    const mod = chatMsg('modjo', { roles: { moderator: true } });
    // (issue 46: a gift link that went out stays its winner's; Fourthwall cannot issue the gift again)
    expect(await h.svc.reroll(rec.winners[1]!.login, mod)).toMatchObject({
      ok: false,
      message: expect.stringContaining('gift link has already gone out'),
    });
    const after = (await h.repo.getDraw('giv_big'))!;
    expect(after.winners.map((w) => w.userId)).toEqual(sequence.slice(0, 3));
    expect(after.rerolls ?? []).toEqual([]);
    expect(verifyDraw(after)).toMatchObject({ ok: true });
  });
});
