/**
 * Link giveaways after the start, end to end (issue 5): `!giveaway cancel` (no links created),
 * `!giveaway reroll <login>` (replacement among the remaining entrants, recorded, announced,
 * still verifiable), link creation failing at Fourthwall (retried, reported, winners kept,
 * `!giveaway retry` delivers), and links in chat only when `links.publicInChat` is set.
 * Real bot in-process against the chat server and the Fourthwall sandbox.
 */
import { describe, expect, it } from 'vitest';
import { SEED_PRODUCT_IDS } from '../src/sandbox/fourthwall/index.js';
import type { DrawRecord } from '../src/giveaway/model.js';
import { rm } from 'node:fs/promises';
import { drawSettled, nextDrawOpened, startLinkStack, tempDir, type LinkStack } from './support/e2e-link-stack.js';
import { perTest } from './support/per-test.js';

const stack = perTest(startLinkStack, (s) => s.close(true));

const ENTRANTS = ['ana', 'ben', 'cai', 'dee', 'eve', 'fay'];

/** Starts a mug giveaway for `winners`, lets ENTRANTS enter; returns the open record. */
async function openMugGiveaway(s: LinkStack, winners: number): Promise<DrawRecord> {
  const opened = nextDrawOpened(s);
  const from = s.mark();
  s.say(s.mod, `!giveaway start giftdrop-mug ${winners} 60`);
  const rec = await opened;
  await s.nextBotLine(/Giveaway: \d+x Giftdrop Mug/, from);
  s.enter(ENTRANTS);
  return rec;
}

async function endAndSettle(s: LinkStack, id: string) {
  const settled = drawSettled(s, id);
  s.say(s.mod, '!giveaway end');
  return settled;
}

describe('cancel', () => {
  it('cancels the open giveaway: announced, recorded, and no link is ever created', async () => {
    const s = await stack();
    const open = await openMugGiveaway(s, 2);
    const settled = drawSettled(s, open.id);
    const from = s.mark();
    s.say(s.chat.broadcaster, '!giveaway cancel');
    const { event } = await settled;
    expect(event).toBe('draw-cancelled');
    await s.nextBotLine(/^The Giftdrop Mug giveaway was cancelled\.$/, from);

    // Nothing is open any more: end and a second cancel say so.
    s.say(s.mod, '!giveaway end');
    await s.nextBotLine(/^No giveaway is open\.$/, from);
    s.say(s.mod, '!giveaway cancel');
    await s.nextBotLine(/^No link giveaway is open\.$/, from);
    await s.idle();

    expect(s.requests('createGiveawayLinks')).toHaveLength(0);
    expect(s.fw.state.packages.size).toBe(0);
    expect(s.operator.filter((l) => l.includes('/gifts/'))).toEqual([]);
    const row = (await s.history()).find((r) => r.id === open.id)!;
    expect(row.status).toBe('cancelled');
    expect(row.winners).toEqual([]);
    expect(s.botLines(from).some((l) => l.includes('congratulations'))).toBe(false);
  });
});

describe('reroll', () => {
  it('replaces one winner by a new pick among the remaining entrants; recorded, announced, verifiable', async () => {
    const s = await stack();
    const open = await openMugGiveaway(s, 2);
    const { record } = await endAndSettle(s, open.id);
    expect(record.status).toBe('finished');
    const [first, second] = record.winners;
    const linkOfFirst = first!.redeemUrl!;
    expect(linkOfFirst).toMatch(/\/gifts\//);
    await s.nextBotLine(/congratulations/);

    const from = s.mark();
    const operatorBefore = s.operator.length;
    const rerolled = new Promise<DrawRecord>((resolve) => s.bot.engine.events.once('rerolled', (r) => resolve(r)));
    s.say(s.mod, `!giveaway reroll @${first!.login.toUpperCase()}`);
    const after = await rerolled;
    const replacement = after.winners.find((w) => w.userId !== second!.userId)!;

    // A remaining entrant: not the replaced winner, not the other winner.
    expect(ENTRANTS).toContain(replacement.login);
    expect(replacement.login).not.toBe(first!.login);
    expect(replacement.login).not.toBe(second!.login);
    expect(after.winners.map((w) => w.login)).toEqual(
      record.winners.map((w) => (w.login === first!.login ? replacement.login : w.login)),
    );
    // The replaced winner's link had gone out (console, dashboard): it stays theirs, and the
    // replacement gets a new one (a second package of one link).
    expect(replacement.redeemUrl).toMatch(/\/gifts\//);
    expect(replacement.redeemUrl).not.toBe(linkOfFirst);
    expect(s.requests('createGiveawayLinks')).toHaveLength(2);

    const line = await s.nextBotLine(/is replaced by/, from);
    expect(line).toBe(
      `🔁 Giftdrop Mug: @${first!.login} is replaced by @${replacement.login} (rerolled by a moderator).`,
    );
    expect(line).not.toContain('/gifts/');
    await s.chat.waitFor(() => s.operator.length > operatorBefore, 5000, 'the operator line for the replacement');
    expect(
      s.operator
        .slice(operatorBefore)
        .some((l) => l.includes(`@${replacement.login}`) && l.includes(replacement.redeemUrl!)),
    ).toBe(true);

    // Recorded in the history, and the draw still verifies.
    await s.idle();
    const stored = await s.record(open.id);
    expect(stored.rerolls).toHaveLength(1);
    expect(stored.rerolls![0]).toMatchObject({
      replacedLogin: first!.login,
      replacedUserId: first!.userId,
      newUserId: replacement.userId,
      reason: 'command',
      byUserId: s.mod.userId,
      kept: { giftId: first!.giftId, redeemUrl: linkOfFirst },
    });
    const row = (await s.history()).find((r) => r.id === open.id)!;
    expect(row.winners.map((w) => w.login).sort()).toEqual([replacement.login, second!.login].sort());
    const v = await s.verify(open.id);
    expect(v.err).toBe('');
    expect(v.code).toBe(0);

    // The replaced winner cannot be rerolled again (one reroll per winner; never an older win of theirs).
    const from2 = s.mark();
    s.say(s.mod, `!giveaway reroll ${first!.login}`);
    await s.nextBotLine(
      new RegExp(`${first!.login} was already replaced in that giveaway; a winner is rerolled once\\.`),
      from2,
    );
    // Somebody who never won cannot be rerolled.
    const from3 = s.mark();
    s.say(s.mod, '!giveaway reroll never_won');
    await s.nextBotLine(/never_won is not a winner of a recent giveaway\./, from3);
  });

  it('a viewer cannot reroll', async () => {
    const s = await stack();
    const open = await openMugGiveaway(s, 1);
    const { record } = await endAndSettle(s, open.id);
    const winner = record.winners[0]!;
    const from = s.mark();
    s.say(s.viewer('ana'), `!giveaway reroll ${winner.login}`);
    await s.nextBotLine(/No giveaway is open right now\./, from);
    await s.idle();
    expect((await s.record(open.id)).rerolls ?? []).toEqual([]);
    expect(s.botLines(from).some((l) => l.includes('is replaced by'))).toBe(false);
  });
});

describe('link creation failing', () => {
  it('is retried, then reported with the winners kept; !giveaway retry delivers later', async () => {
    const s = await stack();
    // Rate-limited until the client gives up (4 attempts), then refused: the engine retries the
    // unavailable shop once, then gets a definite refusal and reports it.
    s.fw.control.faults.rateLimit('createGiveawayLinks', 4, 0);
    s.fw.control.faults.fail('createGiveawayLinks', 1, 422);
    const open = await openMugGiveaway(s, 2);
    const from = s.mark();
    const { event, record } = await endAndSettle(s, open.id);
    expect(event).toBe('draw-failed');
    const winners = record.winners.map((w) => w.login);
    expect(winners).toHaveLength(2);
    expect(record.winners.every((w) => !w.redeemUrl)).toBe(true);

    const calls = s.requests('createGiveawayLinks');
    expect(calls.map((r) => r.status)).toEqual([429, 429, 429, 429, 422]);
    expect(s.fw.state.packages.size).toBe(0);
    const failed = await s.nextBotLine(/ran into a problem/, from);
    expect(failed).toContain('Giftdrop Mug');
    expect(
      s.operator.some((l) => l.includes(open.id) && l.includes('failed') && winners.every((w) => l.includes(`@${w}`))),
    ).toBe(true);
    await s.idle();
    const failedRow = (await s.history()).find((r) => r.id === open.id)!;
    expect(failedRow.status).toBe('failed');
    expect(failedRow.winners.map((w) => w.login)).toEqual(winners);

    // Retry: one more call, the same winners get their links, announced without links in chat.
    const from2 = s.mark();
    const settled = drawSettled(s, open.id);
    s.say(s.mod, '!giveaway retry');
    expect((await settled).event).toBe('draw-finished');
    await s.nextBotLine(/^Links delivered\.$/, from2);
    const line = await s.nextBotLine(/congratulations/, from2);
    for (const w of winners) expect(line).toContain(`@${w}`);
    expect(s.requests('createGiveawayLinks').map((r) => r.status)).toEqual([429, 429, 429, 429, 422, 200]);
    const pkg = [...s.fw.state.packages.values()];
    expect(pkg).toHaveLength(1);
    expect(pkg[0]!.giveawayLinks).toHaveLength(2);
    await s.idle();
    const row = (await s.history()).find((r) => r.id === open.id)!;
    expect(row.status).toBe('finished');
    expect(row.source.packageId).toBe(pkg[0]!.packageId);
    expect(row.winners.map((w) => w.login)).toEqual(winners);
    for (const w of row.winners) {
      expect(pkg[0]!.giveawayLinks.map((l) => l.link)).toContain(w.redeemUrl);
      expect(s.operator.some((l) => l.includes(w.redeemUrl!))).toBe(true);
    }
    const transcript = s.chat.transcript.map((e) => e.text).join('\n');
    expect(transcript).not.toContain('/gifts/');
    expect(s.log.text()).not.toContain('/gifts/');
    expect((await s.verify(open.id)).code).toBe(0);

    // Nothing left to retry.
    const from3 = s.mark();
    s.say(s.mod, '!giveaway retry');
    await s.nextBotLine(/^No giveaway is waiting for links\.$/, from3);
  });
});

describe('reroll while the links are pending', () => {
  it('the replacement, not the replaced winner, gets a link when !giveaway retry delivers', async () => {
    const s = await stack();
    s.fw.control.faults.fail('createGiveawayLinks', 1, 422);
    const open = await openMugGiveaway(s, 2);
    const { event, record } = await endAndSettle(s, open.id);
    expect(event).toBe('draw-failed');
    const [gone, kept] = record.winners;
    const from = s.mark();
    s.say(s.mod, `!giveaway reroll ${gone!.login}`);
    const line = await s.nextBotLine(/is replaced by/, from);
    const newcomer = /is replaced by @(\w+)/.exec(line)![1]!;
    expect([gone!.login, kept!.login]).not.toContain(newcomer);
    await s.idle();

    const settled = drawSettled(s, open.id);
    s.say(s.mod, '!giveaway retry');
    const done = await settled;
    expect(done.event).toBe('draw-finished');
    expect(done.record.winners.map((w) => w.login).sort()).toEqual([kept!.login, newcomer].sort());
    expect(done.record.winners.every((w) => w.redeemUrl)).toBe(true);
    expect(s.requests('createGiveawayLinks').map((r) => r.status)).toEqual([422, 200]);
    expect([...s.fw.state.packages.values()][0]!.giveawayLinks).toHaveLength(2);
    expect(s.operator.some((l) => l.includes(`@${gone!.login}`) && l.includes('/gifts/'))).toBe(false);
    expect(s.operator.some((l) => l.includes(`@${newcomer}`) && l.includes('/gifts/'))).toBe(true);
    await s.idle();
    expect((await s.verify(open.id)).code).toBe(0);
  });
});

describe('links.publicInChat', () => {
  it("when set, the winners line carries each winner's link (and a reroll posts the replacement's)", async () => {
    const s = await stack({ settings: { links: { publicInChat: true } } });
    const open = await openMugGiveaway(s, 2);
    const from = s.mark();
    const { record } = await endAndSettle(s, open.id);
    const line = await s.nextBotLine(/congratulations/, from);
    expect(line).toContain('Redeem here:');
    for (const w of record.winners) expect(line).toContain(`@${w.login}: ${w.redeemUrl}`);
    expect(record.winners.every((w) => w.redeemUrl?.includes(`/gifts/`))).toBe(true);

    const from2 = s.mark();
    const first = record.winners[0]!;
    s.say(s.mod, `!giveaway reroll ${first.login}`);
    const replaced = await s.nextBotLine(/is replaced by/, from2);
    const newLogin = /is replaced by @(\w+)/.exec(replaced)![1];
    const publicLink = await s.nextBotLine(/Redeem here:/, from2);
    // the replacement's own new link (the first winner's stays theirs: it was public already)
    await s.idle();
    const newLink = (await s.record(open.id)).winners.find((w) => w.login === newLogin)!.redeemUrl!;
    expect(newLink).not.toBe(first.redeemUrl);
    expect(publicLink).toBe(`Redeem here: @${newLogin}: ${newLink}`);

    // The log still never has them.
    for (const w of record.winners) expect(s.log.text()).not.toContain(w.redeemUrl!);
    expect(s.log.text()).not.toContain(newLink);
  });
});

describe('a second start while one runs', () => {
  it('is refused and names the running giveaway', async () => {
    const s = await stack();
    await openMugGiveaway(s, 1);
    const from = s.mark();
    s.say(s.chat.broadcaster, `!giveaway start ${SEED_PRODUCT_IDS.hoodie}`);
    await s.nextBotLine(/^A link giveaway is already running \(Giftdrop Mug\)\.$/, from);
    expect(s.bot.engine.openDrawCount()).toBe(1);
  });
});

describe('a bot restart while a link giveaway is open', () => {
  it('keeps the entries and the giveaway: the next run continues it and delivers once', async () => {
    const dataDir = await tempDir();
    try {
      const first = await startLinkStack({ dataDir });
      let id: string;
      try {
        const open = await openMugGiveaway(first, 2);
        id = open.id;
        // Entries handled (the mod's status reply comes after them), then a clean stop.
        const from = first.mark();
        first.say(first.mod, '!giveaway');
        await first.nextBotLine(/Giftdrop Mug \(2x\): \d+s left, 6 entered/, from);
      } finally {
        await first.close();
      }
      const s = await startLinkStack({ dataDir });
      try {
        expect(s.bot.engine.openDrawCount()).toBe(1);
        const from = s.mark();
        s.say(s.mod, '!giveaway');
        await s.nextBotLine(/Giftdrop Mug \(2x\): \d+s left, 6 entered/, from);
        // A late entrant joins the resumed giveaway; an earlier one typing again changes nothing.
        s.enter(['gus', 'ana']);
        const { event, record } = await endAndSettle(s, id);
        expect(event).toBe('draw-finished');
        expect(record.entrants).toBe(7);
        // Event payloads carry counts and digests, not entrant lists: the frozen list is in storage.
        expect(record.frozenEntrants).toBeUndefined();
        const stored = (await s.bot.repo.getDraw(id))!;
        expect(stored.fairness.entrantsDigest).toBe(record.fairness.entrantsDigest);
        expect(stored.frozenEntrants!.map((e) => e.login).sort()).toEqual([...ENTRANTS, 'gus'].sort());
        expect(s.requests('createGiveawayLinks')).toHaveLength(1);
        await s.idle();
        expect((await s.verify(id)).code).toBe(0);
      } finally {
        await s.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
