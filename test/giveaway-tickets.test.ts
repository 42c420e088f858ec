/**
 * Entries from Twitch beyond chat through the engine's door (`enterByTickets`), over fakes and a
 * real file repository: a redemption enters with its tickets or adds them to a `!enter` entry, up
 * to the per-viewer cap; refusals say why (no draw open, not eligible, cap reached); a ref is
 * applied once; bits add tickets per N bits, capped, kept toward the next ticket; the grants
 * survive a restart (ticket journal) with the same weights, and a power cut at any point after
 * `enterByTickets` resolved (every disk state the simulated disk allows); and the weights are in the frozen
 * list, recorded as the draw's rules, and replayed by verify (a draw whose weights were not the
 * tickets would fail it). Role rules for a viewer the draw does not know from chat: the roles
 * Twitch's API told (req.roles) decide, and are kept through the close and a restart; a rule whose
 * role is unknown refuses (roles-unknown, with the rule), never letting in whom it might exclude.
 */
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/shared/clock.js';
import { verifyDraw } from '../src/fairness/verify.js';
import type { DrawRecord } from '../src/giveaway/model.js';
import type { TicketRequest } from '../src/giveaway/tickets.js';
import {
  chatMsg,
  harness,
  makeTempDir,
  removeDir,
  START_MS,
  type Harness,
  type HarnessOptions,
} from './support/giveaway-fakes.js';
import { emptyImage, PowerCutFs } from './support/power-cut-fs.js';

const dirs: string[] = [];
const live: Harness[] = [];
afterEach(async () => {
  for (const h of live.splice(0)) await h.shutdown();
  for (const d of dirs.splice(0)) await removeDir(d);
});

const TICKETS = {
  tickets: { channelPoints: { ticketsPerRedemption: 2, maxPerViewer: 2 }, bits: { bitsPerTicket: 100, maxTickets: 3 } },
};

async function run(o: HarnessOptions = {}): Promise<Harness> {
  const h = await harness({ settings: TICKETS, ...o });
  live.push(h);
  return h;
}

let seq = 0;
function redemption(login: string, o: Partial<TicketRequest> = {}): TicketRequest {
  return {
    source: 'points',
    ref: `r-${++seq}`,
    userId: `u-${login}`,
    login,
    displayName: login.toUpperCase(),
    at: START_MS,
    ...o,
  };
}
function bits(login: string, amount: number, o: Partial<TicketRequest> = {}): TicketRequest {
  return {
    source: 'bits',
    ref: `b-${++seq}`,
    userId: `u-${login}`,
    login,
    displayName: login,
    bits: amount,
    at: START_MS,
    ...o,
  };
}

describe('entries from channel points and bits', () => {
  it('a redemption enters with its tickets, adds to a !enter entry, and stops at the cap', async () => {
    const h = await run();
    const draw = h.shop.addDraw({ gifts: 1, durationSeconds: 60 });
    await h.svc.handleGiftDrawStarted(draw);
    expect(await h.svc.enterByTickets(redemption('alice'))).toEqual({
      result: 'entered',
      draws: [draw.id],
      tickets: [2],
    });
    h.svc.enter(chatMsg('bob'));
    expect(await h.svc.enterByTickets(redemption('bob'))).toMatchObject({ result: 'entered', tickets: [2] });
    expect(await h.svc.enterByTickets(redemption('alice'))).toMatchObject({ result: 'entered' });
    expect(await h.svc.enterByTickets(redemption('alice'))).toEqual({ result: 'refused', reason: 'cap-reached' });
    const view = h.svc.drawViews()[0]!;
    expect(view.entrants.size).toBe(2);
    expect(view.entrants.get('u-alice')!.weight).toBe(4);
    expect(view.entrants.get('u-bob')!.weight).toBe(3); // 1 for !enter + 2
    expect(h.svc.enter(chatMsg('alice'))).toBe(0); // already in: chat adds nothing
  });

  it('refuses with the reason: no draw open, not eligible; a ref twice is already applied', async () => {
    const h = await run({ settings: { ...TICKETS, eligibility: { excludeLogins: ['cheater'] } } });
    expect(await h.svc.enterByTickets(redemption('alice'))).toEqual({ result: 'refused', reason: 'no-draw-open' });
    const draw = h.shop.addDraw({ gifts: 1, durationSeconds: 60 });
    await h.svc.handleGiftDrawStarted(draw);
    expect(await h.svc.enterByTickets(redemption('cheater'))).toEqual({
      result: 'refused',
      reason: 'not-eligible',
      exclusion: 'excluded-login',
    });
    expect(await h.svc.enterByTickets(redemption('streamer', { userId: '1000' }))).toEqual({
      result: 'refused',
      reason: 'not-eligible',
      exclusion: 'broadcaster',
    });
    const r = redemption('alice');
    expect(await h.svc.enterByTickets(r)).toMatchObject({ result: 'entered' });
    expect(await h.svc.enterByTickets(r)).toEqual({ result: 'already', draws: [draw.id] });
    expect(h.svc.drawViews()[0]!.entrants.get('u-alice')!.weight).toBe(2);
  });

  it('bits: one ticket per 100 bits, the rest kept toward the next, at most 3', async () => {
    const h = await run();
    const draw = h.shop.addDraw({ gifts: 1, durationSeconds: 60 });
    await h.svc.handleGiftDrawStarted(draw);
    expect(await h.svc.enterByTickets(bits('carol', 50))).toEqual({ result: 'refused', reason: 'no-ticket-yet' });
    expect(h.svc.drawViews()[0]!.entrants.get('u-carol')).toBeUndefined();
    expect(await h.svc.enterByTickets(bits('carol', 60))).toMatchObject({ result: 'entered', tickets: [1] });
    expect(await h.svc.enterByTickets(bits('carol', 1000))).toMatchObject({ result: 'entered', tickets: [2] });
    expect(await h.svc.enterByTickets(bits('carol', 1000))).toEqual({ result: 'refused', reason: 'no-ticket-yet' });
    expect(h.svc.drawViews()[0]!.entrants.get('u-carol')!.weight).toBe(3);
  });

  it('grants survive a restart with their weights, and the frozen list, rules and verify carry them', async () => {
    const dir = await makeTempDir();
    dirs.push(dir);
    const clock = new ManualClock(START_MS);
    const first = await harness({ dir, clock, settings: TICKETS });
    const draw = first.shop.addDraw({ gifts: 1, durationSeconds: 60 });
    await first.svc.handleGiftDrawStarted(draw);
    first.svc.enter(chatMsg('bob'));
    const r = redemption('alice');
    await first.svc.enterByTickets(r);
    await first.svc.enterByTickets(redemption('bob'));
    await first.svc.enterByTickets(bits('carol', 250));
    await first.shutdown();

    const h = await harness({ dir, clock, shop: first.shop, settings: TICKETS });
    live.push(h);
    const view = h.svc.drawViews()[0]!;
    expect(view.entrants.size).toBe(3);
    expect(['u-bob', 'u-alice', 'u-carol'].map((id) => view.entrants.get(id)!.weight)).toEqual([3, 2, 2]);
    expect(await h.svc.enterByTickets(r)).toEqual({ result: 'already', draws: [draw.id] });
    expect(await h.svc.enterByTickets(redemption('bob'))).toMatchObject({ result: 'entered' }); // the cap counts the first run's
    expect(await h.svc.enterByTickets(redemption('bob'))).toEqual({ result: 'refused', reason: 'cap-reached' });
    const done = once(h.svc.events, 'draw-finished');
    h.clock.advance(60_000);
    await done;
    await h.svc.whenIdle();
    const rec = (await h.repo.getDraw(draw.id)) as DrawRecord;
    expect(Object.fromEntries(rec.frozenEntrants!.map((e) => [e.login, e.weight]))).toEqual({
      bob: 5,
      alice: 2,
      carol: 2,
    });
    expect(rec.rules).toMatchObject({
      tickets: {
        channelPoints: { ticketsPerRedemption: 2, maxPerViewer: 2 },
        bits: { bitsPerTicket: 100, maxTickets: 3 },
      },
      ticketsGranted: { channelPoints: 6, bits: 2 },
    });
    expect(verifyDraw(rec)).toMatchObject({ ok: true });
    // The weights are what the picks ran on: the same list with chat weights only does not verify.
    const flattened = { ...rec, frozenEntrants: rec.frozenEntrants!.map((e) => ({ ...e, weight: 1 })) };
    expect(verifyDraw(flattened)).toMatchObject({ ok: false, reason: 'entrant list digest mismatch' });
  });

  it('a grant is on the disk once enterByTickets resolved: every state a power cut can leave restores it', async () => {
    const DIR = '/data';
    const fs = new PowerCutFs(emptyImage([DIR]));
    const clock = new ManualClock(START_MS);
    const h = await harness({ dir: DIR, fileSystem: fs, clock, settings: TICKETS });
    const draw = h.shop.addDraw({ gifts: 1, durationSeconds: 60 });
    await h.svc.handleGiftDrawStarted(draw);
    expect(await h.svc.enterByTickets(redemption('alice'))).toMatchObject({ result: 'entered' });
    const cut = fs.ops.length; // what the bot would now tell Twitch (FULFILLED) rests on these operations
    const images = fs.imagesAfter(cut);
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) {
      const after = await harness({
        dir: DIR,
        fileSystem: new PowerCutFs(image),
        clock,
        shop: h.shop,
        settings: TICKETS,
      });
      expect(after.svc.drawViews()[0]?.entrants.get('u-alice')?.weight, '[the grant survives]').toBe(2);
      await after.shutdown();
    }
    await h.shutdown();
  });

  describe('role rules for a viewer who never typed in chat', () => {
    it('subscribersOnly: unknown is refused with the rule; a subscriber Twitch confirmed enters and stays eligible at close; a known non-subscriber is not eligible', async () => {
      const h = await run({ settings: { ...TICKETS, eligibility: { subscribersOnly: true } } });
      const draw = h.shop.addDraw({ gifts: 1, durationSeconds: 60 });
      await h.svc.handleGiftDrawStarted(draw);
      expect(await h.svc.enterByTickets(redemption('quiet'))).toEqual({
        result: 'refused',
        reason: 'roles-unknown',
        rule: 'subscribersOnly',
      });
      expect(await h.svc.enterByTickets(redemption('nosub', { roles: { subscriber: false } }))).toEqual({
        result: 'refused',
        reason: 'not-eligible',
        exclusion: 'not-subscriber',
      });
      expect(await h.svc.enterByTickets(redemption('sub', { roles: { subscriber: true } }))).toMatchObject({
        result: 'entered',
        tickets: [2],
      });
      // A viewer known from chat: their chat roles decide, whatever the API said (or did not).
      h.svc.enter(chatMsg('chatsub', { roles: { subscriber: true, subMonths: 3 } }));
      expect(await h.svc.enterByTickets(redemption('chatsub'))).toMatchObject({ result: 'entered' });
      expect(h.svc.drawViews()[0]!.entrants.get('u-sub')!.roles).toMatchObject({ subscriber: true, moderator: false });
      const done = once(h.svc.events, 'draw-finished');
      h.clock.advance(60_000);
      await done;
      await h.svc.whenIdle();
      const rec = (await h.repo.getDraw(draw.id)) as DrawRecord;
      // Both are in the frozen list; the rule excluded nobody at close.
      expect(rec.frozenEntrants!.map((e) => e.login).sort()).toEqual(['chatsub', 'sub']);
      expect(rec.rules).not.toHaveProperty('excluded.not-subscriber');
    });

    it('excludeModerators: a moderator Twitch confirmed is refused, unknown is refused with the rule; minSubMonths is never known outside chat', async () => {
      const h = await run({ settings: { ...TICKETS, eligibility: { excludeModerators: true, minSubMonths: 6 } } });
      const draw = h.shop.addDraw({ gifts: 1, durationSeconds: 60 });
      await h.svc.handleGiftDrawStarted(draw);
      expect(
        await h.svc.enterByTickets(redemption('mod', { roles: { subscriber: true, moderator: true } })),
      ).toMatchObject({ result: 'refused', reason: 'roles-unknown', rule: 'minSubMonths' });
      expect(
        await h.svc.enterByTickets(redemption('nosubmod', { roles: { subscriber: false, moderator: true } })),
      ).toEqual({ result: 'refused', reason: 'not-eligible', exclusion: 'moderator' });
      expect(await h.svc.enterByTickets(redemption('nosub', { roles: { subscriber: false } }))).toEqual({
        result: 'refused',
        reason: 'roles-unknown',
        rule: 'excludeModerators',
      });
      // In chat with 7 months: the tickets are added to the chat entry.
      h.svc.enter(chatMsg('loyal', { roles: { subscriber: true, subMonths: 7 } }));
      expect(await h.svc.enterByTickets(redemption('loyal'))).toMatchObject({ result: 'entered' });
    });

    it('excludeModerators alone: a viewer whose moderator status is unknown is refused, not let in as a plain viewer', async () => {
      const h = await run({ settings: { ...TICKETS, eligibility: { excludeModerators: true } } });
      const draw = h.shop.addDraw({ gifts: 1, durationSeconds: 60 });
      await h.svc.handleGiftDrawStarted(draw);
      expect(await h.svc.enterByTickets(redemption('sneaky_mod'))).toEqual({
        result: 'refused',
        reason: 'roles-unknown',
        rule: 'excludeModerators',
      });
      expect(await h.svc.enterByTickets(redemption('viewer', { roles: { moderator: false } }))).toMatchObject({
        result: 'entered',
      });
      expect(h.svc.drawViews()[0]!.entrants.size).toBe(1);
    });

    it('the roles a grant entered with survive a restart (the ticket journal), so the close still sees a subscriber', async () => {
      const dir = await makeTempDir();
      dirs.push(dir);
      const clock = new ManualClock(START_MS);
      const settings = { ...TICKETS, eligibility: { subscribersOnly: true } };
      const first = await harness({ dir, clock, settings });
      const draw = first.shop.addDraw({ gifts: 1, durationSeconds: 60 });
      await first.svc.handleGiftDrawStarted(draw);
      expect(await first.svc.enterByTickets(redemption('sub', { roles: { subscriber: true } }))).toMatchObject({
        result: 'entered',
      });
      await first.shutdown();
      const h = await harness({ dir, clock, shop: first.shop, settings });
      live.push(h);
      expect(h.svc.drawViews()[0]!.entrants.get('u-sub')!.roles).toMatchObject({ subscriber: true });
      const done = once(h.svc.events, 'draw-finished');
      h.clock.advance(60_000);
      await done;
      await h.svc.whenIdle();
      const rec = (await h.repo.getDraw(draw.id)) as DrawRecord;
      expect(rec.winners.map((w) => w.login)).toEqual(['sub']);
    });
  });
});
