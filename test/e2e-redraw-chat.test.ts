/**
 * Chat during a gift purchase nobody enters (giveaway/redraws.ts): the whole local stack (the
 * Fourthwall sandbox, the chat server, the real bot), the sandbox's draw expiry and the bot's
 * timers on ONE ManualClock, so five minutes of the shop's real redraw cycle run in seconds
 * through the same code as live: each round the bot hands the draw back (fewer entrants than
 * gifts), the sandbox closes it at its deadline (entry window + 60 s) and opens its REDO draw,
 * delivered to the bot as signed webhooks over HTTP, and the bot runs it like any draw.
 * The clock moves one second at a time; after each second the test waits (on conditions, never
 * sleeps) until every draw the sandbox has open is open in the bot and the bot's outbox has sent
 * what that second said.
 * Checks: chat stays at a handful of lines, each said once (the draw, its reminder, the round
 * handed back, the redraw, its reminder, "the shop keeps redrawing" and why), while the sandbox
 * really ran 5 rounds; `!giveaway` answers about the redraw open now; a quiet redraw that viewers
 * do enter is drawn and announced as usual.
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/shared/clock.js';
import { drawSettled, entrantsReach, startLinkStack, tempDir, type LinkStack } from './support/e2e-link-stack.js';
import { setShopLive, waitUntil } from './support/e2e-stack.js';

/** The shipped reminder settings (a half-time and a near-end reminder, batched acknowledgements). */
const DEFAULT_REMINDERS = { halfTime: true, nearEndSeconds: 10, ackEverySeconds: 15 };
const WINDOW_S = 15;
const GIFTS = 3;

const stacks: LinkStack[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of stacks.splice(0)) await s.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

/** The sandbox's draws of the purchase, oldest first. */
function sandboxRounds(s: LinkStack): { id: string; status: string; type: string }[] {
  return [...s.fw.state.draws.values()].map((d) => ({ id: d.id, status: d.status, type: d.type }));
}

/** Waits until every draw the sandbox has open is open in the bot, and the bot is idle. */
async function caughtUp(s: LinkStack): Promise<void> {
  const botHas = () =>
    new Set(
      s.bot.engine
        .drawViews()
        .filter((v) => v.active)
        .map((v) => v.record.source.drawId),
    );
  const missing = () =>
    sandboxRounds(s).filter((d) => d.status === 'OPEN' && !botHas().has(d.id) && !handled.has(d.id));
  const handled = new Set<string>();
  // (a draw the bot already handed back stays OPEN at the sandbox until its deadline)
  for (const v of s.bot.engine.drawViews()) if (v.record.source.drawId) handled.add(v.record.source.drawId);
  await waitUntil(
    () => {
      for (const v of s.bot.engine.drawViews()) if (v.record.source.drawId) handled.add(v.record.source.drawId);
      return missing().length === 0;
    },
    5000,
    'the bot to open the sandbox redraw',
  );
  await s.idle();
  // What the second said is sent before the clock moves on (the outbox's stale limit for
  // reminders is on the bot's clock: compressed time must not age a line that real time would send).
  await s.bot.chat.flush();
}

async function advance(s: LinkStack, clock: ManualClock, seconds: number): Promise<void> {
  for (let i = 0; i < seconds; i++) {
    clock.advance(1000);
    await caughtUp(s);
  }
}

describe('a gift purchase nobody enters', { timeout: 120_000 }, () => {
  it('five minutes of the shop redrawing: a handful of chat lines, each said once; !giveaway answers about the open redraw; a quiet redraw still draws', async () => {
    const dataDir = await tempDir();
    dirs.push(dataDir);
    const clock = new ManualClock(Date.now());
    const s = await startLinkStack({
      dataDir,
      clock,
      fourthwall: { clock, drawDurationSeconds: WINDOW_S },
      settings: { reminders: DEFAULT_REMINDERS },
    });
    stacks.push(s);
    setShopLive({ fourthwall: s.fw, chat: s.chat });
    const mark = s.mark();

    s.fw.control.simulateGiftPurchase({ quantity: GIFTS, username: 'generous_fan' });
    await caughtUp(s);
    await advance(s, clock, 300);
    await s.bot.chat.flush();

    // The shop really redrew: the first draw and a REDO every entry window + 60 s.
    const rounds = sandboxRounds(s);
    expect(rounds.length).toBeGreaterThanOrEqual(5);
    expect(rounds.slice(1).every((d) => d.type === 'REDO')).toBe(true);
    expect(rounds.slice(0, -1).every((d) => d.status === 'EXPIRED')).toBe(true);

    const lines = s.botLines(mark);
    expect(lines, lines.join('\n')).toHaveLength(6);
    expect(lines[0]).toMatch(/^🎁 generous_fan gifted 3x .*Type !enter in the next 15s/);
    expect(lines[1]).toMatch(/^⏳ .*: \d+s left, 0 entered so far/);
    expect(lines[2]).toMatch(
      /: no eligible entrant for 3 gifts, and Fourthwall needs one winner per gift, so nobody wins this round\.$/,
    );
    expect(lines[3]).toMatch(/^🔁 generous_fan's 3x .* is drawn again! Type !enter in the next \d+s/);
    expect(lines[4]).toMatch(/^⏳ .*: \d+s left, 0 entered so far/);
    expect(lines[5]).toMatch(
      /: nobody won again\. The shop keeps redrawing it about every 75s until enough viewers enter for 3 gifts \(one winner per gift\)\./,
    );

    // !giveaway asks about the draw open now (a quiet redraw), not about the one before.
    const asked = s.mark();
    const open = s.bot.engine.drawViews().find((v) => v.active);
    if (!open) {
      // between a round handed back and the next redraw: the answer says when it comes
      s.say(s.viewer('curious_cat'), '!giveaway');
      expect(await s.nextBotLine(/./, asked)).toMatch(
        /nobody won the last round; the shop draws it again in about \d+s\. Type !enter then!/,
      );
      await advance(s, clock, 75);
    }
    const redraw = s.bot.engine.drawViews().find((v) => v.active)!;
    expect(redraw.record.source.redo).toBe(true);
    const asked2 = s.mark();
    s.say(s.viewer('curious_cat2'), '!giveaway');
    expect(await s.nextBotLine(/./, asked2)).toMatch(/\(3x\): \d+s left, 0 entered\. Type !enter to join!$/);

    // Viewers enter the quiet redraw: it is drawn, finished at the sandbox and announced.
    const names = ['ana', 'ben', 'cai', 'dee'];
    const allIn = entrantsReach(s, redraw.record.id, names.length);
    s.enter(names);
    await allIn;
    const settled = drawSettled(s, redraw.record.id);
    const closesIn = Date.parse(redraw.record.closesAt) - clock.now();
    await advance(s, clock, Math.ceil(closesIn / 1000) + 1);
    const { record } = await settled;
    expect(record.status).toBe('finished');
    expect(record.winners).toHaveLength(GIFTS);
    await s.nextBotLine(/congratulations/, asked2);
  });
});
