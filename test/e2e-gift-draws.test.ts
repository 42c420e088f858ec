/**
 * Gift draws end to end through both local servers: the Fourthwall sandbox sells gifts and sends
 * signed webhooks over HTTP to the real bot (in-process stack, real sockets), viewers type !enter
 * on the local Twitch chat server, the bot picks, finishes the draw at the sandbox and announces.
 * Each case checks chat, the operator console, the sandbox's request log and draw state, and the
 * bot's history.
 */
import { describe, it, type ExpectStatic } from 'vitest';
import type { DrawRecord } from '../src/giveaway/model.js';
import {
  enterAll,
  finishCalls,
  logins,
  sandboxDraw,
  setShopLive,
  startInProcessStack,
  waitUntil,
  type InProcessStack,
} from './support/e2e-stack.js';

const GIFTS = 5;

async function withStack<T>(fn: (s: InProcessStack) => Promise<T>): Promise<T> {
  const s = await startInProcessStack({ fourthwall: { drawDurationSeconds: 2 }, logLevel: 'debug' }); // per-request lines are at debug
  try {
    setShopLive({ fourthwall: s.fourthwall, chat: s.chatServer });
    return await fn(s);
  } finally {
    await s.close();
  }
}

/** Buys `quantity` gifts and waits until the bot announced the draw in chat. */
async function buyGifts(s: InProcessStack, quantity: number, username = 'generous_fan'): Promise<string> {
  const { draw } = s.fourthwall.control.simulateGiftPurchase({ quantity, username });
  const drawId = draw['id'] as string;
  await s.chatServer.waitFor(() => openedLines(s, username).length > 0, 5000, `draw ${drawId} announced`);
  return drawId;
}

function openedLines(s: InProcessStack, gifter: string): string[] {
  return s.chatServer.botMessages().filter((m) => m.startsWith(`🎁 ${gifter} gifted`));
}

/** The line saying a draw short of winners (none included) is handed back to Fourthwall. */
function handedBackLines(s: InProcessStack): string[] {
  return s.chatServer
    .botMessages()
    .filter((m) => /eligible entrants? for \d+ gifts, and Fourthwall needs one winner per gift/.test(m));
}

/** Fourthwall's REDO draw of `gifter`'s gifts, announced as a redraw. */
function redrawLines(s: InProcessStack, gifter: string): string[] {
  return s.chatServer.botMessages().filter((m) => m.startsWith(`🔁 ${gifter}'s `) && m.includes(' is drawn again!'));
}

function winnerLines(s: InProcessStack): string[] {
  return s.chatServer.botMessages().filter((m) => m.includes('congratulations'));
}

/** Waits until the bot's journal of `drawId` holds `n` entrants (so they were accepted). */
async function entrantsAccepted(s: InProcessStack, drawId: string, n: number): Promise<void> {
  await waitUntil(
    async () => ((await s.bot.repo.openDraws()).find((d) => d.record.id === drawId)?.entrants.length ?? -1) === n,
    5000,
    `${n} entrants in ${drawId}`,
  );
}

async function settled(s: InProcessStack, drawId: string): Promise<DrawRecord> {
  let rec: DrawRecord | undefined;
  await waitUntil(
    async () => {
      rec = await s.bot.repo.getDraw(drawId);
      return rec?.status === 'finished' || rec?.status === 'failed';
    },
    15_000,
    `draw ${drawId} settled`,
    20,
  );
  await s.bot.engine.whenIdle();
  const r = rec!;
  // the chat line goes out through the outbox: wait until the channel has it
  if (r.status === 'finished' && r.winners.length > 0) {
    await s.chatServer.waitFor(
      () => winnerLines(s).some((l) => r.winners.every((w) => l.includes(`@${w.login}`))),
      5000,
      `winners of ${drawId} in chat`,
    );
  } else if (r.status === 'failed' && r.failure?.reason.includes('eligible entrant')) {
    await s.chatServer.waitFor(() => handedBackLines(s).length > 0, 5000, 'the handed-back line');
  }
  return r;
}

/** Waits until Fourthwall's GIFT_DRAW_ENDED for `drawId` was delivered and the bot handled it. */
async function endedHandled(s: InProcessStack, drawId: string): Promise<void> {
  await s.fourthwall.control.waitForDelivery(
    (d) => d.type === 'GIFT_DRAW_ENDED' && d.delivered && d.body.includes(drawId),
    5000,
  );
  await s.bot.http.idle();
  await s.bot.engine.whenIdle();
}

function checkWinnersAgainstSandbox(expect: ExpectStatic, s: InProcessStack, rec: DrawRecord, drawId: string): void {
  const fw = sandboxDraw(s.fourthwall, drawId);
  expect(fw.status).toBe('FINISHED');
  expect(fw.winners.map((w) => w.userId).sort()).toEqual(rec.winners.map((w) => w.userId).sort());
  for (const w of rec.winners) {
    const theirs = fw.winners.find((x) => x.userId === w.userId)!;
    expect(w.giftId).toBe(theirs.giftId);
    expect(w.redeemUrl).toBe(theirs.redeemUri);
    // the link went to the streamer's console, not to chat
    expect(s.operatorLines.filter((l) => l.includes(theirs.redeemUri))).toHaveLength(1);
    expect(s.chatServer.botMessages().some((m) => m.includes(theirs.redeemUri))).toBe(false);
  }
}

describe.concurrent('gift draw for 5 gifts', () => {
  for (const n of [5, 20]) {
    it(`${n} entrant(s): 5 distinct winners, finished once, announced once`, async ({ expect }) => {
      await withStack(async (s) => {
        const drawId = await buyGifts(s, GIFTS);
        const names = logins(`fan${n}_`, n);
        const viewers = enterAll(s.chatServer, names);
        // a second !enter and the broadcaster's / bot's own !enter never add an entrant
        s.chatServer.inject(viewers[0]!, '!enter');
        s.chatServer.inject(s.chatServer.broadcaster, '!enter');
        await entrantsAccepted(s, drawId, n);
        const rec = await settled(s, drawId);

        expect(rec.status).toBe('finished');
        expect(rec.entrants).toBe(n);
        expect(rec.frozenEntrants).toHaveLength(n);
        expect(rec.winners).toHaveLength(Math.min(n, GIFTS));
        expect(new Set(rec.winners.map((w) => w.userId)).size).toBe(rec.winners.length);
        const ids = new Set(viewers.map((v) => v.userId));
        for (const w of rec.winners) expect(ids.has(w.userId)).toBe(true);
        expect(rec.fairness.seed).toMatch(/^[0-9a-f]{64}$/);

        const calls = finishCalls(s.fourthwall, drawId);
        expect(calls).toHaveLength(1);
        expect(calls[0]!.status).toBe(200);
        checkWinnersAgainstSandbox(expect, s, rec, drawId);

        const announced = winnerLines(s);
        expect(announced).toHaveLength(1);
        for (const w of rec.winners) expect(announced[0]).toContain(`@${w.login}`);
        expect(openedLines(s, 'generous_fan')).toHaveLength(1);

        // Fourthwall's GIFT_DRAW_ENDED reconciles the record without a second announcement
        const chatBefore = s.chatServer.botMessages().length;
        const opBefore = s.operatorLines.length;
        await endedHandled(s, drawId);
        expect(s.chatServer.botMessages()).toHaveLength(chatBefore);
        expect(s.operatorLines).toHaveLength(opBefore);
        const after = (await s.bot.repo.getDraw(drawId))!;
        expect(after.status).toBe('finished');
        expect(after.winners.map((w) => [w.userId, w.redeemUrl])).toEqual(
          rec.winners.map((w) => [w.userId, w.redeemUrl]),
        );
        expect(finishCalls(s.fourthwall, drawId)).toHaveLength(1);
      });
    });
  }

  // 0, 1 and N-1 entrants for N gifts: one story in chat, console and history.
  for (const n of [0, 1, 4]) {
    it(`${n} eligible for 5 gifts: nothing sent (Fourthwall takes one winner per gift), failed with the reason, said in chat`, async ({
      expect,
    }) => {
      await withStack(async (s) => {
        const drawId = await buyGifts(s, GIFTS);
        enterAll(s.chatServer, logins(`few${n}_`, n));
        s.chatServer.inject(s.chatServer.broadcaster, '!enter'); // never an entrant
        await entrantsAccepted(s, drawId, n);
        const rec = await settled(s, drawId);
        expect(rec.status).toBe('failed');
        expect(rec.winners).toEqual([]);
        expect(rec.frozenEntrants).toHaveLength(n);
        const eligible = n === 0 ? 'no eligible entrant' : `only ${n} eligible ${n === 1 ? 'entrant' : 'entrants'}`;
        expect(rec.failure?.reason).toBe(
          `${eligible} for 5 gifts; Fourthwall takes one winner per gift, so no winners were sent and it reopens the draw with the same gifts after its deadline`,
        );
        // nothing was sent that the service refuses: the draw stays open at Fourthwall, which reopens it
        expect(finishCalls(s.fourthwall, drawId)).toHaveLength(0);
        expect(sandboxDraw(s.fourthwall, drawId).status).toBe('OPEN');
        const line = handedBackLines(s);
        expect(line).toHaveLength(1);
        expect(line[0]).toMatch(
          new RegExp(
            `^Giftdrop T-Shirt: ${eligible} for 5 gifts, and Fourthwall needs one winner per gift, so nobody wins this round\\.$`,
          ),
        );
        // one line after the window: no "nobody entered" beside it, no "entries closed" line
        expect(
          s.chatServer.botMessages().filter((m) => /Nobody entered|Entries closed|no winner/.test(m)),
        ).toHaveLength(0);
        expect(winnerLines(s)).toHaveLength(0);
        // the console says the same, once
        expect(s.operatorLines.filter((l) => l.includes(drawId))).toEqual([
          `Draw ${drawId} (Giftdrop T-Shirt): ${rec.failure!.reason}.`,
        ]);
        // and the draw's fairness still checks out (the picks were made and are public)
        expect(rec.fairness.seed).toMatch(/^[0-9a-f]{64}$/);
        // Fourthwall's redraw after its deadline is announced as a redraw of the same gifts
        s.fourthwall.control.expireDraw(drawId);
        await s.chatServer.waitFor(() => redrawLines(s, 'generous_fan').length === 1, 5000, 'the redraw announced');
        expect(redrawLines(s, 'generous_fan')[0]).toMatch(
          /^🔁 generous_fan's 5x Giftdrop T-Shirt is drawn again! Type !enter in the next \d+s/,
        );
        expect(openedLines(s, 'generous_fan')).toHaveLength(1);
      });
    });
  }

  it('two overlapping draws: !enter joins both, nobody wins twice in one draw, each finished and announced once', async ({
    expect,
  }) => {
    await withStack(async (s) => {
      const a = await buyGifts(s, 3, 'first_fan');
      const b = await buyGifts(s, 3, 'second_fan');
      const viewers = enterAll(s.chatServer, logins('both', 4));
      await entrantsAccepted(s, a, 4);
      await entrantsAccepted(s, b, 4);
      const [ra, rb] = await Promise.all([settled(s, a), settled(s, b)]);
      const everyone = viewers.map((v) => v.userId).sort();
      for (const [id, rec] of [
        [a, ra],
        [b, rb],
      ] as const) {
        expect(rec.status).toBe('finished');
        expect(rec.frozenEntrants!.map((e) => e.userId).sort()).toEqual(everyone);
        expect(rec.winners).toHaveLength(3);
        expect(new Set(rec.winners.map((w) => w.userId)).size).toBe(3);
        expect(finishCalls(s.fourthwall, id)).toHaveLength(1);
        checkWinnersAgainstSandbox(expect, s, rec, id);
      }
      // both draws may have picked the same winners in the same order (identical lines, the second
      // one made distinct by the outbox): wait for two lines, then check nothing more comes
      await s.chatServer.waitFor(() => winnerLines(s).length >= 2, 5000, 'both winner lines');
      await endedHandled(s, a);
      await endedHandled(s, b);
      expect(openedLines(s, 'first_fan')).toHaveLength(1);
      expect(openedLines(s, 'second_fan')).toHaveLength(1);
      expect(winnerLines(s)).toHaveLength(2);
      expect(ra.fairness.commitment).not.toBe(rb.fairness.commitment);
    });
  });

  it('a duplicated GIFT_DRAW_STARTED (same event id) opens one draw, announced once, finished once', async ({
    expect,
  }) => {
    await withStack(async (s) => {
      s.fourthwall.control.webhookFaults.duplicate({ type: 'GIFT_DRAW_STARTED' });
      const drawId = await buyGifts(s, 2);
      await s.fourthwall.control.waitForDelivery((d) => d.type === 'GIFT_DRAW_STARTED' && d.duplicate && d.done, 5000);
      const started = s.fourthwall.control.deliveries.filter((d) => d.type === 'GIFT_DRAW_STARTED');
      expect(started).toHaveLength(2);
      expect(new Set(started.map((d) => d.eventId)).size).toBe(1);
      expect(started.every((d) => d.delivered && d.statuses.at(-1) === 200)).toBe(true);
      enterAll(s.chatServer, logins('dup', 3));
      await entrantsAccepted(s, drawId, 3);
      const rec = await settled(s, drawId);
      expect(rec.winners).toHaveLength(2);
      expect(openedLines(s, 'generous_fan')).toHaveLength(1);
      expect(winnerLines(s)).toHaveLength(1);
      expect(finishCalls(s.fourthwall, drawId)).toHaveLength(1);
      expect((await s.bot.repo.listDraws()).filter((d) => d.source.drawId === drawId)).toHaveLength(1);
      expect(s.logs.lines.filter((l) => l.includes('duplicate webhook ignored'))).toHaveLength(1);
    });
  });

  it('Fourthwall refuses the winners for good: recorded as failed with the reason, streamer told in chat and console, not retried', async ({
    expect,
  }) => {
    await withStack(async (s) => {
      s.fourthwall.control.faults.fail('finishDraw', 1, 400);
      const drawId = await buyGifts(s, 2, 'refused_fan');
      enterAll(s.chatServer, logins('ref', 3));
      await entrantsAccepted(s, drawId, 3);
      const rec = await settled(s, drawId);
      expect(rec.status).toBe('failed');
      expect(rec.failure?.reason).toBe('Fourthwall refused the winners');
      expect(rec.winners).toHaveLength(2);
      expect(finishCalls(s.fourthwall, drawId).map((c) => c.status)).toEqual([400]);
      expect(sandboxDraw(s.fourthwall, drawId).status).toBe('OPEN');
      await s.chatServer.waitFor(
        () => s.chatServer.botMessages().some((m) => m.startsWith('⚠️')),
        5000,
        'failure in chat',
      );
      const warn = s.chatServer.botMessages().filter((m) => m.startsWith('⚠️'));
      expect(warn).toHaveLength(1);
      expect(warn[0]).toContain('Fourthwall refused the winners');
      expect(winnerLines(s)).toHaveLength(0);
      const op = s.operatorLines.filter((l) => l.includes(`Draw ${drawId}`) && l.includes('failed'));
      expect(op).toHaveLength(1);
      for (const w of rec.winners) expect(op[0]).toContain(`@${w.login}`);
    });
  });

  it('Fourthwall closes a draw the bot still has open: failed and reported; its REDO draw opens and runs', async ({
    expect,
  }) => {
    await withStack(async (s) => {
      const { draw } = s.fourthwall.control.simulateGiftPurchase({
        quantity: 2,
        durationSeconds: 30,
        username: 'early_close',
      });
      const first = draw['id'] as string;
      await s.chatServer.waitFor(() => openedLines(s, 'early_close').length === 1, 5000, 'draw announced');
      enterAll(s.chatServer, logins('ec', 2));
      await entrantsAccepted(s, first, 2);
      const { redo } = s.fourthwall.control.expireDraw(first);
      const redoId = redo!['id'] as string;
      const failed = await settled(s, first);
      expect(failed.status).toBe('failed');
      expect(failed.failure?.reason).toMatch(/Fourthwall closed the draw/);
      expect(s.operatorLines.some((l) => l.includes(`Draw ${first}`) && l.includes('failed'))).toBe(true);
      await s.chatServer.waitFor(() => redrawLines(s, 'early_close').length === 1, 5000, 'REDO announced');
      // entries of the closed draw do not carry over: the REDO is a new draw
      enterAll(s.chatServer, logins('ec', 3));
      await entrantsAccepted(s, redoId, 3);
      s.chatServer.inject(s.chatServer.broadcaster, '!giveaway end');
      const rec = await settled(s, redoId);
      expect(rec.status).toBe('finished');
      expect(rec.winners).toHaveLength(2);
      expect(finishCalls(s.fourthwall, first)).toHaveLength(0);
      expect(finishCalls(s.fourthwall, redoId)).toHaveLength(1);
      checkWinnersAgainstSandbox(expect, s, rec, redoId);
      expect(s.chatServer.botMessages().filter((m) => m.startsWith('⚠️'))).toHaveLength(1);
      expect(winnerLines(s)).toHaveLength(1);
    });
  });

  it('expiry + REDO with GIFT_DRAW_ENDED delivered out of order: the REDO draw runs like a new one, nothing is announced twice', async ({
    expect,
  }) => {
    await withStack(async (s) => {
      const first = await buyGifts(s, 2);
      const none = await settled(s, first); // nobody entered: handed back to Fourthwall
      expect(none.winners).toEqual([]);
      expect(none.status).toBe('failed');
      // Fourthwall closes it after its deadline; hold its GIFT_DRAW_ENDED so it arrives after the REDO start
      s.fourthwall.control.webhookFaults.outOfOrder({ type: 'GIFT_DRAW_ENDED' });
      const { redo } = s.fourthwall.control.expireDraw(first);
      const redoId = redo!['id'] as string;
      expect(redo!['type']).toBe('REDO');
      await s.chatServer.waitFor(() => redrawLines(s, 'generous_fan').length === 1, 5000, 'REDO announced');
      const ended = await s.fourthwall.control.waitForDelivery(
        (d) => d.type === 'GIFT_DRAW_ENDED' && d.delivered,
        5000,
      );
      const redoStart = s.fourthwall.control.deliveries.find(
        (d) => d.type === 'GIFT_DRAW_STARTED' && d.body.includes(redoId),
      )!;
      await s.bot.http.idle();
      // the bot really received them out of order: the REDO start first, then the first draw's end
      const accepted = s.logs
        .json()
        .filter((l) => l['msg'] === 'webhook accepted')
        .map((l) => l['eventId']);
      expect(accepted.indexOf(redoStart.eventId)).toBeGreaterThanOrEqual(0);
      expect(accepted.indexOf(ended.eventId)).toBeGreaterThan(accepted.indexOf(redoStart.eventId));

      enterAll(s.chatServer, logins('redo', 3));
      await entrantsAccepted(s, redoId, 3);
      const rec = await settled(s, redoId);
      expect(rec.status).toBe('finished');
      expect(rec.kind).toBe('gift-draw');
      expect(rec.source.drawId).toBe(redoId);
      expect(rec.winners).toHaveLength(2);
      expect(rec.fairness.commitment).not.toBe(none.fairness.commitment);
      expect(finishCalls(s.fourthwall, redoId)).toHaveLength(1);
      expect(finishCalls(s.fourthwall, first)).toHaveLength(0);
      checkWinnersAgainstSandbox(expect, s, rec, redoId);
      // the first draw stays as it was: one handed-back line, no failure line, no second announcement
      expect((await s.bot.repo.getDraw(first))!.status).toBe('failed');
      expect(handedBackLines(s)).toHaveLength(1);
      expect(openedLines(s, 'generous_fan')).toHaveLength(1);
      expect(s.chatServer.botMessages().some((m) => m.startsWith('⚠️'))).toBe(false);
      expect(winnerLines(s)).toHaveLength(1);
    });
  });
});
