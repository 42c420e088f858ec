/**
 * Chat into the product as it runs (startLocalStack: the real bot's TwitchChat on a real tmi.js
 * socket -> the real command registry and `!enter` command -> GiveawayEngine with an open gift
 * draw -> the file journal), side by side with a bare tmi.js client on a second chat sandbox in
 * the same run:
 * - ingestion: 100,000 `!enter` lines from 50,000 distinct viewers per round, cut into 4 chunks,
 *   each ended by its own sentinel viewer (lines are handled in order, so the sentinel's entry, or
 *   for the bare client its line's count, means every line of the chunk was handled). The two
 *   sides take their chunks in turn, ABBA within a round (which side opens alternates between
 *   rounds), so both sample the same stretches of a shared machine's load; each side's rate is its
 *   lines over the sum of its chunk times. The target row is the CPU time per line (the whole
 *   process, every thread) of the bot over the bare client's, median of 7 rounds: a wall-clock
 *   ratio measured parallelism (a second thread) rather than cost, so it is no longer the target;
 * - heap per distinct entrant on that path (JS heap plus array buffers, growth after gc over one round);
 * - entry durability: a 50,000-line flood of new viewers (50 lines every 10 ms, 5,000 lines/s: far
 *   above a busy channel, within what a bare tmi.js client takes here); the bot's storage runs on
 *   this machine's file system wrapped to stamp each journal line when the datasync that covers it
 *   completes (SyncStamps); latency = synced - sent, p99.
 */
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { silentLogger } from '../src/logging/index.js';
import { startChatServer, type ChatServer } from '../src/sandbox/chat/index.js';
import { fileStem } from '../src/storage/files.js';
import { nodeFileSystem, type FileSystem } from '../src/storage/disk.js';
import { LoopDelay, QUICK, gc, loadNote, median, openGiftDraw, percentile, startBenchStack, type BenchStack } from './e2e-support.js';
import { CountWait, rawRound } from './bare-tmi.js';
import { closeDraw, flat, joinBareClient, viewers } from './chat-support.js';
import type { BenchResult } from './types.js';

const USERS = QUICK ? 10_000 : 50_000;
const LINES = USERS * 2;
const ROUNDS = QUICK ? 3 : 7;
const FLOOD = QUICK ? 10_000 : 50_000;
const FLOOD_BATCH = 50;
const FLOOD_EVERY_MS = 10;
const quick = QUICK ? ' (BENCH_QUICK sizes)' : '';

/** Warm-up of the bot's path (not measured): `lines` of `entrants` distinct viewers into a draw, closed after. */
async function warmBot(s: BenchStack, lines: string[], entrants: number): Promise<void> {
  const drawId = await openGiftDraw(s, 5);
  const wait = new CountWait();
  s.bot.engine.events.on('entered', wait.poke);
  s.chatServer.injectRaw(lines);
  await wait.until(() => s.bot.engine.entrantCount(drawId) ?? 0, entrants);
  s.bot.engine.events.off('entered', wait.poke);
  await closeDraw(s, drawId);
}


/**
 * This machine's file system (the storage's real one), stamping the lines of one watched file when
 * the datasync that covers them completes: `synced[i]` is when line i was on the disk.
 */
class SyncStamps {
  private watched: string | undefined;
  private written = 0;
  private syncedCount = 0;
  private synced = new Float64Array(0);
  private done: (() => void) | undefined;
  private want = 0;
  readonly fs: FileSystem;

  constructor() {
    const real = nodeFileSystem(process.platform);
    this.fs = {
      ...real,
      openAppend: async (path) => {
        const file = await real.openAppend(path);
        if (path !== this.watched) return file;
        return {
          ...file,
          write: async (data) => {
            await file.write(data);
            for (const b of data) if (b === 10) this.written += 1;
          },
          datasync: async () => {
            const covered = this.written;
            await file.datasync();
            const at = performance.timeOrigin + performance.now();
            while (this.syncedCount < covered && this.syncedCount < this.synced.length) this.synced[this.syncedCount++] = at;
            if (this.syncedCount >= this.want) this.done?.();
          },
        };
      },
    };
  }

  /** Watches `file` for `lines` lines; resolves with the stamps once all are synced or after `timeoutMs`. */
  watch(file: string, lines: number, timeoutMs: number): Promise<{ landed: Float64Array; count: number }> {
    this.watched = file;
    this.written = 0;
    this.syncedCount = 0;
    this.synced = new Float64Array(lines);
    this.want = lines;
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.done?.(), timeoutMs);
      this.done = () => {
        clearTimeout(timer);
        this.done = undefined;
        resolve({ landed: this.synced, count: this.syncedCount });
      };
    });
  }
}

async function durability(s: BenchStack, stamps: SyncStamps): Promise<{ p99: number; max: number; landed: number; worstLoopMs: number }> {
  const flood = viewers(s.chatServer, 'flood_', FLOOD).map((v) => flat(s.chatServer.formatPrivmsg(v, '!enter')));
  const drawId = await openGiftDraw(s, 5);
  const file = join(s.dataDir, 'journal', `${fileStem(drawId)}.jsonl`);
  const result = stamps.watch(file, FLOOD, 120_000);
  const sent = new Float64Array(FLOOD);
  const loop = new LoopDelay();
  await loop.start();
  for (let i = 0; i < FLOOD; i += FLOOD_BATCH) {
    const batch = flood.slice(i, i + FLOOD_BATCH);
    const at = performance.timeOrigin + performance.now();
    s.chatServer.injectRaw(batch);
    sent.fill(at, i, i + batch.length);
    await new Promise((resolve) => setTimeout(resolve, FLOOD_EVERY_MS));
  }
  const { landed, count } = await result;
  const worstLoopMs = await loop.stop();
  await nextTurn();
  await closeDraw(s, drawId);
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) latencies.push(landed[i]! - sent[i]!);
  for (let i = count; i < FLOOD; i++) latencies.push(Infinity);
  return { p99: percentile(latencies, 99), max: Math.max(...latencies), landed: count, worstLoopMs };
}

const CHUNKS = 4;
const PER_CHUNK = LINES / CHUNKS;

/** A round's lines for `server` in CHUNKS chunks (every viewer's first line before any second), each ended by its own sentinel viewer's line. */
function chunkedLines(server: ChatServer): string[][] {
  const vs = viewers(server, 'viewer_', USERS + CHUNKS);
  const ends = vs.splice(USERS);
  const chunks: string[][] = [];
  for (let k = 0; k < CHUNKS; k++) {
    const chunk: string[] = [];
    for (let i = k * PER_CHUNK; i < (k + 1) * PER_CHUNK; i++) chunk.push(flat(server.formatPrivmsg(vs[i % USERS]!, '!enter')));
    chunk.push(flat(server.formatPrivmsg(ends[k]!, '!enter')));
    chunks.push(chunk);
  }
  return chunks;
}

/**
 * One round: the real bot (an open gift draw) and a bare tmi.js client take their chunks in turn,
 * ABBA (`bareFirst`: which side opens). Rates are lines per second over each side's chunk times;
 * worst loop delays per side; heap growth after gc per distinct entrant of the bot's draw.
 */
async function pairedRound(
  s: BenchStack,
  rawServer: ChatServer,
  ourChunks: string[][],
  rawChunks: string[][],
  bareFirst: boolean,
): Promise<{ ours: number; bare: number; oursLoopMs: number; bareLoopMs: number; oursCpuUs: number; bareCpuUs: number; heapPerEntrant: number }> {
  const drawId = await openGiftDraw(s, 5);
  const bare = await joinBareClient(rawServer);
  // Both sides' waits are woken by their own events (the bare client's lines, the bot's new
  // entrants), never polled: a polling wait would spin the main thread the bot's chat runs on.
  const wait = new CountWait();
  let seen = 0;
  bare.client.on('message', () => {
    seen++;
    wait.poke();
  });
  s.bot.engine.events.on('entered', wait.poke);
  gc();
  const held = () => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  const heapBefore = held();
  const loop = new LoopDelay();
  const bareSide = { lines: 0, ms: 0, loopMs: 0, cpuUs: 0 };
  const ourSide = { lines: 0, ms: 0, loopMs: 0, cpuUs: 0 };
  // Sends one chunk and adds its lines, time and worst loop delay to `side` once `handled` resolves.
  const take = async (side: typeof bareSide, server: ChatServer, chunk: string[], handled: () => Promise<void>) => {
    await loop.start();
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    side.lines += chunk.length;
    server.injectRaw(chunk);
    await handled();
    side.ms += performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    side.cpuUs += cpu.user + cpu.system;
    side.loopMs = Math.max(side.loopMs, await loop.stop());
  };
  for (let k = 0; k < CHUNKS; k++) {
    // (the first USERS lines are distinct viewers; every chunk adds its sentinel)
    const entrants = Math.min(USERS, (k + 1) * PER_CHUNK) + k + 1;
    const takeBare = () => take(bareSide, rawServer, rawChunks[k]!, () => wait.until(() => seen, bareSide.lines));
    const takeOurs = () => take(ourSide, s.chatServer, ourChunks[k]!, () => wait.until(() => s.bot.engine.entrantCount(drawId) ?? 0, entrants));
    if ((k % 2 === 0) === bareFirst) {
      await takeBare();
      await takeOurs();
    } else {
      await takeOurs();
      await takeBare();
    }
  }
  s.bot.engine.events.off('entered', wait.poke);
  await bare.close();
  await s.bot.repo.flush();
  gc();
  const entrants = s.bot.engine.entrantCount(drawId) ?? 0;
  const heapPerEntrant = (held() - heapBefore) / entrants;
  await closeDraw(s, drawId);
  return {
    ours: ourSide.lines / (ourSide.ms / 1000),
    bare: bareSide.lines / (bareSide.ms / 1000),
    oursLoopMs: ourSide.loopMs,
    bareLoopMs: bareSide.loopMs,
    oursCpuUs: ourSide.cpuUs / ourSide.lines,
    bareCpuUs: bareSide.cpuUs / bareSide.lines,
    heapPerEntrant,
  };
}

export async function run(): Promise<BenchResult[]> {
  const stamps = new SyncStamps();
  const s = await startBenchStack(3600, { fileSystem: stamps.fs });
  const rawServer = await startChatServer({ logger: silentLogger() });
  try {
    const ourChunks = chunkedLines(s.chatServer);
    const rawChunks = chunkedLines(rawServer);
    // Warm-up (JIT) for both sides, not measured: the first 20,000 lines are 20,000 distinct
    // viewers (every viewer's first line comes before any second one). The real bot's side was
    // not warmed before, so its first round paid its compile time alone.
    const WARM = Math.min(20_000, USERS);
    await rawRound(rawServer, rawChunks.flat().slice(0, WARM));
    gc();
    await warmBot(s, ourChunks.flat().slice(0, WARM), WARM);
    gc();
    const ratios: number[] = [];
    const raws: number[] = [];
    const ours: number[] = [];
    const heaps: number[] = [];
    const loops: number[] = [];
    const rawLoops: number[] = [];
    const ourCpu: number[] = [];
    const bareCpu: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      process.stderr.write(`  chat round ${r + 1}/${ROUNDS} (${loadNote()})\n`);
      const p = await pairedRound(s, rawServer, ourChunks, rawChunks, r % 2 === 0);
      gc();
      ratios.push(p.ours / p.bare);
      raws.push(p.bare);
      ours.push(p.ours);
      heaps.push(p.heapPerEntrant);
      loops.push(p.oursLoopMs);
      rawLoops.push(p.bareLoopMs);
      ourCpu.push(p.oursCpuUs);
      bareCpu.push(p.bareCpuUs);
    }
    process.stderr.write(`  durability flood (${FLOOD} lines, ${loadNote()})\n`);
    const d = await durability(s, stamps);
    const cpuRatios = ourCpu.map((c, i) => c / bareCpu[i]!);
    const cpuRatio = median(ourCpu) / median(bareCpu);
    const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
    return [
      {
        name: 'e2e.chat.cpuPerLineToTmi',
        value: Number(cpuRatio.toFixed(3)),
        unit: 'x',
        target: '<= 1.5',
        ok: cpuRatio <= 1.5,
        detail: `CPU time per !enter line, real bot / bare tmi.js: ${median(ourCpu).toFixed(2)} / ${median(bareCpu).toFixed(2)} us (medians of ${ROUNDS} rounds: ${fmt(cpuRatios)}); process.cpuUsage (every thread summed) over each side's chunks, which includes the chat sandbox writing the lines in this process (the same for both sides); ${LINES + CHUNKS} !enter lines, ${USERS + CHUNKS} entrants per round in ${CHUNKS} chunks taken ABBA; ${loadNote()}${quick}`,
      },
      { name: 'e2e.chat.ingestRate', value: Math.round(median(ours)), unit: 'msg/s', detail: `real bot, median of ${ROUNDS}; ratio to the bare client per round: ${fmt(ratios)}${quick}` },
      { name: 'e2e.chat.tmiRawRate', value: Math.round(median(raws)), unit: 'msg/s', detail: `bare tmi.js client counting message events, median of ${ROUNDS}${quick}` },
      {
        name: 'e2e.chat.worstLoopDelay',
        value: Math.round(Math.max(...loops)),
        unit: 'ms',
        detail: `worst event-loop delay while the real bot took the lines (${loops.map((x) => x.toFixed(0)).join(' ')}); bare tmi.js in the same rounds: ${rawLoops.map((x) => x.toFixed(0)).join(' ')} (both include the sandbox writing a chunk's lines to its socket in one synchronous call)${quick}`,
      },
      {
        name: 'e2e.chat.heapPerEntrant',
        value: Math.round(median(heaps)),
        unit: 'bytes',
        detail: `growth after gc of the JS heap plus array buffers (the entrants' typed-array columns) / distinct entrants over one round through the socket (median of ${ROUNDS})${quick}`,
      },
      {
        name: 'e2e.entryDurabilityP99',
        value: Number(d.p99.toFixed(1)),
        unit: 'ms',
        target: '<= 100',
        ok: d.p99 <= 100,
        detail: `${FLOOD}-line flood (${FLOOD_BATCH} lines / ${FLOOD_EVERY_MS} ms) through the socket, sent -> the journal's datasync covering the line completed; ${d.landed} landed, max ${d.max.toFixed(0)} ms, worst loop delay ${d.worstLoopMs.toFixed(0)} ms; ${loadNote()}${quick}`,
      },
    ];
  } finally {
    await rawServer.close();
    await s.dispose();
  }
}
