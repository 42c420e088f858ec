import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { verifyDraw } from '../src/fairness/verify.js';
import type { DrawRecord, ProductInfo } from '../src/giveaway/model.js';
import { chatMsg, driveUntil, linksIn, waitFor, type Harness } from './support/giveaway-fakes.js';
import { harnessPerTest } from './support/giveaway-harness.js';

const PRODUCTS: ProductInfo[] = [
  { id: '3f1c0a52-1111-4a6b-9d1e-000000000001', name: 'Red Hoodie', slug: 'red-hoodie' },
  { id: '3f1c0a52-2222-4a6b-9d1e-000000000002', name: 'Blue Hoodie', slug: 'blue-hoodie' },
  { id: '3f1c0a52-3333-4a6b-9d1e-000000000003', name: 'Mug', slug: 'mug' },
  { id: '3f1c0a52-4444-4a6b-9d1e-000000000004', name: 'Mug Deluxe', slug: 'mug-deluxe' },
];

const make = harnessPerTest((h) => {
  h.shop.products = structuredClone(PRODUCTS);
});

const mod = () => chatMsg('modjo', { roles: { moderator: true } });

async function runLinkGiveaway(h: Harness, winners: number, entrants: string[]): Promise<DrawRecord> {
  const res = await h.svc.startLinkGiveaway(mod(), 'mug', winners, 30);
  expect(res.ok).toBe(true);
  for (const l of entrants) h.svc.enter(chatMsg(l));
  const done = once(h.svc.events, 'draw-finished');
  h.clock.advance(30_000);
  const [rec] = (await done) as [DrawRecord];
  return rec;
}

describe('link giveaway: product lookup', () => {
  it.each([
    ['id', '3f1c0a52-3333-4a6b-9d1e-000000000003', 'Mug'],
    ['id, upper case', '3F1C0A52-2222-4A6B-9D1E-000000000002', 'Blue Hoodie'],
    ['slug', 'RED-HOODIE', 'Red Hoodie'],
    ['exact name beats partial matches', 'mug', 'Mug'],
    ['unique partial name', 'blue', 'Blue Hoodie'],
  ])('by %s', async (_what, query, name) => {
    const h = await make();
    const res = await h.svc.startLinkGiveaway(mod(), query);
    expect(res).toMatchObject({ ok: true });
    expect(h.svc.openDrawCount()).toBe(1);
    const rec = await h.repo.getDraw((res as { id: string }).id);
    expect(rec!.offer.name).toBe(name);
    expect(rec!.kind).toBe('link-giveaway');
    expect(rec!.startedBy).toEqual({ userId: 'u-modjo', login: 'modjo' });
    expect(h.chat.texts()[0]).toContain(`1x ${name}`);
  });

  it('an ambiguous name lists the candidates and opens nothing', async () => {
    const h = await make();
    const res = await h.svc.startLinkGiveaway(mod(), 'hoodie');
    expect(res.ok).toBe(false);
    expect(!res.ok && res.message).toMatch(/Red Hoodie \(red-hoodie\), Blue Hoodie \(blue-hoodie\)/);
    expect(h.svc.openDrawCount()).toBe(0);
  });

  it('at most five candidates are listed', async () => {
    const h = await make();
    h.shop.products = Array.from({ length: 8 }, (_, i) => ({
      id: `prod-000${i}`,
      name: `Shirt ${i}`,
      slug: `shirt-${i}`,
    }));
    const res = await h.svc.startLinkGiveaway(mod(), 'shirt');
    expect(!res.ok && res.message.match(/Shirt \d/g)).toHaveLength(5);
  });

  it('an unknown product says so', async () => {
    const h = await make();
    const res = await h.svc.startLinkGiveaway(mod(), 'poster');
    expect(res).toEqual({ ok: false, message: 'No product matches "poster".' });
    expect(h.svc.openDrawCount()).toBe(0);
  });

  it('bad winners/seconds are refused with the limits', async () => {
    const h = await make({ settings: { links: { maxWinners: 5, maxSeconds: 120 } } });
    expect(await h.svc.startLinkGiveaway(mod(), 'mug', 6)).toMatchObject({
      ok: false,
      message: expect.stringContaining('1 to 5'),
    });
    expect(await h.svc.startLinkGiveaway(mod(), 'mug', 1, 500)).toMatchObject({
      ok: false,
      message: expect.stringContaining('5 to 120'),
    });
    expect(h.shop.count('listProducts')).toBe(0);
  });

  it('one link giveaway at a time', async () => {
    const h = await make();
    const [a, b] = await Promise.all([
      h.svc.startLinkGiveaway(mod(), 'mug'),
      h.svc.startLinkGiveaway(mod(), 'red hoodie'),
    ]);
    expect([a.ok, b.ok].sort()).toEqual([false, true]);
    expect(await h.svc.startLinkGiveaway(mod(), 'red hoodie')).toMatchObject({
      ok: false,
      message: expect.stringContaining('already running'),
    });
  });
});

describe('link giveaway: drawing and delivery', () => {
  it('creates exactly one link per winner and delivers them privately', async () => {
    const h = await make();
    const rec = await runLinkGiveaway(h, 2, ['a', 'b', 'c', 'd']);
    expect(h.shop.calls.filter((c) => c.op === 'createGiveawayLinks').map((c) => c.args)).toEqual([
      [PRODUCTS[2]!.id, 2],
    ]);
    expect(rec.winners).toHaveLength(2);
    expect(rec.source.packageId).toBe('gpg_1');
    const links = rec.winners.map((w) => w.redeemUrl!);
    expect(links.every((l) => l.includes('/gifts/gft_link_1_'))).toBe(true);
    expect(linksIn(h.chat.texts().join('\n'))).toEqual([]);
    const console = h.operator.lines.filter((l) => l.secret).map((l) => l.line);
    expect(console).toHaveLength(2);
    for (const l of links) expect(console.join('\n')).toContain(l);
    const stored = (await h.repo.getDraw(rec.id))!;
    expect(stored.winners.map((w) => w.redeemUrl)).toEqual(links);
    expect(verifyDraw(stored)).toMatchObject({ ok: true });
    await h.svc.whenIdle();
    expect(linksIn(h.logs.text())).toEqual([]);
    expect(h.logs.text()).not.toContain('[REDACTED]');
  });

  it('fewer entrants than winners: links only for the actual winners; nobody: no links at all', async () => {
    const h = await make();
    const rec = await runLinkGiveaway(h, 3, ['a']);
    expect(rec.winners).toHaveLength(1);
    expect(h.shop.calls.find((c) => c.op === 'createGiveawayLinks')!.args).toEqual([PRODUCTS[2]!.id, 1]);
    const empty = await runLinkGiveaway(h, 2, []);
    expect(empty.winners).toEqual([]);
    expect(h.shop.count('createGiveawayLinks')).toBe(1);
    expect(h.chat.matching(/Nobody entered/)).toHaveLength(1);
  });

  it('links are public in chat only with links.publicInChat', async () => {
    const h = await make({ settings: { links: { publicInChat: true } } });
    const rec = await runLinkGiveaway(h, 1, ['a', 'b']);
    expect(linksIn(h.chat.texts().join('\n'))).toEqual([rec.winners[0]!.redeemUrl]);
  });

  it('cancel: no links are created, entries stop, the record says cancelled', async () => {
    const h = await make();
    const res = await h.svc.startLinkGiveaway(mod(), 'mug', 1, 30);
    h.svc.enter(chatMsg('a'));
    const cancelled = once(h.svc.events, 'draw-cancelled');
    expect(await h.svc.cancel()).toMatchObject({ ok: true });
    await cancelled;
    expect(h.svc.enter(chatMsg('b'))).toBe(0);
    h.clock.advance(60_000);
    await h.svc.whenIdle();
    expect(h.shop.count('createGiveawayLinks')).toBe(0);
    const rec = (await h.repo.getDraw((res as { id: string }).id))!;
    expect(rec.status).toBe('cancelled');
    expect(rec.winners).toEqual([]);
    expect(h.chat.matching(/cancelled/)).toHaveLength(1);
    expect(await h.svc.cancel()).toMatchObject({ ok: false });
  });

  it('!giveaway end closes the link giveaway early', async () => {
    const h = await make();
    await h.svc.startLinkGiveaway(mod(), 'mug', 1, 300);
    h.svc.enter(chatMsg('a'));
    const done = once(h.svc.events, 'draw-finished');
    expect(h.svc.endNow()).toBe(1);
    const [rec] = (await done) as [DrawRecord];
    expect(rec.winners.map((w) => w.login)).toEqual(['a']);
  });

  it("reroll: the next pick replaces the winner with a new link (the old one had gone out: it stays the replaced winner's)", async () => {
    const h = await make();
    const rec = await runLinkGiveaway(h, 2, ['a', 'b', 'c', 'd', 'e']);
    const [first, second] = rec.winners;
    const res = await h.svc.reroll(`@${first!.login.toUpperCase()}`, mod());
    expect(res).toMatchObject({ ok: true });
    const after = (await h.repo.getDraw(rec.id))!;
    const replacement = after.winners[0]!;
    expect(replacement.userId).not.toBe(first!.userId);
    expect(replacement.userId).not.toBe(second!.userId);
    expect(replacement.pick).toBe(2);
    expect(replacement.redeemUrl).toMatch(/^https:/);
    expect(replacement.redeemUrl).not.toBe(first!.redeemUrl);
    expect(replacement.redeemUrl).not.toBe(second!.redeemUrl);
    expect(after.winners[1]).toEqual(second);
    expect(after.rerolls).toEqual([
      expect.objectContaining({
        replacedUserId: first!.userId,
        newUserId: replacement.userId,
        reason: 'command',
        byUserId: 'u-modjo',
        kept: { giftId: first!.giftId, redeemUrl: first!.redeemUrl },
      }),
    ]);
    expect(after.source.extraPackageIds).toHaveLength(1);
    expect(verifyDraw(after)).toMatchObject({ ok: true });
    expect(h.chat.matching(new RegExp(`@${first!.login} is replaced by @${replacement.login}`))).toHaveLength(1);
    expect(
      h.operator.lines.filter(
        (l) => l.secret && l.line.includes(`@${replacement.login}`) && l.line.includes(replacement.redeemUrl!),
      ),
    ).toHaveLength(1);
    expect(h.shop.count('createGiveawayLinks')).toBe(2);
    expect(await h.svc.reroll('nobody', mod())).toMatchObject({ ok: false });
  });

  it('reroll when everybody has been picked keeps the winner', async () => {
    const h = await make();
    const rec = await runLinkGiveaway(h, 1, ['a']);
    expect(await h.svc.reroll('a', mod())).toMatchObject({
      ok: false,
      message: expect.stringContaining('Nobody is left'),
    });
    expect((await h.repo.getDraw(rec.id))!.winners.map((w) => w.login)).toEqual(['a']);
  });

  it('link creation failure: retried, then reported with the winners kept; !giveaway retry delivers', async () => {
    const h = await make({ settings: { links: { createDeadlineSeconds: 5 } } });
    h.shop.linkPlan = [
      { error: 'unavailable' },
      { error: 'unavailable' },
      { error: 'unavailable' },
      { error: 'unavailable' },
    ];
    await h.svc.startLinkGiveaway(mod(), 'mug', 1, 30);
    h.svc.enter(chatMsg('a'));
    h.svc.enter(chatMsg('b'));
    const failed: DrawRecord[] = [];
    h.svc.events.on('draw-failed', (r) => failed.push(r));
    h.clock.advance(30_000);
    await driveUntil(h.clock, () => failed.length > 0);
    const rec = failed[0]!;
    expect(rec.failure!.reason).toMatch(/retry/);
    expect(rec.winners).toHaveLength(1);
    expect(h.shop.count('createGiveawayLinks')).toBeGreaterThan(1);
    expect(
      h.operator.lines.some((l) => l.line.includes('failed') && l.line.includes(`@${rec.winners[0]!.login}`)),
    ).toBe(true);
    expect(h.chat.matching(/ran into a problem/)).toHaveLength(1);

    h.shop.linkPlan = [];
    expect(await h.svc.retryLinks()).toMatchObject({ ok: true });
    const stored = (await h.repo.getDraw(rec.id))!;
    expect(stored.status).toBe('finished');
    expect(stored.winners[0]!.login).toBe(rec.winners[0]!.login);
    expect(stored.winners[0]!.redeemUrl).toContain('/gifts/');
    expect(await h.svc.retryLinks()).toMatchObject({ ok: false });
  });

  it('a link giveaway interrupted while creating links is not re-created blindly after a restart', async () => {
    const h = await make();
    h.shop.linkPlan = [{ error: 'unavailable', applied: true }];
    await h.svc.startLinkGiveaway(mod(), 'mug', 1, 30);
    h.svc.enter(chatMsg('a'));
    h.clock.advance(30_000);
    await waitFor(() => h.shop.count('createGiveawayLinks') === 1 && h.clock.pending() > 0, 'backoff');
    await h.svc.stop();
    await h.repo.close();
    make.release(h);
    const again = await make({ dir: h.dir, clock: h.clock, shop: h.shop });
    await again.svc.whenIdle();
    expect(again.shop.count('createGiveawayLinks')).toBe(1);
    const [rec] = await again.repo.listDraws();
    expect(rec!.status).toBe('failed');
    expect(rec!.failure!.reason).toMatch(/dashboard/);
    expect(again.operator.lines.some((l) => l.line.includes('failed'))).toBe(true);
  });
});
