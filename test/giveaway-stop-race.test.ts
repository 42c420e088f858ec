/**
 * Stopping the engine while a draw's winners are being picked: nothing may be scheduled or said
 * after the stop (a leftover timer keeps the process alive and acts on a stopped bot), and the
 * picked state is journaled so the next start resumes it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chatMsg, harness, removeDir, type Harness } from './support/giveaway-fakes.js';

const made: Harness[] = [];
afterEach(async () => {
  for (const h of made.splice(0)) {
    await h.repo.close();
    await removeDir(h.dir);
  }
});

describe('stop while picking', () => {
  it('a claim window picked during a stop sets no timer and says nothing; the next start resumes it', async () => {
    const settings = { claim: { seconds: 30, maxRerolls: 1 }, eligibility: { winnerCooldownHours: 1 } };
    const h = await harness({ settings });
    made.push(h);
    h.shop.products = [{ id: '3f1c0a52-3333-4a6b-9d1e-000000000003', name: 'Mug', slug: 'mug' }];
    const start = await h.svc.startLinkGiveaway(chatMsg('modjo', { roles: { moderator: true } }), 'mug', 1, 30);
    const id = (start as { id: string }).id;
    for (const l of ['a', 'b', 'c']) h.svc.enter(chatMsg(l));
    expect(h.svc.endNow()).toBe(1);
    const linesBefore = h.chat.lines.length;
    await h.svc.stop();
    expect(h.clock.pending()).toBe(0);
    expect(h.chat.lines.slice(linesBefore).map((l) => l.text)).toEqual([]);

    const rec = (await h.repo.getDraw(id))!;
    expect(rec.status).toBe('drawing');
    expect(rec.claim).toBeDefined();
    await h.repo.close();

    const h2 = await harness({ settings, dir: h.dir, clock: h.clock, shop: h.shop });
    made.push(h2);
    expect(h2.svc.openDrawCount()).toBe(1);
    expect(h2.clock.pending()).toBeGreaterThan(0);
    await h2.svc.stop();
  });
});
