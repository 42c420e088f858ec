/**
 * A/B helper for the chat-ingestion row (not a benchmark row; run by hand): CPU time per line of
 * the whole process (process.cpuUsage: the chat sandbox's send side is in it for both sides) while
 * the real bot takes the e2e-2-chat flood (100,000 `!enter` lines from 50,000 viewers into an open
 * gift draw, journal on), beside a bare tmi.js client taking the same flood, alternating, in one
 * run. CPU time is steadier than wall time on a shared machine. Waits poll on a 1 ms timer, not
 * setImmediate, so an idle wait costs (almost) no CPU.
 * Input lines are flat copies unless ROPES=1 (as ropes the heap is ~370 MB, not ~150, so a major GC
 * in a round costs ~1 s of CPU and makes rounds bimodal). ONLY=bot or ONLY=bare measures one side;
 * ONLY=path replays captured tmi.js listener arguments on the bot's tmi.js client (our code only,
 * no socket or IRC parsing); HEAPPROF=<file> with ONLY=path writes an allocation profile of the
 * measured rounds, CPUPROF=<file> a CPU profile of them (50 us sampling).
 * Usage: node --expose-gc --import tsx bench/chat-cpu.ts [rounds]
 */
import { silentLogger } from '../src/logging/index.js';
import { startChatServer, type ChatServer } from '../src/sandbox/chat/index.js';
import { gc, median, openGiftDraw, startBenchStack, type BenchStack } from './e2e-support.js';
import { closeDraw, enterLines, joinBareClient } from './chat-support.js';

const USERS = Number(process.env['USERS'] ?? 50_000);
const ROUNDS = Number(process.argv[2] ?? 5);

function until(count: () => number, target: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (count() >= target ? resolve() : setTimeout(check, 1));
    check();
  });
}

interface Sample { cpuUs: number; wallMs: number }

function measure<T>(fn: () => Promise<T>): Promise<Sample> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  return fn().then(() => {
    const c = process.cpuUsage(c0);
    return { cpuUs: c.user + c.system, wallMs: performance.now() - t0 };
  });
}

type Captured = [string, Record<string, unknown>, string];

/** What tmi.js hands its `message` listeners for `lines`, captured from a bare client. */
async function capture(server: ChatServer, lines: string[]): Promise<Captured[]> {
  const bare = await joinBareClient(server);
  const out: Captured[] = [];
  bare.client.on('message', (channel, tags, text) => {
    out.push([channel, tags as Record<string, unknown>, text]);
  });
  server.injectRaw(lines);
  await until(() => out.length, lines.length);
  await bare.close();
  return out;
}

/** Our code only: the captured listener arguments emitted on the bot's tmi.js client. */
async function pathRound(s: BenchStack, captured: Captured[], entrants: number): Promise<Sample> {
  const client = (s.bot.chat as unknown as { client: { emit(...args: unknown[]): void } }).client;
  const drawId = await openGiftDraw(s, 5);
  gc();
  const m = await measure(async () => {
    for (let i = 0; i < captured.length; i++) {
      const c = captured[i]!;
      client.emit('message', c[0], c[1], c[2], false);
      if ((i & 1023) === 1023) await new Promise((r) => setImmediate(r));
    }
    await until(() => s.bot.service.entrantCount(drawId) ?? 0, entrants);
    await s.bot.repo.flush();
  });
  await closeDraw(s, drawId);
  return m;
}

async function rawRound(server: ChatServer, lines: string[]): Promise<Sample> {
  const bare = await joinBareClient(server);
  let n = 0;
  bare.client.on('message', () => {
    n++;
  });
  gc();
  const s = await measure(async () => {
    server.injectRaw(lines);
    await until(() => n, lines.length);
  });
  await bare.close();
  return s;
}

async function oursRound(s: BenchStack, lines: string[], entrants: number): Promise<Sample> {
  const drawId = await openGiftDraw(s, 5);
  gc();
  const m = await measure(async () => {
    s.chatServer.injectRaw(lines);
    await until(() => s.bot.service.entrantCount(drawId) ?? 0, entrants);
  });
  await s.bot.repo.flush();
  await closeDraw(s, drawId);
  return m;
}

const s = await startBenchStack();
const heap0 = process.memoryUsage().heapUsed;
const rawServer = await startChatServer({ logger: silentLogger() });
try {
  const ours = enterLines(s.chatServer, USERS, { ropes: Boolean(process.env['ROPES']) });
  const raws = enterLines(rawServer, USERS, { ropes: Boolean(process.env['ROPES']) });
  const only = process.env['ONLY'];
  if (only === 'path') {
    const captured = await capture(rawServer, ours);
    const warm = Math.min(20_000, USERS);
    await pathRound(s, captured.slice(0, warm), warm);
    const xs: number[] = [];
    const inspector = process.env['HEAPPROF'] || process.env['CPUPROF'] ? await import('node:inspector/promises') : undefined;
    const session = inspector ? new inspector.Session() : undefined;
    session?.connect();
    if (process.env['HEAPPROF']) await session?.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMinorGC: true, includeObjectsCollectedByMajorGC: true });
    if (process.env['CPUPROF']) {
      await session?.post('Profiler.enable');
      await session?.post('Profiler.setSamplingInterval', { interval: 50 });
      await session?.post('Profiler.start');
    }
    for (let i = 0; i < ROUNDS; i++) {
      const m = await pathRound(s, captured, USERS + 1);
      xs.push(m.cpuUs / captured.length);
      console.log(`round ${i + 1}: our code ${(m.cpuUs / captured.length).toFixed(2)} us/line`);
    }
    console.log(`median: our code ${median(xs).toFixed(2)} us/line`);
    if (session && process.env['HEAPPROF']) {
      const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: unknown };
      (await import('node:fs')).writeFileSync(process.env['HEAPPROF'], JSON.stringify(profile));
    }
    if (session && process.env['CPUPROF']) {
      const { profile } = (await session.post('Profiler.stop')) as { profile: unknown };
      (await import('node:fs')).writeFileSync(process.env['CPUPROF'], JSON.stringify(profile));
    }
  } else {
    gc();
    console.log(`harness input: ${((process.memoryUsage().heapUsed - heap0) / 1e6).toFixed(0)} MB of heap`);
    const WARM = Math.min(20_000, USERS);
    await rawRound(rawServer, raws.slice(0, WARM));
    await oursRound(s, ours.slice(0, WARM), WARM);
    const r: number[] = [];
    const o: number[] = [];
    const ratios: number[] = [];
    const wall: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      if (only === 'bot') {
        const b = await oursRound(s, ours, USERS + 1);
        console.log(`round ${i + 1}: bot ${(b.cpuUs / ours.length).toFixed(2)} us/line`);
        continue;
      }
      if (only === 'bare') {
        const a = await rawRound(rawServer, raws);
        console.log(`round ${i + 1}: bare ${(a.cpuUs / raws.length).toFixed(2)} us/line`);
        continue;
      }
      let a: Sample;
      let b: Sample;
      if (i % 2 === 0) {
        a = await rawRound(rawServer, raws);
        b = await oursRound(s, ours, USERS + 1);
      } else {
        b = await oursRound(s, ours, USERS + 1);
        a = await rawRound(rawServer, raws);
      }
      const n = raws.length;
      r.push(a.cpuUs / n);
      o.push(b.cpuUs / n);
      ratios.push(a.cpuUs / b.cpuUs);
      wall.push(a.wallMs / b.wallMs);
      console.log(`round ${i + 1}: bare ${(a.cpuUs / n).toFixed(2)} us/line, bot ${(b.cpuUs / n).toFixed(2)} us/line, cpu ratio ${(a.cpuUs / b.cpuUs).toFixed(3)}, wall ratio ${(a.wallMs / b.wallMs).toFixed(3)}`);
    }
    if (r.length) console.log(`median: bare ${median(r).toFixed(2)} us/line, bot ${median(o).toFixed(2)} us/line, cpu ratio ${median(ratios).toFixed(3)}, wall ratio ${median(wall).toFixed(3)}`);
  }
} finally {
  await rawServer.close();
  await s.dispose();
}
