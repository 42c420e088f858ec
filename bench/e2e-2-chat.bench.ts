/**
 * Chat into the product as it runs (startLocalStack: the real bot's TwitchChat on a real tmi.js
 * socket -> the real command registry and `!enter` command -> GiveawayService with an open gift
 * draw -> the file journal), side by side with a bare tmi.js client on a second chat sandbox in
 * the same run:
 * - ingestion: 100,000 `!enter` lines from 50,000 distinct viewers plus one last sentinel viewer
 *   (lines are handled in order, so the sentinel's entry means every line was handled); rounds
 *   alternate which side goes first; the ratio is the median of 7 per-round ratios;
 * - heap per distinct entrant on that path (growth after gc over one round);
 * - entry durability: a 50,000-line flood of new viewers (50 lines every 10 ms, 5,000 lines/s: far
 *   above a busy channel, within what a bare tmi.js client takes here); a worker thread
 *   tails the draw's journal file and stamps each line as it lands; latency = landed - sent, p99.
 */
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { silentLogger } from '../src/logging/index.js';
import { startChatServer } from '../src/sandbox/chat/index.js';
import { fileStem } from '../src/storage/files.js';
import { LoopDelay, QUICK, gc, loadNote, median, openGiftDraw, percentile, startBenchStack, type BenchStack } from './e2e-support.js';
import { rawRound, until } from './bare-tmi.js';
import { closeDraw, enterLines, flat, viewers } from './chat-support.js';
import type { BenchResult } from './types.js';

const USERS = QUICK ? 10_000 : 50_000;
const LINES = USERS * 2;
const ROUNDS = QUICK ? 3 : 7;
const FLOOD = QUICK ? 10_000 : 50_000;
const FLOOD_BATCH = 50;
const FLOOD_EVERY_MS = 10;
const quick = QUICK ? ' (BENCH_QUICK sizes)' : '';

async function oursRound(s: BenchStack, lines: string[], entrants = USERS + 1): Promise<{ rate: number; heapPerEntrant: number; worstLoopMs: number }> {
  const drawId = await openGiftDraw(s, 5);
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const loop = new LoopDelay();
  loop.start();
  const t0 = performance.now();
  s.chatServer.injectRaw(lines);
  await until(() => s.bot.service.entrantCount(drawId) ?? 0, entrants);
  const rate = lines.length / ((performance.now() - t0) / 1000);
  const worstLoopMs = loop.stop();
  await s.bot.repo.flush();
  gc();
  const heapPerEntrant = (process.memoryUsage().heapUsed - heapBefore) / entrants;
  await closeDraw(s, drawId);
  return { rate, heapPerEntrant, worstLoopMs };
}

const TAIL = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { file, lines, timeoutMs } = workerData;
const landed = new Float64Array(lines);
const buf = Buffer.alloc(1 << 20);
const deadline = Date.now() + timeoutMs;
let fd; let offset = 0; let count = 0;
function tick() {
  if (fd === undefined) { try { fd = fs.openSync(file, 'r'); } catch { fd = undefined; } }
  if (fd !== undefined) {
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, offset);
      if (n <= 0) break;
      offset += n;
      const at = performance.timeOrigin + performance.now();
      for (let i = 0; i < n; i++) if (buf[i] === 10 && count < lines) landed[count++] = at;
    }
  }
  if (count >= lines || Date.now() > deadline) { if (fd !== undefined) fs.closeSync(fd); parentPort.postMessage({ landed, count }); return; }
  setTimeout(tick, 1);
}
tick();
`;

async function durability(s: BenchStack): Promise<{ p99: number; max: number; landed: number; worstLoopMs: number }> {
  const flood = viewers(s.chatServer, 'flood_', FLOOD).map((v) => flat(s.chatServer.formatPrivmsg(v, '!enter')));
  const drawId = await openGiftDraw(s, 5);
  const file = join(s.dataDir, 'journal', `${fileStem(drawId)}.jsonl`);
  const worker = new Worker(TAIL, { eval: true, workerData: { file, lines: FLOOD, timeoutMs: 120_000 } });
  const result = new Promise<{ landed: Float64Array; count: number }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const sent = new Float64Array(FLOOD);
  const loop = new LoopDelay();
  loop.start();
  for (let i = 0; i < FLOOD; i += FLOOD_BATCH) {
    const batch = flood.slice(i, i + FLOOD_BATCH);
    const at = performance.timeOrigin + performance.now();
    s.chatServer.injectRaw(batch);
    sent.fill(at, i, i + batch.length);
    await new Promise((resolve) => setTimeout(resolve, FLOOD_EVERY_MS));
  }
  const { landed, count } = await result;
  const worstLoopMs = loop.stop();
  await worker.terminate();
  await nextTurn();
  await closeDraw(s, drawId);
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) latencies.push(landed[i]! - sent[i]!);
  for (let i = count; i < FLOOD; i++) latencies.push(Infinity);
  return { p99: percentile(latencies, 99), max: Math.max(...latencies), landed: count, worstLoopMs };
}

export async function run(): Promise<BenchResult[]> {
  const s = await startBenchStack();
  const rawServer = await startChatServer({ logger: silentLogger() });
  try {
    const ourLines = enterLines(s.chatServer, USERS);
    const rawLines = enterLines(rawServer, USERS);
    // Warm-up (JIT) for both sides, not measured: the first 20,000 lines are 20,000 distinct
    // viewers (every viewer's first line comes before any second one). The real bot's side was
    // not warmed before, so its first round paid its compile time alone.
    const WARM = Math.min(20_000, USERS);
    await rawRound(rawServer, rawLines.slice(0, WARM));
    gc();
    await oursRound(s, ourLines.slice(0, WARM), WARM);
    gc();
    const ratios: number[] = [];
    const raws: number[] = [];
    const ours: number[] = [];
    const heaps: number[] = [];
    const loops: number[] = [];
    const rawLoops: number[] = [];
    // The bare client's round, with the worst event-loop delay during it (the same sandbox send).
    const bareRound = async (): Promise<number> => {
      const loop = new LoopDelay();
      loop.start();
      const rate = await rawRound(rawServer, rawLines);
      rawLoops.push(loop.stop());
      return rate;
    };
    for (let r = 0; r < ROUNDS; r++) {
      process.stderr.write(`  chat round ${r + 1}/${ROUNDS} (${loadNote()})\n`);
      let raw: number;
      let o: Awaited<ReturnType<typeof oursRound>>;
      if (r % 2 === 0) {
        raw = await bareRound();
        gc();
        o = await oursRound(s, ourLines);
      } else {
        o = await oursRound(s, ourLines);
        gc();
        raw = await bareRound();
      }
      gc();
      ratios.push(o.rate / raw);
      raws.push(raw);
      ours.push(o.rate);
      heaps.push(o.heapPerEntrant);
      loops.push(o.worstLoopMs);
    }
    process.stderr.write(`  durability flood (${FLOOD} lines, ${loadNote()})\n`);
    const d = await durability(s);
    const ratio = median(ratios);
    const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
    return [
      {
        name: 'e2e.chat.ingestRatioToTmi',
        value: Number(ratio.toFixed(3)),
        unit: 'x',
        target: '>= 0.9',
        ok: ratio >= 0.9,
        detail: `median of ${ROUNDS} rounds (${fmt(ratios)}); ${LINES + 1} !enter lines, ${USERS + 1} entrants per round; real bot vs bare tmi.js; ${loadNote()}${quick}`,
      },
      { name: 'e2e.chat.ingestRate', value: Math.round(median(ours)), unit: 'msg/s', detail: `real bot, median of ${ROUNDS}${quick}` },
      { name: 'e2e.chat.tmiRawRate', value: Math.round(median(raws)), unit: 'msg/s', detail: `bare tmi.js client counting message events, median of ${ROUNDS}${quick}` },
      {
        name: 'e2e.chat.worstLoopDelay',
        value: Math.round(Math.max(...loops)),
        unit: 'ms',
        detail: `worst event-loop delay while the real bot took the lines (${loops.map((x) => x.toFixed(0)).join(' ')}); bare tmi.js in the same rounds: ${rawLoops.map((x) => x.toFixed(0)).join(' ')} (both include the sandbox writing the round's lines to its socket in one synchronous call)${quick}`,
      },
      {
        name: 'e2e.chat.heapPerEntrant',
        value: Math.round(median(heaps)),
        unit: 'bytes',
        detail: `heap growth after gc / distinct entrants over one round through the socket (median of ${ROUNDS})${quick}`,
      },
      {
        name: 'e2e.entryDurabilityP99',
        value: Number(d.p99.toFixed(1)),
        unit: 'ms',
        target: '<= 100',
        ok: d.p99 <= 100,
        detail: `${FLOOD}-line flood (${FLOOD_BATCH} lines / ${FLOOD_EVERY_MS} ms) through the socket, sent -> line in the journal file (tailed from a worker); ${d.landed} landed, max ${d.max.toFixed(0)} ms, worst loop delay ${d.worstLoopMs.toFixed(0)} ms; ${loadNote()}${quick}`,
      },
    ];
  } finally {
    await rawServer.close();
    await s.dispose();
  }
}
