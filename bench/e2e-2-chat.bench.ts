/**
 * Chat into the product as it runs (the real bot's TwitchChat on a real tmi.js socket -> the real
 * command registry and `!enter` command -> GiveawayEngine with an open gift draw -> the file
 * journal), side by side with a bare tmi.js client in the same run. Both chat sandboxes (the bot's,
 * with the local Helix API on its port, and the bare client's) run on a worker thread of their own
 * (bench/chat-sandboxes.ts), which also builds the lines, so their work is not on the bot's thread;
 * the bot and the Fourthwall sandbox run on this one (startBotOnChat), as startLocalStack wires them.
 * - ingestion: 100,000 `!enter` lines from 50,000 distinct viewers per round, cut into 4 chunks:
 *   chunks 0 and 1 are every viewer's first line (new entrants), chunks 2 and 3 the same viewers
 *   again (repeats: no entry, no journal write), each ended by its own sentinel viewer (lines are handled in order, so the sentinel's entry, or
 *   for the bare client its line's count, means every line of the chunk was handled). The two
 *   sides take their chunks in turn, ABBA within a round (which side opens alternates between
 *   rounds), so both sample the same stretches of a shared machine's load; a bot chunk ends once
 *   its entries are journaled and synced (repo.flush), so none of its work spills into the bare
 *   client's span; a full gc() runs before each side's chunk (outside its span), so a collection
 *   of the other side's garbage never lands in it; each side's rate is its lines over the sum of
 *   its chunk times. The rows are the CPU time per line of the bot over the bare client's, one for
 *   the new entrants' chunks (the target) and one for the repeats', median of 7 rounds, the
 *   sandboxes excluded: this process's CPU over a side's
 *   chunks (every thread: the bot's or client's, V8's helpers, libuv's pool) minus what the
 *   sandboxes' thread spent in the same span (process.threadCpuUsage there). This thread's CPU
 *   alone is given beside it. A wall-clock ratio measured parallelism rather than cost, so it is
 *   not the target;
 * - heap per distinct entrant on that path (JS heap plus array buffers of this thread, growth after
 *   gc over one round);
 * - entry durability: a 50,000-line flood of new viewers (50 lines every 10 ms, 5,000 lines/s: far
 *   above a busy channel, within what a bare tmi.js client takes here); the bot's storage runs on
 *   this machine's file system wrapped to stamp each journal line when the datasync that covers it
 *   completes (SyncStamps); latency = synced - sent (stamped before the batch is handed to the
 *   sandboxes' thread), p99.
 * Needs process.threadCpuUsage (Node 22.19+, 23.9+).
 */
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { fileStem } from '../src/storage/files.js';
import { nodeFileSystem, type FileSystem } from '../src/storage/disk.js';
import {
  LoopDelay,
  QUICK,
  gc,
  loadNote,
  median,
  openGiftDraw,
  percentile,
  startBotOnChat,
  type BotStack,
} from './e2e-support.js';
import { CountWait } from './bare-tmi.js';
import { startChatSandboxes, type ChatSandboxes, type RemoteChat } from './chat-sandboxes.js';
import { closeDraw, joinBareClient } from './chat-support.js';
import type { BenchResult } from './types.js';

const USERS = QUICK ? 10_000 : 50_000;
const LINES = USERS * 2;
const ROUNDS = QUICK ? 3 : 7;
const FLOOD = QUICK ? 10_000 : 50_000;
const FLOOD_BATCH = 50;
const FLOOD_EVERY_MS = 10;
const CHUNKS = 4;
const PER_CHUNK = LINES / CHUNKS;
// Warm-up (JIT) for both sides, not measured: the first 20,000 lines of a round.
const WARM = Math.min(20_000, USERS);
const quick = QUICK ? ' (BENCH_QUICK sizes)' : '';

/**
 * The viewer numbers of a round's chunk `k` (every viewer's first line before any second; viewers
 * 0..USERS-1), ended by its own sentinel viewer USERS + k.
 */
function chunkOrder(k: number): Int32Array {
  const order = new Int32Array(PER_CHUNK + 1);
  for (let i = 0; i < PER_CHUNK; i++) order[i] = (k * PER_CHUNK + i) % USERS;
  order[PER_CHUNK] = USERS + k;
  return order;
}

/** Builds on `chat` the lists `chunk0`.. of a round and `warm` (the first WARM lines of a round). */
async function makeRoundLines(chat: RemoteChat): Promise<void> {
  const orders = Array.from({ length: CHUNKS }, (_, k) => chunkOrder(k));
  for (const [k, order] of orders.entries()) await chat.make(`chunk${k}`, 'viewer_', USERS + CHUNKS, order);
  const all = new Int32Array(CHUNKS * (PER_CHUNK + 1));
  orders.forEach((order, k) => all.set(order, k * (PER_CHUNK + 1)));
  await chat.make('warm', 'viewer_', USERS + CHUNKS, all.slice(0, WARM));
}

/** Warm-up of the bot's path (not measured): the `warm` list into a draw, closed after. */
async function warmBot(s: BotStack, chat: RemoteChat): Promise<void> {
  const drawId = await openGiftDraw(s, 5);
  const wait = new CountWait();
  s.bot.engine.events.on('entered', wait.poke);
  await chat.inject('warm');
  await wait.until(() => s.bot.engine.entrantCount(drawId) ?? 0, WARM);
  s.bot.engine.events.off('entered', wait.poke);
  await closeDraw(s, drawId);
}

/** Warm-up of the bare client's path (not measured): the `warm` list to a bare client. */
async function warmBare(chat: RemoteChat): Promise<void> {
  const bare = await joinBareClient(chat);
  const wait = new CountWait();
  let seen = 0;
  bare.client.on('message', () => {
    seen++;
    wait.poke();
  });
  await chat.inject('warm');
  await wait.until(() => seen, WARM);
  await bare.close();
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
            while (this.syncedCount < covered && this.syncedCount < this.synced.length)
              this.synced[this.syncedCount++] = at;
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

async function durability(
  s: BotStack,
  chat: RemoteChat,
  stamps: SyncStamps,
): Promise<{ p99: number; max: number; landed: number; worstLoopMs: number }> {
  await chat.make(
    'flood',
    'flood_',
    FLOOD,
    Int32Array.from({ length: FLOOD }, (_, i) => i),
  );
  const drawId = await openGiftDraw(s, 5);
  const file = join(s.dataDir, 'journal', `${fileStem(drawId)}.jsonl`);
  const result = stamps.watch(file, FLOOD, 120_000);
  const sent = new Float64Array(FLOOD);
  const handedOver: Promise<number>[] = [];
  const loop = new LoopDelay();
  await loop.start();
  for (let i = 0; i < FLOOD; i += FLOOD_BATCH) {
    const to = Math.min(FLOOD, i + FLOOD_BATCH);
    sent.fill(performance.timeOrigin + performance.now(), i, to);
    handedOver.push(chat.inject('flood', i, to));
    await new Promise((resolve) => setTimeout(resolve, FLOOD_EVERY_MS));
  }
  await Promise.all(handedOver);
  const { landed, count } = await result;
  const worstLoopMs = await loop.stop();
  await nextTurn();
  await closeDraw(s, drawId);
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) latencies.push(landed[i]! - sent[i]!);
  for (let i = count; i < FLOOD; i++) latencies.push(Infinity);
  return { p99: percentile(latencies, 99), max: Math.max(...latencies), landed: count, worstLoopMs };
}

/** CPU time (us, user + system) since `start`: this process's, or this thread's. */
const cpuSince = (start: NodeJS.CpuUsage): number => {
  const c = process.cpuUsage(start);
  return c.user + c.system;
};
const threadCpuSince = (start: NodeJS.CpuUsage): number => {
  const c = process.threadCpuUsage(start);
  return c.user + c.system;
};

interface Side {
  lines: number;
  ms: number;
  loopMs: number;
  /** This process's CPU minus the sandboxes' thread's (us). */
  cpuUs: number;
  /** This thread's CPU alone (us). */
  threadCpuUs: number;
  /** The sandboxes' thread's CPU (us), excluded. */
  sandboxCpuUs: number;
}

interface RoundResult {
  /** CPU per line (us, sandboxes excluded) over the new entrants' chunks and over the repeats'. */
  oursNewCpuUs: number;
  bareNewCpuUs: number;
  oursRepeatCpuUs: number;
  bareRepeatCpuUs: number;
  ours: number;
  bare: number;
  oursLoopMs: number;
  bareLoopMs: number;
  /** Per line (us): the side's CPU with the sandboxes excluded, this thread's alone, the sandboxes'. */
  oursCpuUs: number;
  bareCpuUs: number;
  oursThreadCpuUs: number;
  bareThreadCpuUs: number;
  oursSandboxCpuUs: number;
  bareSandboxCpuUs: number;
  heapPerEntrant: number;
}

/**
 * One round: the real bot (an open gift draw) and a bare tmi.js client take their chunks in turn,
 * ABBA (`bareFirst`: which side opens). Rates are lines per second over each side's chunk times;
 * CPU per line over the same spans (the sandboxes' thread subtracted); worst loop delays per side;
 * heap growth after gc per distinct entrant of the bot's draw.
 */
async function pairedRound(s: BotStack, sandboxes: ChatSandboxes, bareFirst: boolean): Promise<RoundResult> {
  const drawId = await openGiftDraw(s, 5);
  const bare = await joinBareClient(sandboxes.bare);
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
  const newSide = (): Side => ({ lines: 0, ms: 0, loopMs: 0, cpuUs: 0, threadCpuUs: 0, sandboxCpuUs: 0 });
  const bareSide = newSide();
  const ourSide = newSide();
  // The same spans split by what the chunk's lines are: first lines (new entrants) or repeats.
  const kinds = { new: { ours: newSide(), bare: newSide() }, repeat: { ours: newSide(), bare: newSide() } };
  // Sends one chunk from `chat` and adds its lines, time, CPU and worst loop delay to `side` once `handled` resolves.
  const take = async (side: Side, chat: RemoteChat, k: number, handled: () => Promise<void>) => {
    gc(); // (outside the span: a collection of the other side's garbage never lands in this one)
    await loop.start();
    const kind = kinds[k < CHUNKS / 2 ? 'new' : 'repeat'][side === ourSide ? 'ours' : 'bare'];
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const thread0 = process.threadCpuUsage();
    side.lines += PER_CHUNK + 1;
    const sandbox0 = await chat.inject(`chunk${k}`);
    await handled();
    side.ms += performance.now() - t0;
    const cpu = cpuSince(cpu0);
    side.threadCpuUs += threadCpuSince(thread0);
    const sandbox = (await sandboxes.threadCpuUs()) - sandbox0;
    side.sandboxCpuUs += sandbox;
    side.cpuUs += cpu - sandbox;
    kind.lines += PER_CHUNK + 1;
    kind.cpuUs += cpu - sandbox;
    side.loopMs = Math.max(side.loopMs, await loop.stop());
  };
  for (let k = 0; k < CHUNKS; k++) {
    // (the first USERS lines are distinct viewers; every chunk adds its sentinel)
    const entrants = Math.min(USERS, (k + 1) * PER_CHUNK) + k + 1;
    const takeBare = () => take(bareSide, sandboxes.bare, k, () => wait.until(() => seen, bareSide.lines));
    // (the bot's chunk ends once its entries are journaled and synced, so its journal work does not
    // spill into the bare client's next span)
    const takeOurs = () =>
      take(ourSide, sandboxes.bot, k, async () => {
        await wait.until(() => s.bot.engine.entrantCount(drawId) ?? 0, entrants);
        await s.bot.repo.flush();
      });
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
  const perLine = (x: Side) => x.cpuUs / x.lines;
  return {
    oursNewCpuUs: perLine(kinds.new.ours),
    bareNewCpuUs: perLine(kinds.new.bare),
    oursRepeatCpuUs: perLine(kinds.repeat.ours),
    bareRepeatCpuUs: perLine(kinds.repeat.bare),
    ours: ourSide.lines / (ourSide.ms / 1000),
    bare: bareSide.lines / (bareSide.ms / 1000),
    oursLoopMs: ourSide.loopMs,
    bareLoopMs: bareSide.loopMs,
    oursCpuUs: ourSide.cpuUs / ourSide.lines,
    bareCpuUs: bareSide.cpuUs / bareSide.lines,
    oursThreadCpuUs: ourSide.threadCpuUs / ourSide.lines,
    bareThreadCpuUs: bareSide.threadCpuUs / bareSide.lines,
    oursSandboxCpuUs: ourSide.sandboxCpuUs / ourSide.lines,
    bareSandboxCpuUs: bareSide.sandboxCpuUs / bareSide.lines,
    heapPerEntrant,
  };
}

export async function run(): Promise<BenchResult[]> {
  if (typeof process.threadCpuUsage !== 'function')
    throw new Error(
      `bench: e2e-2-chat needs process.threadCpuUsage (Node 22.19+ or 23.9+; this is ${process.version}): run it on Node 24`,
    );
  const stamps = new SyncStamps();
  const sandboxes = await startChatSandboxes();
  let s: BotStack | undefined;
  try {
    s = await startBotOnChat(sandboxes.bot, { fileSystem: stamps.fs });
    await makeRoundLines(sandboxes.bot);
    await makeRoundLines(sandboxes.bare);
    await warmBare(sandboxes.bare);
    gc();
    await warmBot(s, sandboxes.bot);
    gc();
    const rounds: RoundResult[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      process.stderr.write(`  chat round ${r + 1}/${ROUNDS} (${loadNote()})\n`);
      rounds.push(await pairedRound(s, sandboxes, r % 2 === 0));
      gc();
    }
    process.stderr.write(`  durability flood (${FLOOD} lines, ${loadNote()})\n`);
    const d = await durability(s, sandboxes.bot, stamps);
    const of = (key: keyof RoundResult) => rounds.map((p) => p[key]);
    const cpuRatio = median(of('oursCpuUs')) / median(of('bareCpuUs'));
    const threadRatio = median(of('oursThreadCpuUs')) / median(of('bareThreadCpuUs'));
    const newRatio = median(of('oursNewCpuUs')) / median(of('bareNewCpuUs'));
    const repeatRatio = median(of('oursRepeatCpuUs')) / median(of('bareRepeatCpuUs'));
    const fmt = (xs: number[], digits = 2) => xs.map((x) => x.toFixed(digits)).join(' ');
    const us = (key: keyof RoundResult) => median(of(key)).toFixed(2);
    return [
      {
        name: 'e2e.chat.newEntrantsCpuToTmi',
        value: Number(newRatio.toFixed(3)),
        unit: 'x',
        target: '<= 1.5',
        ok: newRatio <= 1.5,
        detail:
          `CPU time per !enter line of a viewer not seen before (an entry, its journal line, the synced journal), real bot / bare tmi.js, chat sandboxes excluded: ${us('oursNewCpuUs')} / ${us('bareNewCpuUs')} us (medians of ${ROUNDS} rounds; per round: ${fmt(rounds.map((p) => p.oursNewCpuUs / p.bareNewCpuUs))}); ` +
          `${USERS + 2} such lines per round (chunks 0 and 1); this process's CPU over each side's chunks (process.cpuUsage, every thread, GC included; a full gc() before each chunk, outside it) minus the sandboxes' worker thread's; ` +
          `all lines together (half repeats): ${cpuRatio.toFixed(3)}x (${us('oursCpuUs')} / ${us('bareCpuUs')} us), this thread alone ${threadRatio.toFixed(3)}x; sandboxes' thread ${us('oursSandboxCpuUs')} / ${us('bareSandboxCpuUs')} us per line; ${loadNote()}${quick}`,
      },
      {
        name: 'e2e.chat.repeatsCpuToTmi',
        value: Number(repeatRatio.toFixed(3)),
        unit: 'x',
        detail: `CPU time per !enter line of a viewer already entered (no entry, no journal write), real bot / bare tmi.js, same rounds: ${us('oursRepeatCpuUs')} / ${us('bareRepeatCpuUs')} us (per round: ${fmt(rounds.map((p) => p.oursRepeatCpuUs / p.bareRepeatCpuUs))}); ${USERS + 2} such lines per round (chunks 2 and 3)${quick}`,
      },
      {
        name: 'e2e.chat.ingestRate',
        value: Math.round(median(of('ours'))),
        unit: 'msg/s',
        detail: `real bot, a chunk's lines entered and journaled (synced), chat sandbox on its own thread, median of ${ROUNDS}; ratio to the bare client per round: ${fmt(rounds.map((p) => p.ours / p.bare))}${quick}`,
      },
      {
        name: 'e2e.chat.tmiRawRate',
        value: Math.round(median(of('bare'))),
        unit: 'msg/s',
        detail: `bare tmi.js client counting message events, chat sandbox on its own thread, median of ${ROUNDS}${quick}`,
      },
      {
        name: 'e2e.chat.worstLoopDelay',
        value: Math.round(Math.max(...of('oursLoopMs'))),
        unit: 'ms',
        detail: `worst event-loop delay while the real bot took the lines (${fmt(of('oursLoopMs'), 0)}); bare tmi.js in the same rounds: ${fmt(of('bareLoopMs'), 0)} (the chat sandboxes write on their own thread)${quick}`,
      },
      {
        name: 'e2e.chat.heapPerEntrant',
        value: Math.round(median(of('heapPerEntrant'))),
        unit: 'bytes',
        detail: `growth after gc of this thread's JS heap plus array buffers (the entrants' typed-array columns) / distinct entrants over one round through the socket (median of ${ROUNDS})${quick}`,
      },
      {
        name: 'e2e.entryDurabilityP99',
        value: Number(d.p99.toFixed(1)),
        unit: 'ms',
        target: '<= 100',
        ok: d.p99 <= 100,
        detail: `${FLOOD}-line flood (${FLOOD_BATCH} lines / ${FLOOD_EVERY_MS} ms) through the socket from the chat sandbox's own thread, sent (handed to that thread) -> the journal's datasync covering the line completed; ${d.landed} landed, max ${d.max.toFixed(0)} ms, worst loop delay ${d.worstLoopMs.toFixed(0)} ms; ${loadNote()}${quick}`,
      },
    ];
  } finally {
    await s?.dispose();
    await sandboxes.close();
  }
}
