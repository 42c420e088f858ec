/**
 * EventSub ingestion through the product as it runs, beside an IRC `!enter` in the same run.
 * One local stack (startBenchStack: the real bot with channel points on, the Fourthwall sandbox,
 * the chat sandbox with the Helix sandbox's channel points on its port, the sandbox EventSub
 * server), all on this thread. Per round, each side gets a fresh gift draw and N distinct viewers:
 * - channel points: N redemptions of the bot's reward, made at the sandbox in one burst; each is a
 *   notification on the real EventSub WebSocket -> the EventSub client (dedupe) -> the channel-point
 *   feature -> the engine's door (eligibility, grant) -> the ticket journal (synced, group commit)
 *   -> `PATCH .../redemptions` FULFILLED at the Helix sandbox (up to 50 ids a call, within its
 *   800 points a minute); the span ends when the sandbox has every redemption FULFILLED;
 * - IRC: N `!enter` lines (pre-formatted, injected in big frames) -> tmi.js -> the command
 *   registry -> the engine -> the entry journal; the span ends when every entrant is in and the
 *   journal is synced (repo.flush).
 * Which side goes first alternates between rounds; the rows are each side's best rate, and the
 * median over rounds of the per-round ratios of CPU time per entry (process CPU, every thread:
 * the sandboxes run in this process, so their work, small beside the bot's, is on both sides).
 * Waits on the sandbox poll every 2 ms (a timer, not a spin: no CPU of its own to speak of).
 * The machine is shared: figures are ratios measured side by side; the row says the load.
 */
import { cpuUsage } from 'node:process';
import type { SimViewer } from '../src/sandbox/chat/index.js';
import { closeDraw, flat, viewers } from './chat-support.js';
import { CountWait } from './bare-tmi.js';
import { QUICK, gc, loadNote, median, openGiftDraw, startBenchStack, type BenchStack } from './e2e-support.js';
import type { BenchResult } from './types.js';

const N = QUICK ? 300 : 2000;
const ROUNDS = QUICK ? 3 : 5;

interface Span {
  ms: number;
  cpuUs: number;
}

function cpuNow(): number {
  const u = cpuUsage();
  return u.user + u.system;
}

async function until(check: () => boolean, what: string, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`bench: ${what} did not happen within ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function pointsRound(s: BenchStack, round: number): Promise<Span> {
  const cp = s.bot.twitchEvents.channelPoints!;
  const points = s.twitch.channelPoints;
  const drawId = await openGiftDraw(s, 1);
  await until(() => points.rewards.get(cp.rewardId!)?.isPaused === false, 'the reward unpaused');
  const people: SimViewer[] = viewers(s.chatServer, `cp${round}_`, N);
  const before = points.fulfilled;
  gc();
  const t0 = performance.now();
  const c0 = cpuNow();
  for (const v of people) points.redeem(cp.rewardId!, { id: v.userId, login: v.login });
  await until(() => points.fulfilled - before >= N, `${N} redemptions FULFILLED`);
  const span = { ms: performance.now() - t0, cpuUs: cpuNow() - c0 };
  if (s.bot.engine.entrantCount(drawId) !== N)
    throw new Error(`bench: ${s.bot.engine.entrantCount(drawId)} entrants, expected ${N}`);
  await closeDraw(s, drawId);
  return span;
}

async function ircRound(s: BenchStack, round: number): Promise<Span> {
  const drawId = await openGiftDraw(s, 1);
  const lines = viewers(s.chatServer, `irc${round}_`, N).map((v) => flat(s.chatServer.formatPrivmsg(v, '!enter')));
  const wait = new CountWait();
  s.bot.engine.events.on('entered', wait.poke);
  gc();
  const t0 = performance.now();
  const c0 = cpuNow();
  s.chatServer.injectRaw(lines);
  await wait.until(() => s.bot.engine.entrantCount(drawId) ?? 0, N);
  await s.bot.repo.flush();
  const span = { ms: performance.now() - t0, cpuUs: cpuNow() - c0 };
  s.bot.engine.events.off('entered', wait.poke);
  await closeDraw(s, drawId);
  return span;
}

export async function run(): Promise<BenchResult[]> {
  const s = await startBenchStack(3600, { settings: { channelPoints: { enabled: true, maxPerViewer: 1 } } });
  try {
    await until(
      () =>
        s.bot.twitchEvents.channelPoints?.state === 'ready' &&
        s.bot.twitchEvents.eventSub?.health().state === 'connected',
      'EventSub ready',
      30_000,
    );
    // Warm-up (JIT), not measured.
    await pointsRound(s, 99);
    await ircRound(s, 99);
    const points: Span[] = [];
    const irc: Span[] = [];
    const ratios: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      let p: Span;
      let i: Span;
      if (r % 2 === 0) {
        p = await pointsRound(s, r);
        i = await ircRound(s, r);
      } else {
        i = await ircRound(s, r);
        p = await pointsRound(s, r);
      }
      points.push(p);
      irc.push(i);
      ratios.push(p.cpuUs / N / (i.cpuUs / N));
    }
    const rate = (x: Span) => (N / x.ms) * 1000;
    const best = (xs: Span[]) => Math.max(...xs.map(rate));
    const cpuPer = (xs: Span[]) => median(xs.map((x) => x.cpuUs / N));
    const patches = s.helix.calls.filter(
      (c) => c.path === '/channel_points/custom_rewards/redemptions' && c.status === 200,
    ).length;
    const note = `${N} per side per round, ${ROUNDS} rounds alternating, ${loadNote()}; sandboxes in-process (their CPU on both sides); channelPoints maxPerViewer 1; ${patches} settle PATCHes in all${QUICK ? ' (BENCH_QUICK sizes)' : ''}`;
    return [
      {
        name: 'eventsub.redemptionsPerSecond',
        value: best(points),
        unit: 'redemptions/s',
        detail: `best round, entered and FULFILLED at the Helix sandbox; ${note}`,
      },
      {
        name: 'eventsub.ircEnterPerSecond',
        value: best(irc),
        unit: 'lines/s',
        detail: `best round, !enter entered and journaled; ${note}`,
      },
      { name: 'eventsub.cpuPerRedemptionUs', value: cpuPer(points), unit: 'us', detail: `median per round; ${note}` },
      { name: 'eventsub.cpuPerIrcEnterUs', value: cpuPer(irc), unit: 'us', detail: `median per round; ${note}` },
      {
        name: 'eventsub.cpuPerRedemptionOverIrcEnter',
        value: median(ratios),
        unit: 'x',
        detail: `median of per-round ratios; ${note}`,
      },
    ];
  } finally {
    await s.dispose();
  }
}
