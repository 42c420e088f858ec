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
 * no socket or IRC parsing); HEAPPROF=<file> with ONLY=path writes an allocation profile.
 * Usage: node --expose-gc --import tsx bench/chat-cpu.ts [rounds]
 */
import tmi from 'tmi.js';
import { silentLogger } from '../src/logging/index.js';
import { startChatServer, type ChatServer, type SimViewer } from '../src/sandbox/chat/index.js';
import type { DrawRecord } from '../src/giveaway/ports.js';
import { gc, median, openGiftDraw, startBenchStack, type BenchStack } from './e2e-support.js';

const USERS = Number(process.env['USERS'] ?? 50_000);
const ROUNDS = Number(process.argv[2] ?? 5);

function viewers(server: ChatServer, prefix: string, count: number): SimViewer[] {
  const out: SimViewer[] = [];
  const ids = new Set<string>();
  for (let i = 0; out.length < count; i++) {
    const sub = i % 5 === 0;
    const v = server.viewer(`${prefix}${i}`, { subscriber: sub, subMonths: sub ? 3 : 0 });
    if (ids.has(v.userId)) continue;
    ids.add(v.userId);
    out.push(v);
  }
  return out;
}

function enterLines(server: ChatServer): string[] {
  const vs = viewers(server, 'viewer_', USERS + 1);
  const sentinel = vs.pop()!;
  const lines: string[] = [];
  for (let i = 0; i < USERS * 2; i++) lines.push(server.formatPrivmsg(vs[i % USERS]!, '!enter'));
  lines.push(server.formatPrivmsg(sentinel, '!enter'));
  // Flat copies (formatPrivmsg's template strings are ropes): a small harness heap, so a major GC
  // landing in a round does not mark hundreds of MB of input.
  return process.env['ROPES'] ? lines : lines.map((l) => JSON.parse(JSON.stringify(l)) as string);
}

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
  const client = new tmi.Client({
    options: { skipUpdatingEmotesets: true },
    connection: { server: server.host, port: server.port, secure: false, reconnect: false },
    identity: { username: server.botLogin, password: `oauth:${server.token}` },
    channels: [server.channel],
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
  });
  const out: Captured[] = [];
  client.on('message', (channel, tags, text) => {
    out.push([channel, tags as Record<string, unknown>, text]);
  });
  const joined = new Promise<void>((resolve) => client.once('join', () => resolve()));
  await client.connect();
  await joined;
  await server.waitFor(() => server.joined().length === 1, 5000, 'capture client joined');
  server.injectRaw(lines);
  await until(() => out.length, lines.length);
  await client.disconnect();
  await server.waitFor(() => server.connections() === 0, 5000, 'capture client gone');
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
  await closeOurs(s, drawId);
  return m;
}

async function closeOurs(s: BenchStack, drawId: string): Promise<void> {
  const done = new Promise<void>((resolve) => {
    const on = (r: DrawRecord) => {
      if (r.id !== drawId) return;
      s.bot.service.events.off('draw-finished', on);
      s.bot.service.events.off('draw-failed', on);
      resolve();
    };
    s.bot.service.events.on('draw-finished', on);
    s.bot.service.events.on('draw-failed', on);
  });
  s.bot.service.endNow();
  await done;
  await s.bot.service.whenIdle();
}

async function rawRound(server: ChatServer, lines: string[]): Promise<Sample> {
  const client = new tmi.Client({
    options: { skipUpdatingEmotesets: true },
    connection: { server: server.host, port: server.port, secure: false, reconnect: false },
    identity: { username: server.botLogin, password: `oauth:${server.token}` },
    channels: [server.channel],
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
  });
  let n = 0;
  client.on('message', () => {
    n++;
  });
  const joined = new Promise<void>((resolve) => client.once('join', () => resolve()));
  await client.connect();
  await joined;
  await server.waitFor(() => server.joined().length === 1, 5000, 'raw client joined');
  gc();
  const s = await measure(async () => {
    server.injectRaw(lines);
    await until(() => n, lines.length);
  });
  await client.disconnect();
  await server.waitFor(() => server.connections() === 0, 5000, 'raw client gone');
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
  const done = new Promise<void>((resolve) => {
    const on = (r: DrawRecord) => {
      if (r.id !== drawId) return;
      s.bot.service.events.off('draw-finished', on);
      s.bot.service.events.off('draw-failed', on);
      resolve();
    };
    s.bot.service.events.on('draw-finished', on);
    s.bot.service.events.on('draw-failed', on);
  });
  s.bot.service.endNow();
  await done;
  await s.bot.service.whenIdle();
  return m;
}

const s = await startBenchStack();
const heap0 = process.memoryUsage().heapUsed;
const rawServer = await startChatServer({ logger: silentLogger() });
try {
  const ours = enterLines(s.chatServer);
  const raws = enterLines(rawServer);
  const only = process.env['ONLY'];
  if (only === 'path') {
    const captured = await capture(rawServer, ours);
    await pathRound(s, captured.slice(0, 20_000), 20_000);
    const xs: number[] = [];
    const inspector = process.env['HEAPPROF'] ? await import('node:inspector/promises') : undefined;
    const session = inspector ? new inspector.Session() : undefined;
    session?.connect();
    await session?.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMinorGC: true, includeObjectsCollectedByMajorGC: true });
    for (let i = 0; i < ROUNDS; i++) {
      const m = await pathRound(s, captured, USERS + 1);
      xs.push(m.cpuUs / captured.length);
      console.log(`round ${i + 1}: our code ${(m.cpuUs / captured.length).toFixed(2)} us/line`);
    }
    console.log(`median: our code ${median(xs).toFixed(2)} us/line`);
    if (session) {
      const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: unknown };
      (await import('node:fs')).writeFileSync(process.env['HEAPPROF']!, JSON.stringify(profile));
    }
    process.exit(0);
  }
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
} finally {
  await rawServer.close();
  await s.dispose();
}
