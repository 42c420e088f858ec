/**
 * The stream ends while a gift draw is open (docs/operating.md, auto streaming: "Draws open when the stream
 * ends run to their end"; stream-watch.ts: "Draws are not touched"). The whole local stack with
 * `streaming.auto`, the bot on a ManualClock: the broadcaster is live on the local Helix API, a
 * gift purchase opens a draw, viewers `!enter` through the chat sandbox, the stream goes offline
 * and the watch sets Fourthwall streaming ended after the grace; the draw is still open with its
 * entrants, and when the clock reaches its end it closes with them, picks winners, finishes at the
 * Fourthwall sandbox and the history records it as finished. Waits are on events and conditions;
 * time moves only by advancing the clock.
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/shared/clock.js';
import {
  drawSettled,
  entrantsReach,
  nextDrawOpened,
  startLinkStack,
  tempDir,
  type LinkStack,
} from './support/e2e-link-stack.js';
import { finishCalls, finishSeen, sandboxDraw } from './support/e2e-stack.js';

const POLL_S = 30;
const GRACE_S = 120;
const GIFTS = 2;

const stacks: LinkStack[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of stacks.splice(0)) await s.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

/** Advances the clock by one poll interval and waits until that poll has asked Helix and is done. */
async function onePoll(s: LinkStack, clock: ManualClock): Promise<void> {
  const streams = () => s.stack.helix.calls.filter((c) => c.path === '/streams').length;
  await s.bot.twitchApi!.watch!.idle(); // the poll before is done, so its next timer is armed
  const before = streams();
  clock.advance(POLL_S * 1000);
  await s.chat.waitFor(() => streams() > before, 5000, 'the next /streams poll');
  await s.bot.twitchApi!.watch!.idle();
}

describe('the stream ends while a draw is open', () => {
  it('the draw keeps its entrants, closes on its timer, picks winners and finishes at Fourthwall', async () => {
    const dataDir = await tempDir();
    dirs.push(dataDir);
    const clock = new ManualClock(Date.now());
    const s = await startLinkStack({
      dataDir,
      clock,
      settings: { streaming: { auto: true, pollSeconds: POLL_S, offlineGraceSeconds: GRACE_S } },
      helix: { prepare: (helix, chat) => helix.goLive(chat.channelId, chat.channel) },
    });
    stacks.push(s);
    await s.nextBotLine(/The stream is live: Fourthwall now shows it as LIVE/);
    expect(s.fw.state.live).toBe(true);

    // A gift purchase opens a draw; the sandbox's own draw timer (600 s, system time) stays far off.
    const opened = nextDrawOpened(s);
    const { draw } = s.fw.control.simulateGiftPurchase({ quantity: GIFTS, username: 'generous_fan' });
    const drawId = draw['id'] as string;
    const rec0 = await opened;
    expect(rec0.source.drawId).toBe(drawId);
    const id = rec0.id;
    const closesAt = Date.parse(rec0.closesAt);
    expect(closesAt).toBeGreaterThan(clock.now() + (POLL_S * 5 + 10) * 1000); // still open after the grace

    const names = ['fan_a', 'fan_b', 'fan_c'];
    const allIn = entrantsReach(s, id, names.length);
    const viewers = s.enter(names);
    await allIn;
    await s.idle();
    const openEntrants = async () =>
      (await s.bot.repo.openDraws()).find((d) => d.record.id === id)?.entrants.length ?? -1;
    expect(await openEntrants()).toBe(names.length);

    // The stream goes offline; the watch sees it on its next poll and ends streaming after the grace.
    s.stack.helix.goOffline(s.chat.channelId);
    const mark = s.mark();
    await onePoll(s, clock); // first offline answer: the grace starts
    expect(s.requests('endStreaming')).toHaveLength(0);
    for (let waited = 0; waited < GRACE_S; waited += POLL_S) await onePoll(s, clock);
    expect(s.requests('endStreaming')).toHaveLength(1);
    expect(s.fw.state.live).toBe(false);
    expect(s.bot.twitchApi!.watch!.sent.end).toBe(1);
    await s.nextBotLine(
      /The stream ended: Fourthwall now shows it as offline\. Draws still open run to their end\./,
      mark,
    );

    // The draw is untouched: still open, with every entrant, no finish call yet.
    expect(clock.now()).toBeLessThan(closesAt);
    expect(await openEntrants()).toBe(names.length);
    expect((await s.record(id)).status).toBe('open');
    expect(finishCalls(s.fw, drawId)).toHaveLength(0);
    expect(sandboxDraw(s.fw, drawId).status).toBe('OPEN');

    // Its end on the clock: closes with the entrants it had, picks, finishes at Fourthwall.
    const settled = drawSettled(s, id);
    const closed = new Promise<number>((resolve) =>
      s.bot.engine.events.once('draw-closed', (r: { entrants: number }) => resolve(r.entrants)),
    );
    const frozen = new Promise<number>((resolve) =>
      s.bot.engine.events.once('entrants-frozen', (_id: string, _digest: string, n: number) => resolve(n)),
    );
    clock.advance(closesAt - clock.now() + 1000);
    const { event, record } = await settled;
    await s.idle();
    expect(await closed).toBe(names.length);
    expect(await frozen).toBe(names.length);
    expect(event).toBe('draw-finished');
    expect(record.status).toBe('finished');
    expect(record.entrants).toBe(names.length);

    const stored = await s.record(id);
    expect(stored.status).toBe('finished');
    expect(stored.frozenEntrants?.map((e) => e.login).sort()).toEqual([...names].sort());
    expect(stored.winners).toHaveLength(GIFTS);
    const ids = new Set(viewers.map((v) => v.userId));
    for (const w of stored.winners) expect(ids.has(w.userId)).toBe(true);
    expect(new Set(stored.winners.map((w) => w.userId)).size).toBe(GIFTS);

    // one finish call, answered 200; the sandbox's draw finished with the same winners
    expect(finishSeen(s.fw, drawId)).toEqual({
      finishStatuses: [200],
      status: 'FINISHED',
      winnerIds: stored.winners.map((w) => w.userId).sort(),
    });
    await s.nextBotLine(new RegExp(stored.winners.map((w) => `@${w.login}`).join('.*')), mark);

    const row = (await s.history()).find((r) => r.id === id)!;
    expect(row).toMatchObject({ kind: 'gift-draw', status: 'finished', entrants: names.length });
    expect(row.winners.map((w) => w.userId).sort()).toEqual(stored.winners.map((w) => w.userId).sort());
    // Streaming stayed ended: the draw's end did not set it live again.
    expect(s.requests('startStreaming')).toHaveLength(1);
    expect(s.fw.state.live).toBe(false);
  });
});
