import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { verifyDraw } from '../src/fairness/verify.js';
import { commitmentOf } from '../src/fairness/procedure.js';
import type { DrawRecord } from '../src/giveaway/model.js';
import { chatMsg, driveUntil, linksIn, START_MS, waitFor, type Harness } from './support/giveaway-fakes.js';
import { harnessPerTest } from './support/giveaway-harness.js';

const make = harnessPerTest();

async function finishedRecord(h: Harness, id: string): Promise<DrawRecord> {
  const r = await h.repo.getDraw(id);
  if (!r) throw new Error(`no record ${id}`);
  return r;
}

describe('gift draw: entrants and winners', () => {
  for (const n of [5, 20]) {
    it(`${n} entrants for 5 gifts -> ${Math.min(n, 5)} winners, finished once at Fourthwall`, async () => {
      const h = await make();
      const draw = h.shop.addDraw({ gifts: 5, durationSeconds: 60 });
      await h.svc.handleGiftDrawStarted(draw, 'weve_1');
      expect(h.svc.openDrawCount()).toBe(1);
      const announcement = h.chat.texts()[0]!;
      expect(announcement).toContain('generous_fan');
      expect(announcement).toContain('5x Cozy Hoodie');
      expect(announcement).toContain('!enter');
      expect(announcement).toContain('60s');
      const opened = await h.repo.getDraw(draw.id);
      // the commitment as the draw code (its first 16 hex digits), never the whole 64 in chat
      expect(announcement).toContain(`(draw code ${opened!.fairness.commitment.slice(0, 16)})`);
      expect(announcement).not.toMatch(/[0-9a-f]{17}/);
      expect(opened!.fairness.seed).toBeUndefined();

      for (let i = 0; i < n; i++) h.svc.enter(chatMsg(`viewer${i}`));
      for (let i = 0; i < n; i++) expect(h.svc.enter(chatMsg(`viewer${i}`))).toBe(0);
      const done = once(h.svc.events, 'draw-finished');
      h.clock.advance(60_000);
      const [rec] = (await done) as [DrawRecord];

      const want = Math.min(n, 5);
      expect(rec.winners).toHaveLength(want);
      expect(new Set(rec.winners.map((w) => w.userId)).size).toBe(want);
      expect(h.shop.count('finishDraw')).toBe(1);
      const [, participants] = h.shop.calls.find((c) => c.op === 'finishDraw')!.args as [
        string,
        { userId: string; userName: string }[],
      ];
      expect(participants.map((p) => p.userId)).toEqual(rec.winners.map((w) => w.userId));
      for (const w of rec.winners) expect(w.redeemUrl).toMatch(/^https:\/\/fourthwall\.com\/gifts\/gft_/);
      expect(h.chat.matching(/congratulations/)).toHaveLength(1);
      const stored = await finishedRecord(h, draw.id);
      expect(stored.status).toBe('finished');
      expect(stored.entrants).toBe(n);
      expect(stored.source).toMatchObject({ drawId: draw.id, eventId: 'weve_1' });
      expect(stored.finishInFlight ?? false).toBe(false);
      expect(stored.pendingSeed).toBeUndefined();
      expect(commitmentOf(Buffer.from(stored.fairness.seed!, 'hex'))).toBe(stored.fairness.commitment);
      expect(stored.frozenEntrants).toHaveLength(n);
      expect(verifyDraw(stored)).toMatchObject({ ok: true });
      // No chat line per entrant: announcements, reminders, batched acks and results only.
      expect(h.chat.lines.length).toBeLessThanOrEqual(6);
      expect(h.svc.openDrawCount()).toBe(0);
    });
  }

  it('reminders at half time and near the end carry the entrant count and are low priority', async () => {
    const h = await make({ settings: { reminders: { halfTime: true, nearEndSeconds: 10, ackEverySeconds: 0 } } });
    await h.svc.handleGiftDrawStarted(h.shop.addDraw({ gifts: 1 }));
    h.svc.enter(chatMsg('a'));
    h.svc.enter(chatMsg('b'));
    h.clock.advance(30_000);
    h.svc.enter(chatMsg('c'));
    h.clock.advance(20_000);
    const reminders = h.chat.lines.filter((l) => l.text.includes('left'));
    expect(reminders.map((l) => l.text)).toEqual([
      expect.stringContaining('30s left, 2 entered'),
      expect.stringContaining('10s left, 3 entered'),
    ]);
    for (const r of reminders) expect(r.options).toMatchObject({ priority: 'low', staleAfterMs: expect.any(Number) });
  });

  it('a late webhook only gets the remaining time', async () => {
    const h = await make();
    h.clock.advance(45_000);
    await h.svc.handleGiftDrawStarted(h.shop.addDraw({ gifts: 1, createdAt: START_MS, durationSeconds: 60 }));
    expect(h.chat.texts()[0]).toContain('15s');
    h.svc.enter(chatMsg('late'));
    const done = once(h.svc.events, 'draw-finished');
    h.clock.advance(15_000);
    const [rec] = (await done) as [DrawRecord];
    expect(rec.winners.map((w) => w.login)).toEqual(['late']);
  });

  it('batched acknowledgement: one low-priority line for many entrants', async () => {
    const h = await make({ settings: { reminders: { halfTime: false, nearEndSeconds: 0, ackEverySeconds: 15 } } });
    await h.svc.handleGiftDrawStarted(h.shop.addDraw({ gifts: 1 }));
    for (let i = 0; i < 30; i++) h.svc.enter(chatMsg(`v${i}`));
    h.clock.advance(15_000);
    const acks = h.chat.lines.filter((l) => l.text.includes('more joined'));
    expect(acks).toHaveLength(1);
    expect(acks[0]!.text).toContain('30 more joined');
    expect(acks[0]!.options?.priority).toBe('low');
  });

  // 0, 1 and N-1 entrants for N gifts: one story (handed back, failed with the reason, one chat line).
  for (const n of [0, 1, 4]) {
    it(`${n} eligible for 5 gifts: no finish call (one winner per gift or none), failed with the reason, said in chat`, async () => {
      const h = await make();
      const draw = h.shop.addDraw({ gifts: 5, durationSeconds: 60 });
      await h.svc.handleGiftDrawStarted(draw, 'weve_1');
      for (let i = 0; i < n; i++) h.svc.enter(chatMsg(`viewer${i}`));
      const failed = once(h.svc.events, 'draw-failed');
      h.clock.advance(60_000);
      const [rec] = (await failed) as [DrawRecord];
      expect(rec.status).toBe('failed');
      expect(rec.winners).toEqual([]);
      expect(h.shop.count('finishDraw')).toBe(0);
      const eligible = n === 0 ? 'no eligible entrant' : `only ${n} eligible ${n === 1 ? 'entrant' : 'entrants'}`;
      expect(
        h.chat.matching(
          new RegExp(
            `^Cozy Hoodie: ${eligible} for 5 gifts, and Fourthwall needs one winner per gift, so nobody wins this round\\.$`,
          ),
        ),
      ).toHaveLength(1);
      // After the window (announcement, acknowledgements, reminders) one line says it all.
      const after = h.chat.texts().filter((t) => !/^🎁 |more joined|^⏳ /.test(t));
      expect(after).toHaveLength(1);
      expect(h.chat.matching(/congratulations/)).toHaveLength(0);
      const stored = await finishedRecord(h, draw.id);
      expect(stored.status).toBe('failed');
      expect(stored.failure?.reason).toContain(`${eligible} for 5 gifts`);
      expect(stored.frozenEntrants).toHaveLength(n);
      expect(h.svc.openDrawCount()).toBe(0);
    });
  }

  it('the broadcaster and the bot are never entrants', async () => {
    const h = await make();
    await h.svc.handleGiftDrawStarted(h.shop.addDraw({ gifts: 1 }));
    expect(h.svc.enter(chatMsg('streamer', { userId: '1000', roles: { broadcaster: true } }))).toBe(0);
    expect(h.svc.enter(chatMsg('giftbot'))).toBe(0);
    expect(h.svc.enter({ ...chatMsg('someone'), self: true })).toBe(0);
    expect(h.svc.enter(chatMsg('viewer'))).toBe(1);
    const done = once(h.svc.events, 'draw-finished');
    h.clock.advance(60_000);
    const [rec] = (await done) as [DrawRecord];
    expect(rec.winners.map((w) => w.login)).toEqual(['viewer']);
  });

  it('a REDO draw runs like a new one', async () => {
    const h = await make();
    await h.svc.handleGiftDrawStarted(h.shop.addDraw({ id: 'gdr_redo', gifts: 1, type: 'REDO' }));
    h.svc.enter(chatMsg('x'));
    const done = once(h.svc.events, 'draw-finished');
    h.clock.advance(60_000);
    await done;
    expect(h.shop.count('finishDraw')).toBe(1);
  });
});

describe('gift draw: overlapping and duplicate draws', () => {
  it('!enter joins both open draws; nobody wins twice in one draw', async () => {
    const h = await make();
    await h.svc.handleGiftDrawStarted(h.shop.addDraw({ id: 'gdr_a', gifts: 3, durationSeconds: 60 }));
    h.clock.advance(20_000);
    await h.svc.handleGiftDrawStarted(
      h.shop.addDraw({ id: 'gdr_b', gifts: 3, durationSeconds: 60, createdAt: START_MS + 20_000 }),
    );
    expect(h.svc.openDrawCount()).toBe(2);
    for (const l of ['a', 'b', 'c', 'd']) expect(h.svc.enter(chatMsg(l))).toBe(2);
    const finished: DrawRecord[] = [];
    h.svc.events.on('draw-finished', (r) => finished.push(r));
    h.clock.advance(40_000);
    await waitFor(() => finished.length === 1, 'first draw');
    h.clock.advance(20_000);
    await waitFor(() => finished.length === 2, 'second draw');
    for (const r of finished) {
      expect(r.entrants).toBe(4);
      expect(r.winners).toHaveLength(3);
      expect(new Set(r.winners.map((w) => w.userId)).size).toBe(3);
    }
    expect(finished.map((r) => r.id)).toEqual(['gdr_a', 'gdr_b']);
  });

  it('a duplicate GIFT_DRAW_STARTED is ignored (also when delivered concurrently)', async () => {
    const h = await make();
    const draw = h.shop.addDraw({ gifts: 1 });
    await Promise.all([h.svc.handleGiftDrawStarted(draw, 'e1'), h.svc.handleGiftDrawStarted(draw, 'e2')]);
    await h.svc.handleGiftDrawStarted(draw, 'e3');
    expect(h.svc.openDrawCount()).toBe(1);
    expect(h.chat.matching(/gifted/)).toHaveLength(1);
    h.svc.enter(chatMsg('one'));
    const done = once(h.svc.events, 'draw-finished');
    h.clock.advance(60_000);
    await done;
    await h.svc.handleGiftDrawStarted(draw, 'e4');
    expect(h.svc.openDrawCount()).toBe(0);
    expect(h.chat.matching(/gifted/)).toHaveLength(1);
    expect((await h.repo.getDraw(draw.id))!.source.eventId).toBe('e1');
  });

  it('gift draws are ignored when the bot runs the purchase flow', async () => {
    const h = await make({ settings: { giftFlow: 'purchase' } });
    await h.svc.handleGiftDrawStarted(h.shop.addDraw({ gifts: 1 }));
    expect(h.svc.openDrawCount()).toBe(0);
    expect(h.chat.lines).toHaveLength(0);
  });
});

describe('gift draw: Fourthwall outcomes', () => {
  async function closeWithEntrants(h: Harness, gifts: number, logins: string[]): Promise<string> {
    const draw = h.shop.addDraw({ gifts });
    await h.svc.handleGiftDrawStarted(draw);
    for (const l of logins) h.svc.enter(chatMsg(l));
    h.clock.advance(60_000);
    return draw.id;
  }

  it('GIFT_DRAW_ENDED reconciles the record without a second announcement', async () => {
    const h = await make();
    const done = once(h.svc.events, 'draw-finished');
    const id = await closeWithEntrants(h, 2, ['a', 'b', 'c']);
    await done;
    const before = h.chat.lines.length;
    const ended = structuredClone(h.shop.draws.get(id)!);
    await h.svc.handleGiftDrawEnded(ended);
    expect(h.chat.lines.length).toBe(before);
    expect(h.shop.count('finishDraw')).toBe(1);
    const rec = await finishedRecord(h, id);
    expect(rec.status).toBe('finished');
    expect(rec.winners.every((w) => w.redeemUrl)).toBe(true);
  });

  it('GIFT_DRAW_ENDED from another process fills in missing links, quietly', async () => {
    const h = await make();
    h.shop.finishPlan = [{ error: 'outcome-unknown', applied: true }];
    h.shop.getPlan = [{ error: 'not-found' }];
    const failed = once(h.svc.events, 'draw-failed');
    const id = await closeWithEntrants(h, 1, ['a']);
    await failed;
    const winnersLines = h.chat.matching(/congratulations/).length;
    expect(winnersLines).toBe(0);
    await h.svc.handleGiftDrawEnded(structuredClone(h.shop.draws.get(id)!));
    const rec = await finishedRecord(h, id);
    expect(rec.status).toBe('finished');
    expect(rec.winners[0]!.redeemUrl).toContain('/gifts/');
    // The failed draw's winners had not been announced: they are now, once.
    expect(h.chat.matching(/congratulations/)).toHaveLength(1);
    await h.svc.handleGiftDrawEnded(structuredClone(h.shop.draws.get(id)!));
    expect(h.chat.matching(/congratulations/)).toHaveLength(1);
  });

  it('finish outcome unknown, and Fourthwall already has the winners: no second finish', async () => {
    const h = await make();
    h.shop.finishPlan = [{ error: 'outcome-unknown', applied: true }];
    const done = once(h.svc.events, 'draw-finished');
    const id = await closeWithEntrants(h, 2, ['a', 'b', 'c', 'd']);
    const [rec] = (await done) as [DrawRecord];
    expect(h.shop.count('finishDraw')).toBe(1);
    expect(h.shop.count('getDraw')).toBe(1);
    expect(rec.winners).toHaveLength(2);
    expect(rec.winners.map((w) => w.redeemUrl)).toEqual(h.shop.draws.get(id)!.gifts.map((g) => g.winner!.redeemUri));
    expect(h.chat.matching(/congratulations/)).toHaveLength(1);
    expect(verifyDraw(await finishedRecord(h, id))).toMatchObject({ ok: true });
  });

  it('finish outcome unknown, and the draw is not finished: the same winners are sent again', async () => {
    const h = await make();
    h.shop.finishPlan = [{ error: 'outcome-unknown', applied: false }];
    const done = once(h.svc.events, 'draw-finished');
    await closeWithEntrants(h, 2, ['a', 'b', 'c', 'd']);
    const [rec] = (await done) as [DrawRecord];
    const sent = h.shop.calls.filter((c) => c.op === 'finishDraw').map((c) => c.args[1]);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toEqual(sent[0]);
    expect((sent[0] as { userId: string }[]).map((p) => p.userId)).toEqual(rec.winners.map((w) => w.userId));
  });

  it('"already finished" with Fourthwall winners is taken as the result', async () => {
    const h = await make();
    h.shop.finishPlan = [{ error: 'already-finished', applied: true }];
    const done = once(h.svc.events, 'draw-finished');
    await closeWithEntrants(h, 1, ['a', 'b']);
    const [rec] = (await done) as [DrawRecord];
    expect(rec.status).toBe('finished');
    expect(rec.winners[0]!.redeemUrl).toBeDefined();
  });

  it('an unavailable shop is retried within the Fourthwall deadline', async () => {
    const h = await make();
    h.shop.finishPlan = [{ error: 'unavailable' }, { error: 'unavailable' }];
    const finished: DrawRecord[] = [];
    h.svc.events.on('draw-finished', (r) => finished.push(r));
    await closeWithEntrants(h, 1, ['a']);
    await driveUntil(h.clock, () => finished.length > 0);
    expect(h.shop.count('finishDraw')).toBe(3);
    expect(h.clock.now() - START_MS).toBeLessThan(120_000);
  });

  it('a permanent failure marks the draw failed and reports it to the operator and chat', async () => {
    const h = await make();
    h.shop.finishPlan = [{ error: 'rejected' }];
    const failed = once(h.svc.events, 'draw-failed');
    const id = await closeWithEntrants(h, 1, ['a', 'b']);
    const [rec] = (await failed) as [DrawRecord];
    expect(rec.status).toBe('failed');
    expect(rec.failure?.reason).toMatch(/refused/);
    expect(h.operator.lines.some((l) => l.line.includes(id) && l.line.includes('failed'))).toBe(true);
    const chatFail = h.chat.lines.find((l) => l.text.includes('ran into a problem'));
    expect(chatFail?.options?.priority).toBe('high');
    expect((await finishedRecord(h, id)).status).toBe('failed');
    expect(h.shop.count('finishDraw')).toBe(1);
  });

  it('an unavailable shop past the deadline fails the draw', async () => {
    const h = await make();
    h.shop.finishDefault = { error: 'unavailable' };
    const failed: DrawRecord[] = [];
    h.svc.events.on('draw-failed', (r) => failed.push(r));
    await closeWithEntrants(h, 1, ['a']);
    await driveUntil(h.clock, () => failed.length > 0);
    expect(failed[0]!.failure?.reason).toMatch(/could not be reached/);
    expect(h.clock.now()).toBeLessThanOrEqual(START_MS + 120_000);
  });
});

describe('gift draw: the timer-vs-end race', () => {
  it('!giveaway end first: the timer does nothing', async () => {
    const h = await make();
    await h.svc.handleGiftDrawStarted(h.shop.addDraw({ gifts: 1 }));
    h.svc.enter(chatMsg('a'));
    const closed: DrawRecord[] = [];
    h.svc.events.on('draw-closed', (r) => closed.push(r));
    const done = once(h.svc.events, 'draw-finished');
    expect(h.svc.endNow()).toBe(1);
    expect(h.svc.endNow()).toBe(0);
    h.clock.advance(60_000);
    await done;
    await h.svc.whenIdle();
    expect(closed).toHaveLength(1);
    expect(h.shop.count('finishDraw')).toBe(1);
  });

  it('the timer first: an end in the same tick does nothing', async () => {
    const h = await make();
    await h.svc.handleGiftDrawStarted(h.shop.addDraw({ gifts: 1 }));
    h.svc.enter(chatMsg('a'));
    const ends: number[] = [];
    h.svc.events.on('draw-closed', () => ends.push(h.svc.endNow()));
    const done = once(h.svc.events, 'draw-finished');
    h.clock.advance(60_000);
    await done;
    await h.svc.whenIdle();
    expect(ends).toEqual([0]);
    expect(h.shop.count('finishDraw')).toBe(1);
  });
});

describe('gift draw: links stay private', () => {
  it('links go to the operator console, never to chat or the log', async () => {
    const h = await make();
    await h.svc.handleGiftDrawStarted(h.shop.addDraw({ gifts: 3 }));
    for (const l of ['a', 'b', 'c', 'd']) h.svc.enter(chatMsg(l));
    const done = once(h.svc.events, 'draw-finished');
    h.clock.advance(60_000);
    const [rec] = (await done) as [DrawRecord];
    const links = rec.winners.map((w) => w.redeemUrl!);
    expect(links).toHaveLength(3);
    expect(linksIn(h.chat.texts().join('\n'))).toEqual([]);
    expect(h.chat.matching(/will send you your redeem link/)).toHaveLength(1);
    const secret = h.operator.lines
      .filter((l) => l.secret)
      .map((l) => l.line)
      .join('\n');
    for (const link of links) expect(secret).toContain(link);
    await h.svc.whenIdle();
    const log = h.logs.text();
    expect(log).toContain('draw finished');
    expect(linksIn(log)).toEqual([]);
    expect(log).not.toContain('[REDACTED]');
    expect(log).not.toContain(rec.fairness.seed!);
  });

  it('links are posted in chat when links.publicInChat is on', async () => {
    const h = await make({ settings: { links: { publicInChat: true } } });
    await h.svc.handleGiftDrawStarted(h.shop.addDraw({ gifts: 1 }));
    h.svc.enter(chatMsg('a'));
    const done = once(h.svc.events, 'draw-finished');
    h.clock.advance(60_000);
    const [rec] = (await done) as [DrawRecord];
    expect(linksIn(h.chat.texts().join('\n'))).toEqual([rec.winners[0]!.redeemUrl]);
  });
});

describe('gift draw: ended at Fourthwall while still open', () => {
  it('ended without winners: the draw is marked failed, never finished afterwards', async () => {
    const h = await make();
    const draw = h.shop.addDraw({ gifts: 1 });
    await h.svc.handleGiftDrawStarted(draw);
    h.svc.enter(chatMsg('a'));
    await h.svc.handleGiftDrawEnded(structuredClone(h.shop.draws.get(draw.id)!));
    expect(h.svc.openDrawCount()).toBe(0);
    expect(h.svc.enter(chatMsg('b'))).toBe(0);
    h.clock.advance(120_000);
    await h.svc.whenIdle();
    expect(h.shop.count('finishDraw')).toBe(0);
    const rec = (await h.repo.getDraw(draw.id))!;
    expect(rec.status).toBe('failed');
    expect(rec.failure!.reason).toMatch(/closed the draw/);
  });

  it('ended with winners someone else sent: recorded as finished with those winners', async () => {
    const h = await make();
    const draw = h.shop.addDraw({ gifts: 1 });
    await h.svc.handleGiftDrawStarted(draw);
    h.svc.enter(chatMsg('a'));
    h.shop.applyWinners(draw.id, [{ userId: 'u-a', userName: 'a' }]);
    await h.svc.handleGiftDrawEnded(structuredClone(h.shop.draws.get(draw.id)!));
    const rec = (await h.repo.getDraw(draw.id))!;
    expect(rec.status).toBe('finished');
    expect(rec.winners.map((w) => [w.userId, w.login])).toEqual([['u-a', 'a']]);
    h.clock.advance(120_000);
    await h.svc.whenIdle();
    expect(h.shop.count('finishDraw')).toBe(0);
  });
});
