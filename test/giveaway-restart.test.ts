import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/shared/clock.js';
import { verifyDraw } from '../src/fairness/verify.js';
import type { DrawRecord } from '../src/giveaway/model.js';
import {
  chatMsg,
  driveUntil,
  FakeShop,
  harness,
  makeTempDir,
  removeDir,
  START_MS,
  waitFor,
  type Harness,
} from './support/giveaway-fakes.js';

const dirs: string[] = [];
const live: Harness[] = [];
afterEach(async () => {
  for (const h of live.splice(0)) await h.shutdown();
  for (const d of dirs.splice(0)) await removeDir(d);
});

/** A first run and, on the same data dir, clock and shop, a second one. */
async function twoRuns() {
  const dir = await makeTempDir();
  dirs.push(dir);
  const clock = new ManualClock(START_MS);
  const shop = new FakeShop();
  const first = await harness({ dir, clock, shop });
  return {
    first,
    async second(): Promise<Harness> {
      const h = await harness({ dir, clock, shop });
      live.push(h);
      return h;
    },
  };
}

describe('restart', () => {
  it('an open draw resumes with its entrants, seed and remaining time', async () => {
    const { first, second } = await twoRuns();
    const draw = first.shop.addDraw({ gifts: 2, durationSeconds: 60 });
    await first.svc.handleGiftDrawStarted(draw);
    for (const l of ['a', 'b', 'c']) first.svc.enter(chatMsg(l));
    first.clock.advance(20_000);
    const commitment = (await first.repo.getDraw(draw.id))!.fairness.commitment;
    await first.shutdown();

    const h = await second();
    expect(h.svc.openDrawCount()).toBe(1);
    expect(h.chat.texts()[0]).toMatch(/40s left, 3 entered/);
    expect(h.svc.enter(chatMsg('a'))).toBe(0);
    expect(h.svc.enter(chatMsg('d'))).toBe(1);
    const done = once(h.svc.events, 'draw-finished');
    h.clock.advance(39_999);
    expect(h.shop.count('finishDraw')).toBe(0);
    h.clock.advance(1);
    const [rec] = (await done) as [DrawRecord];
    expect(rec.entrants).toBe(4);
    expect(rec.fairness.commitment).toBe(commitment);
    expect(verifyDraw((await h.repo.getDraw(draw.id))!)).toMatchObject({ ok: true });
  });

  it('an open draw whose time ran out while the bot was down closes at once', async () => {
    const { first, second } = await twoRuns();
    const draw = first.shop.addDraw({ gifts: 1, durationSeconds: 60 });
    await first.svc.handleGiftDrawStarted(draw);
    first.svc.enter(chatMsg('a'));
    first.svc.enter(chatMsg('b'));
    await first.shutdown();
    first.clock.advance(70_000);

    const h = await second();
    await waitFor(() => h.shop.count('finishDraw') === 1, 'finish call');
    await h.svc.whenIdle();
    const rec = (await h.repo.getDraw(draw.id))!;
    expect(rec.status).toBe('finished');
    expect(['a', 'b']).toContain(rec.winners[0]!.login);
  });

  it('a finish in flight that Fourthwall applied is reconciled without new winners', async () => {
    const { first, second } = await twoRuns();
    first.shop.finishPlan = [{ error: 'unavailable', applied: true }];
    const draw = first.shop.addDraw({ gifts: 2, durationSeconds: 60 });
    await first.svc.handleGiftDrawStarted(draw);
    for (const l of ['a', 'b', 'c', 'd', 'e']) first.svc.enter(chatMsg(l));
    first.clock.advance(60_000);
    await waitFor(
      () => first.shop.count('finishDraw') === 1 && first.clock.pending() > 0,
      'backoff after the first finish',
    );
    await first.shutdown();
    const journaled = await second();
    // The second run reconciles with GET draw and adopts Fourthwall's (= the recorded) winners.
    await waitFor(() => journaled.shop.count('getDraw') === 1, 'reconcile');
    await journaled.svc.whenIdle();
    expect(journaled.shop.count('finishDraw')).toBe(1);
    const rec = (await journaled.repo.getDraw(draw.id))!;
    expect(rec.status).toBe('finished');
    const sent = journaled.shop.calls.find((c) => c.op === 'finishDraw')!.args[1] as { userName: string }[];
    expect(rec.winners.map((w) => w.login)).toEqual(sent.map((p) => p.userName));
    expect(rec.winners.every((w) => w.redeemUrl)).toBe(true);
    expect(journaled.chat.matching(/congratulations/)).toHaveLength(1);
  });

  it('a finish in flight that Fourthwall never got re-sends the SAME winners', async () => {
    const { first, second } = await twoRuns();
    first.shop.finishPlan = [{ error: 'unavailable' }];
    const draw = first.shop.addDraw({ gifts: 2, durationSeconds: 60 });
    await first.svc.handleGiftDrawStarted(draw);
    for (const l of ['a', 'b', 'c', 'd', 'e']) first.svc.enter(chatMsg(l));
    first.clock.advance(60_000);
    await waitFor(() => first.shop.count('finishDraw') === 1 && first.clock.pending() > 0, 'backoff');
    await first.shutdown();
    const stored = await second();
    await waitFor(() => stored.shop.count('finishDraw') === 2, 'second finish');
    await stored.svc.whenIdle();
    const sent = stored.shop.calls.filter((c) => c.op === 'finishDraw').map((c) => c.args[1]);
    expect(sent[1]).toEqual(sent[0]);
    const rec = (await stored.repo.getDraw(draw.id))!;
    expect(rec.status).toBe('finished');
    expect(verifyDraw(rec)).toMatchObject({ ok: true });
  });

  it('a finish in flight past the Fourthwall deadline is reported, not re-finished', async () => {
    const { first, second } = await twoRuns();
    first.shop.finishPlan = [{ error: 'unavailable' }];
    const draw = first.shop.addDraw({ gifts: 1, durationSeconds: 60 });
    await first.svc.handleGiftDrawStarted(draw);
    first.svc.enter(chatMsg('a'));
    first.clock.advance(60_000);
    await waitFor(() => first.shop.count('finishDraw') === 1 && first.clock.pending() > 0, 'backoff');
    await first.shutdown();
    first.clock.advance(10 * 60_000);
    const h = await second();
    const failed: DrawRecord[] = [];
    h.svc.events.on('draw-failed', (r) => failed.push(r));
    await driveUntil(h.clock, () => failed.length > 0);
    expect(h.shop.count('finishDraw')).toBe(1);
    expect(failed[0]!.failure?.reason).toMatch(/closed the draw/);
  });

  it('stop() leaves open draws journaled and cancels their timers', async () => {
    const { first } = await twoRuns();
    await first.svc.handleGiftDrawStarted(first.shop.addDraw({ gifts: 1 }));
    first.svc.enter(chatMsg('a'));
    await first.svc.stop();
    first.clock.advance(120_000);
    expect(first.shop.count('finishDraw')).toBe(0);
    const [open] = await first.repo.openDraws();
    expect(open!.record.status).toBe('open');
    expect(open!.record.pendingSeed).toMatch(/^[0-9a-f]{64}$/);
    expect(open!.entrants.map((e) => e.login)).toEqual(['a']);
    await first.repo.close();
  });
});
