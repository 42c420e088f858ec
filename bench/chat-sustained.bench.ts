/**
 * Sustained chat load through the product as it runs (startLocalStack: the real bot's TwitchChat
 * on a real tmi.js socket -> the `!enter` command -> GiveawayEngine with an open gift draw -> the
 * file journal): RATE `!enter` lines per second for SECONDS seconds, injected by the chat sandbox
 * (in this process) in batches of RATE/100 every 10 ms on an absolute schedule. Measured while it
 * runs: the event-loop delay of the bot's process (p99, monitorEventLoopDelay at 1 ms resolution)
 * and `/healthz` latency from a worker thread (GET every 50 ms). Its anchor, in the same run: a
 * bare tmi.js client reading the same schedule of lines from a second sandbox, its loop delay
 * measured the same way. The lines cycle over DISTINCT viewers (the first pass enters them, the
 * rest are re-entries); a sentinel viewer's line ends each side, so all lines were handled when
 * its entry (or its count) arrives.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { silentLogger } from '../src/logging/index.js';
import { startChatServer, type ChatServer } from '../src/sandbox/chat/index.js';
import { QUICK, gc, loadNote, openGiftDraw, percentile, startBenchStack, startProber } from './e2e-support.js';
import { CountWait } from './bare-tmi.js';
import { closeDraw, flat, joinBareClient, localTarget, viewers } from './chat-support.js';
import type { BenchResult } from './types.js';

const RATE = 20_000;
const SECONDS = QUICK ? 5 : 30;
const TICK_MS = 10;
const PER_TICK = (RATE * TICK_MS) / 1000;
const TICKS = (SECONDS * 1000) / TICK_MS;
const DISTINCT = 100_000;
const IDLE_MS = 5000;
const quick = QUICK ? ' (BENCH_QUICK length)' : '';

function lines(server: ChatServer): { flood: string[]; sentinel: string } {
  const vs = viewers(server, 'sustain_', DISTINCT + 1);
  const end = vs.pop()!;
  return {
    flood: vs.map((v) => flat(server.formatPrivmsg(v, '!enter'))),
    sentinel: flat(server.formatPrivmsg(end, '!enter')),
  };
}

/** Injects the schedule into `server`; resolves when `handled()` resolves after the last batch. */
async function drive(server: ChatServer, l: { flood: string[]; sentinel: string }, handled: () => Promise<void>) {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const t0 = performance.now();
  let behindMs = 0;
  for (let i = 0; i < TICKS; i++) {
    const due = t0 + i * TICK_MS;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    else behindMs = Math.max(behindMs, -wait);
    const from = (i * PER_TICK) % l.flood.length;
    server.injectRaw(l.flood.slice(from, from + PER_TICK));
  }
  server.injectRaw([l.sentinel]);
  const sentMs = performance.now() - t0;
  await handled();
  const doneMs = performance.now() - t0;
  loop.disable();
  return { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6, sentMs, lagMs: doneMs - sentMs, behindMs };
}

export async function run(): Promise<BenchResult[]> {
  const s = await startBenchStack();
  const rawServer = await startChatServer({ logger: silentLogger() });
  try {
    const ours = lines(s.chatServer);
    const raw = lines(rawServer);
    gc();
    // The anchor: a bare tmi.js client on the same schedule.
    process.stderr.write(`  bare tmi.js: ${RATE} lines/s for ${SECONDS} s (${loadNote()})\n`);
    const bare = await joinBareClient(localTarget(rawServer));
    const bareWait = new CountWait();
    let seen = 0;
    bare.client.on('message', () => {
      seen++;
      bareWait.poke();
    });
    const b = await drive(rawServer, raw, () => bareWait.until(() => seen, TICKS * PER_TICK + 1));
    await bare.close();
    gc();
    process.stderr.write(`  real bot: ${RATE} lines/s for ${SECONDS} s (${loadNote()})\n`);
    const drawId = await openGiftDraw(s, 5);
    // /healthz with no chat load, same prober, same run: what the machine itself costs a GET.
    const idleProber = startProber(`${s.bot.http.url}/healthz`, 50);
    await sleep(IDLE_MS);
    const idle = await idleProber.stop();
    const wait = new CountWait();
    s.bot.engine.events.on('entered', wait.poke);
    const prober = startProber(`${s.bot.http.url}/healthz`, 50);
    const entrants = Math.min(DISTINCT, TICKS * PER_TICK) + 1;
    const o = await drive(s.chatServer, ours, () => wait.until(() => s.bot.engine.entrantCount(drawId) ?? 0, entrants));
    const health = await prober.stop();
    s.bot.engine.events.off('entered', wait.poke);
    await closeDraw(s, drawId);
    const hP99 = percentile(health, 99);
    const hMax = Math.max(...health);
    const rate = Math.round((TICKS * PER_TICK) / (o.sentMs / 1000));
    const ok = o.p99 <= 50 && hP99 <= 50;
    return [
      {
        name: 'e2e.chat.sustained20kLoopP99',
        value: Number(o.p99.toFixed(1)),
        unit: 'ms',
        target: '<= 50 (and /healthz p99 <= 50 ms)',
        ok,
        detail:
          `${RATE} !enter lines/s (${PER_TICK} every ${TICK_MS} ms) for ${SECONDS} s through the real bot's socket (achieved ${rate}/s, schedule at most ${o.behindMs.toFixed(0)} ms behind), ` +
          `${DISTINCT} distinct viewers cycled; bot loop delay p99 ${o.p99.toFixed(1)} ms, max ${o.max.toFixed(0)} ms; /healthz (every 50 ms from a worker) p99 ${hP99.toFixed(1)} ms, max ${hMax.toFixed(1)} ms over ${health.length} GETs ` +
          `(with no chat load, ${IDLE_MS / 1000} s before: p99 ${percentile(idle, 99).toFixed(1)} ms, max ${Math.max(...idle).toFixed(1)} ms); ` +
          `last line entered ${o.lagMs.toFixed(0)} ms after it was sent. Anchor, bare tmi.js on the same schedule: loop p99 ${b.p99.toFixed(1)} ms, max ${b.max.toFixed(0)} ms, done ${b.lagMs.toFixed(0)} ms after the last line. ` +
          `The sandbox writing the lines runs in the same process (same loop) on both sides; ${loadNote()}${quick}`,
      },
    ];
  } finally {
    await rawServer.close();
    await s.dispose();
  }
}
