import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { verifyDraw } from '../src/fairness/verify.js';
import type { DrawRecord } from '../src/giveaway/model.js';
import { chatMsg, linksIn, purchase, waitFor, type Harness } from './support/giveaway-fakes.js';
import { harnessPerTest } from './support/giveaway-harness.js';

const make = harnessPerTest((h) => {
  h.shop.products = [{ id: '3f1c0a52-3333-4a6b-9d1e-000000000003', name: 'Mug', slug: 'mug' }];
});

const mod = () => chatMsg('modjo', { roles: { moderator: true } });

async function claimPhase(h: Harness, id: string): Promise<DrawRecord> {
  await waitFor(() => h.chat.matching(/Type !claim/).length > 0, 'claim prompt');
  await h.svc.whenIdle();
  const rec = (await h.repo.getDraw(id))!;
  expect(rec.status).toBe('drawing');
  expect(rec.claim).toBeDefined();
  return rec;
}

describe('claim window', () => {
  it('an unclaimed winner is replaced by the next pick; links only for the final winners', async () => {
    const h = await make({ settings: { claim: { seconds: 30, maxRerolls: 1 } } });
    const start = await h.svc.startLinkGiveaway(mod(), 'mug', 2, 30);
    const id = (start as { id: string }).id;
    for (const l of ['a', 'b', 'c', 'd']) h.svc.enter(chatMsg(l));
    h.clock.advance(30_000);
    const rec = await claimPhase(h, id);
    const [w1, w2] = rec.winners;
    expect(rec.winners.every((w) => w.claimed === false)).toBe(true);
    expect(h.chat.matching(/Type !claim within 30s/)[0]).toContain(`@${w1!.login} and @${w2!.login}`);
    expect(h.svc.status()).toMatch(/waiting for/);
    expect(h.shop.count('createGiveawayLinks')).toBe(0);

    const outsider = ['a', 'b', 'c', 'd'].find((l) => l !== w1!.login && l !== w2!.login)!;
    expect(h.svc.claim(chatMsg(outsider))).toBe(false);
    expect(h.svc.claim(chatMsg(w1!.login))).toBe(true);
    expect(h.svc.claim(chatMsg(w1!.login))).toBe(false);
    expect(h.chat.matching(new RegExp(`@${w1!.login} claimed Mug`))).toHaveLength(1);

    h.clock.advance(30_000);
    expect(h.chat.matching(new RegExp(`@${w2!.login} is replaced by`))).toHaveLength(1);
    await h.svc.whenIdle();
    const replaced = (await h.repo.getDraw(id))!;
    const w3 = replaced.winners[1]!;
    expect(w3.userId).not.toBe(w2!.userId);
    expect(w3.pick).toBe(2);
    expect(replaced.claim!.rerollsUsed).toBe(1);
    expect(replaced.rerolls).toEqual([
      expect.objectContaining({ reason: 'unclaimed', replacedUserId: w2!.userId, newUserId: w3.userId }),
    ]);

    const done = once(h.svc.events, 'draw-finished');
    expect(h.svc.claim(chatMsg(w3.login))).toBe(true);
    const [fin] = (await done) as [DrawRecord];
    expect(h.shop.calls.filter((c) => c.op === 'createGiveawayLinks').map((c) => c.args[1])).toEqual([2]);
    expect(fin.winners.map((w) => [w.login, w.claimed])).toEqual([
      [w1!.login, true],
      [w3.login, true],
    ]);
    expect(fin.winners.every((w) => w.redeemUrl)).toBe(true);
    expect(verifyDraw((await h.repo.getDraw(id))!)).toMatchObject({ ok: true });
  });

  it('after maxRerolls the unclaimed winner is kept and the prize still goes out', async () => {
    const h = await make({ settings: { claim: { seconds: 20, maxRerolls: 1 } } });
    const id = ((await h.svc.startLinkGiveaway(mod(), 'mug', 1, 30)) as { id: string }).id;
    for (const l of ['a', 'b', 'c']) h.svc.enter(chatMsg(l));
    h.clock.advance(30_000);
    await claimPhase(h, id);
    const done = once(h.svc.events, 'draw-finished');
    h.clock.advance(20_000);
    h.clock.advance(20_000);
    const [fin] = (await done) as [DrawRecord];
    expect(fin.rerolls).toHaveLength(1);
    expect(fin.winners).toHaveLength(1);
    expect(fin.winners[0]!.claimed).toBe(false);
    expect(h.shop.count('createGiveawayLinks')).toBe(1);
  });

  it('a moderator reroll during the claim window asks the new winner to claim', async () => {
    const h = await make({ settings: { claim: { seconds: 30, maxRerolls: 0 } } });
    const id = ((await h.svc.startLinkGiveaway(mod(), 'mug', 1, 30)) as { id: string }).id;
    for (const l of ['a', 'b', 'c']) h.svc.enter(chatMsg(l));
    h.clock.advance(30_000);
    const rec = await claimPhase(h, id);
    expect(await h.svc.reroll(rec.winners[0]!.login, mod())).toMatchObject({ ok: true });
    await h.svc.whenIdle();
    const now = (await h.repo.getDraw(id))!;
    const fresh = now.winners[0]!;
    expect(fresh.claimed).toBe(false);
    expect(h.chat.matching(new RegExp(`@${fresh.login}: you won`))).toHaveLength(1);
    const done = once(h.svc.events, 'draw-finished');
    h.svc.claim(chatMsg(fresh.login));
    const [fin] = (await done) as [DrawRecord];
    expect(fin.winners[0]!.login).toBe(fresh.login);
    expect(fin.rerolls![0]!.reason).toBe('command');
  });

  it('gift draw: the finish call waits for the claims when the window fits', async () => {
    const h = await make({ settings: { claim: { seconds: 30, maxRerolls: 2 } } });
    const draw = h.shop.addDraw({ gifts: 1, durationSeconds: 60 });
    await h.svc.handleGiftDrawStarted(draw);
    h.svc.enter(chatMsg('a'));
    h.svc.enter(chatMsg('b'));
    h.clock.advance(60_000);
    const rec = await claimPhase(h, draw.id);
    expect(h.shop.count('finishDraw')).toBe(0);
    const done = once(h.svc.events, 'draw-finished');
    h.svc.claim(chatMsg(rec.winners[0]!.login));
    const [fin] = (await done) as [DrawRecord];
    expect(h.shop.count('finishDraw')).toBe(1);
    expect(fin.winners[0]!.claimed).toBe(true);
  });

  it('gift draw: a claim window that does not fit before the Fourthwall deadline is skipped with a log line', async () => {
    const h = await make({ settings: { claim: { seconds: 60, maxRerolls: 2 } } });
    const draw = h.shop.addDraw({ gifts: 1, durationSeconds: 60 });
    await h.svc.handleGiftDrawStarted(draw);
    h.svc.enter(chatMsg('a'));
    const done = once(h.svc.events, 'draw-finished');
    h.clock.advance(60_000);
    await done;
    expect(h.chat.matching(/!claim/)).toHaveLength(0);
    expect(h.logs.text()).toContain('claim window skipped');
  });
});

describe('purchase flow', () => {
  it('runs one entry window per purchase, one winner per gift, links on the shop domain, no finish call', async () => {
    const h = await make({ settings: { giftFlow: 'purchase' } });
    h.shop.entrySeconds = 30;
    h.shop.domain = 'https://shop.example.test/';
    const p = purchase('giv_p1', 3);
    await h.svc.handleGiftPurchase(p, 'weve_p');
    await h.svc.handleGiftPurchase(p, 'weve_p_again');
    expect(h.svc.openDrawCount()).toBe(1);
    expect(h.chat.texts()[0]).toMatch(/kind_supporter gifted 3x Sticker Pack.*30s/);
    for (const l of ['a', 'b', 'c', 'd', 'e']) h.svc.enter(chatMsg(l));
    const done = once(h.svc.events, 'draw-finished');
    h.clock.advance(30_000);
    const [rec] = (await done) as [DrawRecord];
    expect(rec.kind).toBe('gift-purchase');
    expect(rec.source).toMatchObject({ giftPurchaseId: 'giv_p1', eventId: 'weve_p' });
    expect(rec.winners).toHaveLength(3);
    expect(rec.winners.map((w) => w.giftId).sort()).toEqual(p.gifts.map((g) => g.id).sort());
    for (const w of rec.winners) expect(w.redeemUrl).toBe(`https://shop.example.test/gifts/${w.giftId}`);
    expect(h.shop.count('finishDraw')).toBe(0);
    expect(h.shop.count('createGiveawayLinks')).toBe(0);
    expect(linksIn(h.chat.texts().join('\n'))).toEqual([]);
    expect(h.operator.lines.filter((l) => l.secret)).toHaveLength(3);
    await h.svc.handleGiftPurchase(p);
    expect(h.svc.openDrawCount()).toBe(0);
    expect(verifyDraw((await h.repo.getDraw('giv_p1'))!)).toMatchObject({ ok: true });
  });

  it('uses purchaseEntrySeconds when the shop does not say; ignores purchases in the draw flow', async () => {
    const h = await make({ settings: { giftFlow: 'purchase', purchaseEntrySeconds: 45 } });
    await h.svc.handleGiftPurchase(purchase('giv_p2', 1));
    expect(h.chat.texts()[0]).toContain('45s');
    const other = await make();
    await other.svc.handleGiftPurchase(purchase('giv_p3', 1));
    expect(other.svc.openDrawCount()).toBe(0);
  });

  it('a purchase winner whose gift link went out is not rerolled: the link stays theirs (a gift cannot be issued again), with the reason', async () => {
    const h = await make({ settings: { giftFlow: 'purchase' } });
    await h.svc.handleGiftPurchase(purchase('giv_p4', 1));
    for (const l of ['a', 'b', 'c']) h.svc.enter(chatMsg(l));
    const done = once(h.svc.events, 'draw-finished');
    h.clock.advance(60_000);
    const [rec] = (await done) as [DrawRecord];
    expect(await h.svc.reroll(rec.winners[0]!.login, mod())).toMatchObject({
      ok: false,
      message: expect.stringMatching(
        /gift link has already gone out \(the console, the dashboard\), so it stays .*Fourthwall cannot issue that gift again/,
      ),
    });
    const after = (await h.repo.getDraw('giv_p4'))!;
    expect(after.winners[0]!.login).toBe(rec.winners[0]!.login);
    expect(after.rerolls ?? []).toEqual([]);
  });
});

describe('gift draw reroll', () => {
  it('a gift draw already finished at Fourthwall cannot be rerolled', async () => {
    const h = await make();
    await h.svc.handleGiftDrawStarted(h.shop.addDraw({ gifts: 1 }));
    h.svc.enter(chatMsg('a'));
    h.svc.enter(chatMsg('b'));
    const done = once(h.svc.events, 'draw-finished');
    h.clock.advance(60_000);
    const [rec] = (await done) as [DrawRecord];
    expect(await h.svc.reroll(rec.winners[0]!.login, mod())).toMatchObject({
      ok: false,
      message: expect.stringContaining('Fourthwall'),
    });
  });
});
