/**
 * What the end-to-end benchmarks share: the whole product on this machine (startLocalStack: the
 * Fourthwall sandbox, the chat sandbox and the real bot with its file storage, journal and HTTP
 * server, all on 127.0.0.1), opening a real gift draw through a sandbox purchase and its signed
 * webhook (startBotOnChat: the same bot and Fourthwall sandbox on a chat sandbox run elsewhere,
 * e.g. on another thread), entering viewers through the engine's real entry call, probing `/healthz` from a
 * worker thread (its own event loop, so a stalled bot shows as slow answers), and the event
 * loop's worst delay. `BENCH_QUICK=1` shrinks the sizes for a smoke run (rows say so).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import {
  configForLocal,
  registerBotWebhook,
  startLocalStack,
  type ChatEndpoint,
  type LocalStack,
} from '../src/local/local-stack.js';
import { startBot, type Bot } from '../src/app/bot.js';
import { loadConfig, type Config } from '../src/config/index.js';
import { fileSchema } from '../src/config/schema.js';
import type { DrawRecord } from '../src/giveaway/model.js';
import type { FileSystem } from '../src/storage/disk.js';
import { silentLogger } from '../src/logging/index.js';
import { startFourthwallSandbox, type FourthwallSandbox, type RequestRecord } from '../src/sandbox/fourthwall/index.js';
import { noRoles, type ChatMessage } from '../src/shared/chat.js';

export const QUICK = process.env['BENCH_QUICK'] === '1';

export function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/**
 * Memory held after collecting garbage (gc three times, letting finalizers run in between): the
 * JS heap plus ArrayBuffer memory (typed-array columns live there, outside heapUsed).
 */
export async function heldMemory(): Promise<{ heap: number; arrayBuffers: number }> {
  for (let i = 0; i < 3; i++) {
    gc();
    await nextTurn();
  }
  const m = process.memoryUsage();
  return { heap: m.heapUsed, arrayBuffers: m.arrayBuffers };
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

/** The machine's 1-minute load average, for the detail column (2 cores shared with other work). */
export function loadNote(): string {
  return `load ${loadavg()[0]!.toFixed(1)}`;
}

export interface BenchStack extends LocalStack {
  dataDir: string;
  /** Stops everything and removes the data directory. */
  dispose(): Promise<void>;
}

/** The bot and the Fourthwall sandbox of a bench whose chat sandbox runs elsewhere (startBotOnChat). */
export interface BotStack {
  fourthwall: FourthwallSandbox;
  bot: Bot;
  dataDir: string;
  /** Stops the bot and the Fourthwall sandbox and removes the data directory. */
  dispose(): Promise<void>;
}

/**
 * Runs `start` on the bench's Config in a new temporary data directory (`settings`: the settings
 * file's content); the result's `dispose` stops the stack (`stop`) then removes the directory.
 */
async function withBenchData<T extends object>(
  settings: Record<string, unknown> | undefined,
  start: (config: Config) => Promise<T>,
  stop: (stack: T) => Promise<void>,
  env: Record<string, string> = {},
): Promise<T & { dataDir: string; dispose(): Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), 'giftdrop-bench-'));
  try {
    const base = loadConfig({
      env: { ...env, DATA_DIR: root, HTTP_PORT: '0', LOG_LEVEL: 'warn' },
      dotenv: false,
      cwd: root,
    });
    const config = { ...base, settings: fileSchema.parse(settings ?? {}) };
    const stack = await start(config);
    return {
      ...stack,
      // the mode's data folder (no credentials: sandbox mode, DATA_DIR/sandbox)
      dataDir: config.dataDir,
      async dispose() {
        await stop(stack);
        // (retried: now and then a file still appears in the data folder while it is removed right
        // after the stop - an open finding of issue 28's session, see its closing note - and one
        // failed clean-up must not end the whole bench run)
        await rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
      },
    };
  } catch (err) {
    await rm(root, { recursive: true, force: true });
    throw err;
  }
}

/** The sandbox beacon on a worker thread of its own (bench/support/beacon-sandbox-worker.ts). */
async function startBeaconThread(): Promise<{ url: string; close(): Promise<void> }> {
  const worker = new Worker(new URL('./support/beacon-sandbox-worker.ts', import.meta.url));
  const url = await new Promise<string>((resolve, reject) => {
    worker.once('message', (m: { url: string }) => resolve(m.url));
    worker.once('error', reject);
  });
  return {
    url,
    async close() {
      const exited = new Promise((r) => worker.once('exit', r));
      worker.postMessage('close');
      await exited;
    },
  };
}

/**
 * The whole product with a temporary data directory; the shop is live so gifts can be bought.
 * `settings`: the settings file's content (default: none); `helix`: the local Helix API's options.
 */
export async function startBenchStack(
  drawSeconds = 3600,
  options: {
    settings?: Record<string, unknown>;
    helix?: Parameters<typeof startLocalStack>[0]['helix'];
    /** The file system under the bot's storage (a bench that times its syncs). */
    fileSystem?: FileSystem;
    /**
     * Run the sandbox beacon at drand quicknet's real period (3 s) and draw with it, as live; the
     * beacon on a worker thread of its own (its signing is the stand-in's work, not the bot's).
     */
    beacon?: boolean;
    /** More environment for the bot's config (a non-default setting: name it in the bench's rows). */
    env?: Record<string, string>;
  } = {},
): Promise<BenchStack> {
  const beacon = options.beacon ? await startBeaconThread() : undefined;
  try {
    return await withBenchData(
      options.settings,
      async (config) => {
        const stack = await startLocalStack({
          config,
          logger: silentLogger(),
          operator: { notify: () => undefined },
          fourthwall: { drawDurationSeconds: drawSeconds },
          chat: { botIsMod: true },
          ...(options.helix ? { helix: options.helix } : {}),
          ...(options.fileSystem ? { bot: { fileSystem: options.fileSystem } } : {}),
          ...(beacon ? { beaconUrl: beacon.url } : {}),
        });
        stack.fourthwall.control.setLive(true, {
          broadcasterId: stack.chatServer.channelId,
          broadcasterLogin: stack.chatServer.channel,
        });
        return stack;
      },
      async (stack) => {
        await stack.close();
        await beacon?.close();
      },
      options.env,
    );
  } catch (err) {
    await beacon?.close();
    throw err;
  }
}

/**
 * The real bot with a temporary data directory and the Fourthwall sandbox (live, so gifts can be
 * bought), connected to a chat sandbox started elsewhere (`chat`: its endpoint; the local Helix
 * API must be on its port, as startLocalChat mounts it), wired as startLocalStack wires it.
 */
export async function startBotOnChat(
  chat: ChatEndpoint,
  options: { drawSeconds?: number; fileSystem?: FileSystem } = {},
): Promise<BotStack> {
  return withBenchData(
    undefined,
    async (base) => {
      const fourthwall = await startFourthwallSandbox({
        logger: silentLogger(),
        drawDurationSeconds: options.drawSeconds ?? 3600,
      });
      try {
        const bot = await startBot({
          config: configForLocal(base, fourthwall, chat),
          logger: silentLogger(),
          operator: { notify: () => undefined },
          ...(options.fileSystem ? { fileSystem: options.fileSystem } : {}),
        });
        await registerBotWebhook(bot);
        fourthwall.control.setLive(true, { broadcasterId: chat.channelId, broadcasterLogin: chat.channel });
        return { fourthwall, bot };
      } catch (err) {
        await fourthwall.close().catch(() => undefined);
        throw err;
      }
    },
    async ({ fourthwall, bot }) => {
      await bot.stop('bench done');
      await fourthwall.close();
    },
  );
}

/** Buys `gifts` gifts at the sandbox and waits until the bot opened the draw (webhook path). */
export async function openGiftDraw(s: Pick<BotStack, 'bot' | 'fourthwall'>, gifts: number): Promise<string> {
  const opened = new Promise<DrawRecord>((resolve) => s.bot.engine.events.once('draw-opened', resolve));
  const { draw } = s.fourthwall.control.simulateGiftPurchase({ quantity: gifts, username: 'bench_fan' });
  const record = await opened;
  if (record.id !== draw['id']) throw new Error(`bench: opened ${record.id}, expected ${String(draw['id'])}`);
  return record.id;
}

/** A chat message as TwitchChat hands it to the command layer. */
export function enterMessage(i: number, channel: string): ChatMessage {
  const login = `viewer${i}`;
  return {
    id: `m${i}`,
    channel,
    userId: String(300_000_000 + ((i * 7_919) % 100_000_000)),
    login,
    displayName: `Viewer${i}`,
    text: '!enter',
    roles: i % 5 === 0 ? { ...noRoles, subscriber: true, subMonths: 1 + (i % 24) } : noRoles,
    bits: 0,
    action: false,
    sentAt: Date.now(),
    self: false,
  };
}

/** Enters `count` distinct viewers through GiveawayEngine.enter, yielding between chunks. */
export async function enterViewers(s: BenchStack, from: number, count: number): Promise<void> {
  const channel = s.chatServer.channel;
  for (let i = from; i < from + count; i++) {
    s.bot.engine.enter(enterMessage(i, channel));
    if (i % 5_000 === 4_999) await nextTurn();
  }
  await s.bot.repo.flush();
}

/**
 * Tracks the event loop's worst delay between `start` and `stop`. The histogram samples on its own
 * timer, and a block it has not timed from both ends is not recorded: a block that begins in the
 * same turn as `enable()` (before the timer's first run), or ends just before `disable()` (a
 * setImmediate wait resolving before the timer's next run), read as 0. So `start` resolves once
 * the timer has run, and `stop` lets it run once more before reading. Both waits happen outside
 * the caller's timed part (start before its clock reading, stop after).
 */
export class LoopDelay {
  private static readonly RESOLUTION_MS = 5;
  private readonly h: IntervalHistogram = monitorEventLoopDelay({ resolution: LoopDelay.RESOLUTION_MS });
  async start(): Promise<void> {
    this.h.reset();
    this.h.enable();
    await new Promise((resolve) => setTimeout(resolve, LoopDelay.RESOLUTION_MS * 2));
  }
  /** Stops and returns the worst delay in ms. */
  async stop(): Promise<number> {
    await new Promise((resolve) => setTimeout(resolve, 1));
    this.h.disable();
    return this.h.max / 1e6;
  }
}

const PROBER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const samples = [];
let stop = false;
parentPort.on('message', () => { stop = true; });
function probe() {
  if (stop) { agent.destroy(); parentPort.postMessage(samples); return; }
  const t = performance.now();
  const req = http.get(workerData.url, { agent }, (res) => {
    res.resume();
    res.on('end', () => { samples.push(performance.now() - t); setTimeout(probe, workerData.everyMs); });
  });
  req.on('error', () => { samples.push(Infinity); setTimeout(probe, workerData.everyMs); });
}
probe();
`;

/** GETs `url` every `everyMs` from a worker thread until stopped; returns the latencies (ms). */
export function startProber(url: string, everyMs = 10): { stop(): Promise<number[]> } {
  const worker = new Worker(PROBER, { eval: true, workerData: { url, everyMs } });
  const done = new Promise<number[]>((resolve, reject) => {
    worker.once('message', (samples: number[]) => resolve(samples));
    worker.once('error', reject);
  });
  return {
    async stop() {
      worker.postMessage('stop');
      const samples = await done;
      await worker.terminate();
      return samples;
    },
  };
}

/** Resolves with draw `drawId`'s record once the engine says it finished or failed. */
export function drawEnded(s: Pick<BotStack, 'bot'>, drawId: string): Promise<DrawRecord> {
  return new Promise((resolve) => {
    const on = (r: DrawRecord) => {
      if (r.id !== drawId) return;
      s.bot.engine.events.off('draw-finished', on);
      s.bot.engine.events.off('draw-failed', on);
      resolve(r);
    };
    s.bot.engine.events.on('draw-finished', on);
    s.bot.engine.events.on('draw-failed', on);
  });
}

/** The sandbox's log of finish calls for `drawId`. */
export function finishCalls(fw: LocalStack['fourthwall'], drawId: string): RequestRecord[] {
  return fw.control.requests.filter((r) => r.operation === 'finishDraw' && r.path.includes(`/gifting/draw/${drawId}/`));
}
