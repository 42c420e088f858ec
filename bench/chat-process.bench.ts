/**
 * Chat CPU of the bot as a streamer runs it: the bot is its own process (`node scripts/run.mjs
 * main`, what `npm start` execs, live mode, LOG_LEVEL info, dist/ as `npm ci` leaves it) joined
 * to a chat stand-in (the local chat sandbox, in this process), with a gift draw open; beside it,
 * in the same channel and the same run, a bare tmi.js client as its own process (no giftdrop
 * code: connect, join, count `message` events).
 *
 * Per round: 200,000 `!enter` lines of viewers not seen before (each a new entrant: an entry, a
 * journal line, the synced journal), then the same 200,000 lines again (each a repeat: no entry,
 * no journal write). The lines go in turns of 25,000: a turn's lines to one process alone (the
 * stand-in's frames reach only that socket), then the same lines to the other, the first of the
 * two alternating turn by turn, so each is measured with nothing but the stand-in beside it and a
 * drift in the machine's speed lands on both. A repeat turn ends with one new viewer, whose
 * journal line says the bot handled the turn. Each process's CPU time (every thread, user and
 * system, from /proc/<pid>/task/<tid>/schedstat in nanoseconds: Linux only) is summed over its
 * turns, each from the first line sent until that process handled the last (the bot: the draw's
 * journal holds every entrant sent; the bare client: its count), garbage collection included;
 * the rows are the bot's CPU per line over the bare client's (median of ROUNDS rounds, per round
 * listed), after a 20,000-line warm-up on both.
 *
 * Target: <= 1.3x for new entrants. `npm run bench -- chat-process` on each Node line (the bench's
 * own `node` runs both processes). `BENCH_CPU_PROF=<dir>`: the bot runs with `--cpu-prof` into
 * <dir> (the bare client into <dir>/bare), and <dir>/spans.json lists the turns (side, kind and
 * CLOCK_MONOTONIC microseconds, the profile's clock) to read the profile over; BENCH_THREADS=1
 * prints each thread's CPU per line of a round (both sides' turns); BENCH_CHAT_LINES and
 * BENCH_CHAT_ROUNDS change the sizes (the rows say them); BENCH_BOT_ROOT runs the bot of another
 * checkout (built, its node_modules installed: an older build beside this one);
 * BENCH_BOT_NODE_ARGS puts Node options before the bot's script (`--trace-gc`, say: V8 options
 * are refused in NODE_OPTIONS) and BENCH_BOT_OUT=1 copies the bot's output to stderr.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt } from '../scripts/build.mjs';
import {
  botProcessEnv,
  freePort,
  makeTempDir,
  parseWebhookUrl,
  registerWebhook,
  setShopLive,
  startLocalServers,
} from '../test/support/e2e-stack.js';
import type { ChatServer } from '../src/sandbox/chat/index.js';
import { flat } from './chat-support.js';
import { loadNote, median, QUICK } from './e2e-support.js';
import type { BenchResult } from './types.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const LINES = Number(process.env['BENCH_CHAT_LINES'] ?? (QUICK ? 40_000 : 200_000));
const WARM = QUICK ? 5_000 : 20_000;
const ROUNDS = Number(process.env['BENCH_CHAT_ROUNDS'] ?? (QUICK ? 1 : 9));
/** Lines per turn (one side reads a chunk, then the other). */
const CHUNK = 25_000;
/** Places in the channel's join order (the stand-in's `joined()`): the bot joins first. */
const BOT_TURN = 0;
const BARE_TURN = 1;
const TARGET = 1.3;
const quick = QUICK ? ' (BENCH_QUICK sizes)' : '';

/** The bare client: tmi.js as a user would write it, printing its message count (every 1,000, and every 20 ms while it changed). */
const BARE = `
const tmi = require('tmi.js');
const e = process.env;
const client = new tmi.Client({
  options: { skipUpdatingEmotesets: true },
  connection: { server: e.CHAT_HOST, port: Number(e.CHAT_PORT), secure: false, reconnect: false },
  identity: { username: e.CHAT_BOT, password: 'oauth:' + e.CHAT_TOKEN },
  channels: [e.CHAT_CHANNEL],
  logger: { info() {}, warn() {}, error() {} },
});
let n = 0;
let said = 0;
const say = () => { if (n !== said) process.stdout.write((said = n) + '\\n'); };
client.on('message', () => { if (++n % 1000 === 0) say(); });
setInterval(say, 20);
client.connect().catch((err) => { console.error(String(err)); process.exit(1); });
process.on('SIGTERM', () => process.exit(0));
`;

/**
 * CPU time of process `pid` in microseconds, every thread: the sum of each thread's run time from
 * /proc/<pid>/task/<tid>/schedstat (nanoseconds, user and system together). /proc/<pid>/stat's
 * utime + stime come in 10 ms ticks, too coarse for a turn of 25,000 lines.
 */
function cpuUs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return ns / 1000;
}

/** Per thread of `pid` (name:tid): user and system CPU in microseconds, from /proc (BENCH_THREADS=1 prints them per span). */
function threadsUs(pid: number): Map<string, { user: number; sys: number }> {
  const out = new Map<string, { user: number; sys: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(`${name}:${tid}`, { user: Number(f[11]) * 1e4, sys: Number(f[12]) * 1e4 });
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

function threadDelta(
  before: Map<string, { user: number; sys: number }>,
  after: Map<string, { user: number; sys: number }>,
  lines: number,
): string {
  const parts: string[] = [];
  for (const [k, a] of after) {
    const b = before.get(k) ?? { user: 0, sys: 0 };
    const u = (a.user - b.user) / lines;
    const sy = (a.sys - b.sys) / lines;
    if (u + sy > 0.05) parts.push(`${k} user ${u.toFixed(2)} sys ${sy.toFixed(2)}`);
  }
  return parts.join('; ');
}

/** Counts the newlines a growing file gains (the bot's journal: one line per entrant). */
class LineCounter {
  private handle: FileHandle | undefined;
  private offset = 0;
  lines = 0;
  constructor(private readonly file: string) {}
  async poll(): Promise<number> {
    this.handle ??= await open(this.file, 'r').catch(() => undefined);
    if (!this.handle) return this.lines;
    const buf = Buffer.alloc(1 << 20);
    for (;;) {
      const { bytesRead } = await this.handle.read(buf, 0, buf.length, this.offset);
      if (bytesRead === 0) return this.lines;
      this.offset += bytesRead;
      for (let i = 0; i < bytesRead; i++) if (buf[i] === 10) this.lines++;
    }
  }
  async close(): Promise<void> {
    await this.handle?.close();
  }
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
}

async function stop(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited(child);
  clearTimeout(t);
}

/** Resolves once `done()` holds, checking every 20 ms (in this process: its CPU is on neither side). */
async function until(
  done: () => boolean | Promise<boolean>,
  what: string | (() => string),
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline)
      throw new Error(`bench: timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * `!enter` lines of `count` viewers not used before (distinct user ids: the stand-in derives an id
 * from a login, so a login whose id was taken is skipped), every 5th a subscriber.
 */
function enterLines(chat: ChatServer, used: Set<string>, next: { i: number }, count: number): string[] {
  const out: string[] = [];
  while (out.length < count) {
    const i = next.i++;
    const sub = i % 5 === 0;
    const v = chat.viewer(`cpv_${i}`, { subscriber: sub, subMonths: sub ? 3 : 0 });
    if (used.has(v.userId)) continue;
    used.add(v.userId);
    out.push(flat(chat.formatPrivmsg(v, '!enter')));
  }
  return out;
}

interface Span {
  botUs: number;
  bareUs: number;
  /** Lines each side handled. */
  lines: number;
}

export async function run(): Promise<BenchResult[]> {
  if (process.platform !== 'linux') return [];
  ensureBuilt({ log: (l) => process.stderr.write(`${l}\n`) });
  const servers = await startLocalServers({ fourthwall: { drawDurationSeconds: 3600 } });
  const { chat, fourthwall } = servers;
  const { dir, cleanup } = await makeTempDir('giftdrop-bench-chatproc-');
  const children: ChildProcess[] = [];
  const news: Span[] = [];
  const repeats: Span[] = [];
  try {
    // The bot, live, as npm start runs it.
    const prof = process.env['BENCH_CPU_PROF'];
    const env = {
      HOME: process.env.HOME ?? '/tmp',
      ...botProcessEnv(servers, { dataDir: dir, httpPort: await freePort(), logLevel: 'info' }),
      ...(prof ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-interval=100 --cpu-prof-dir=${prof}` } : {}),
    };
    const botRoot = process.env['BENCH_BOT_ROOT'] ?? root;
    const bot = spawn(
      process.execPath,
      [...(process.env['BENCH_BOT_NODE_ARGS']?.split(' ').filter(Boolean) ?? []), 'scripts/run.mjs', 'main'],
      {
        cwd: botRoot,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.push(bot);
    let webhookUrl: string | undefined;
    let tail = '';
    const onOutput = (d: Buffer) => {
      const text = d.toString();
      tail = (tail + text).slice(-4000);
      if (process.env['BENCH_BOT_OUT']) process.stderr.write(text);
      for (const line of text.split('\n')) webhookUrl ??= parseWebhookUrl(line);
    };
    bot.stdout.on('data', onOutput);
    bot.stderr.on('data', onOutput);
    void exited(bot).then(() => (webhookUrl ??= 'exited'));
    await until(() => webhookUrl !== undefined && chat.joined().length === 1, 'the bot to start and join', 60_000);
    if (webhookUrl === 'exited') throw new Error(`bench: the bot exited: ${tail}`);
    await registerWebhook(fourthwall, webhookUrl!);
    setShopLive(servers);
    const { draw } = fourthwall.control.simulateGiftPurchase({ quantity: 1, username: 'bench_fan' });
    const drawId = String(draw['id']);
    const journal = new LineCounter(join(dir, 'journal', `${drawId}.jsonl`));
    await until(() => chat.botMessages().some((m) => m.includes('bench_fan')), 'the draw to open', 30_000);

    // The bare client, its own process, in the same channel.
    const bare = spawn(process.execPath, ['-e', BARE], {
      cwd: root,
      env: {
        ...(prof ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-interval=100 --cpu-prof-dir=${prof}/bare` } : {}),
        PATH: process.env.PATH ?? '',
        CHAT_HOST: chat.host,
        CHAT_PORT: String(chat.port),
        CHAT_BOT: chat.botLogin,
        CHAT_TOKEN: chat.token,
        CHAT_CHANNEL: chat.channel,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(bare);
    let bareCount = 0;
    bare.stdout.on('data', (d: Buffer) => {
      const last = d.toString().trim().split('\n').at(-1);
      if (last) bareCount = Math.max(bareCount, Number(last));
    });
    await until(() => chat.joined().length === 2, 'the bare client to join', 30_000);
    if (chat.joined().length !== 2) throw new Error('bench: expected the bot and the bare client in the channel');

    const used = new Set<string>();
    const next = { i: 0 };
    /** Lines sent to the bare client so far (it counts every line it got). */
    let bareSent = 0;
    /** New entrants sent to the bot so far (its journal gains one line each). */
    let entrants = 0;
    const threads = process.env['BENCH_THREADS'] === '1';
    const spans: { kind: string; side: string; from: number; to: number }[] = [];
    /**
     * Sends `lines` to one side alone (`only`: its place in join order) and resolves with that
     * process's CPU over the span until it handled them all: the bot when its journal holds every
     * new entrant sent (lines are handled in order, and the last line is always a new one), the
     * bare client when its count reaches the lines sent.
     */
    const turn = async (side: 'bot' | 'bare', kind: 'new' | 'repeat', lines: string[], newEntrants: number) => {
      const pid = side === 'bot' ? bot.pid! : bare.pid!;
      const from = Number(process.hrtime.bigint() / 1000n);
      const cpu0 = cpuUs(pid);
      chat.injectRaw(lines, { only: side === 'bot' ? BOT_TURN : BARE_TURN });
      let done: () => Promise<boolean>;
      if (side === 'bot') {
        entrants += newEntrants;
        done = async () => (await journal.poll()) >= entrants;
      } else {
        bareSent += lines.length;
        done = async () => bareCount >= bareSent;
      }
      await until(
        done,
        () =>
          `the ${side} to handle ${kind} lines (bare ${bareCount} of ${bareSent}, bot journal ${journal.lines} of ${entrants} entrants, ${chat.joined().length} joined; bot said: ${tail.slice(-600)})`,
      );
      const us = cpuUs(pid) - cpu0;
      spans.push({ kind, side, from, to: Number(process.hrtime.bigint() / 1000n) });
      return us;
    };
    /**
     * Both sides over `lines` in chunks of CHUNK lines, each chunk to one side and then the other,
     * the first side alternating (bot, bare; bare, bot; ...), so a change in the machine's speed
     * lands on both. 'new': each line a new viewer; 'repeat': each chunk is followed by one new
     * viewer (its journal line says the bot handled the chunk).
     */
    const measure = async (kind: 'new' | 'repeat', lines: string[]): Promise<Span> => {
      const span: Span = { botUs: 0, bareUs: 0, lines: 0 };
      const t0 = threads ? { bot: threadsUs(bot.pid!), bare: threadsUs(bare.pid!) } : undefined;
      for (let i = 0, c = 0; i < lines.length; i += CHUNK, c++) {
        let chunk = lines.slice(i, i + CHUNK);
        let news = chunk.length;
        if (kind === 'repeat') {
          chunk = [...chunk, ...enterLines(chat, used, next, 1)];
          news = 1;
        }
        const order: ('bot' | 'bare')[] = c % 2 === 0 ? ['bot', 'bare'] : ['bare', 'bot'];
        for (const side of order) {
          const us = await turn(side, kind, chunk, news);
          if (side === 'bot') span.botUs += us;
          else span.bareUs += us;
        }
        span.lines += chunk.length;
      }
      if (t0) {
        for (const side of ['bot', 'bare'] as const)
          process.stderr.write(
            `  ${kind} per line, us (both sides' turns): ${side} ${threadDelta(t0[side], threadsUs(side === 'bot' ? bot.pid! : bare.pid!), span.lines)}\n`,
          );
      }
      return span;
    };

    await measure('new', enterLines(chat, used, next, WARM));
    for (let r = 0; r < ROUNDS; r++) {
      process.stderr.write(
        `  round ${r + 1}/${ROUNDS}: ${LINES} new entrants, then ${LINES} repeats (${loadNote()})\n`,
      );
      const lines = enterLines(chat, used, next, LINES);
      news.push(await measure('new', lines));
      repeats.push(await measure('repeat', lines));
    }
    await journal.close();
    if (prof) writeFileSync(join(prof, 'spans.json'), JSON.stringify(spans));
  } finally {
    for (const c of children) await stop(c);
    await servers.close();
    await cleanup();
  }
  const row = (name: string, spans: Span[], what: string, target?: number): BenchResult => {
    const ratios = spans.map((s) => s.botUs / s.bareUs);
    const ratio = median(ratios);
    const us = (x: number, s: Span) => (x / s.lines).toFixed(2);
    return {
      name,
      value: Number(ratio.toFixed(3)),
      unit: 'x',
      ...(target !== undefined ? { target: `<= ${target}`, ok: ratio <= target } : {}),
      detail:
        `CPU per !enter line, the bot as its own process (node scripts/run.mjs main${process.env['BENCH_BOT_ROOT'] ? ` in ${process.env['BENCH_BOT_ROOT']}` : ''}, live, LOG_LEVEL info) / a bare tmi.js client process, same lines from one chat stand-in; ` +
        `${what}; ${LINES} lines per round, median of ${spans.length} (all rounds together ${(spans.reduce((a, x) => a + x.botUs, 0) / spans.reduce((a, x) => a + x.bareUs, 0)).toFixed(3)}; per round: ${ratios.map((x) => x.toFixed(2)).join(' ')}; bot ${spans.map((s) => us(s.botUs, s)).join(' ')} us, bare ${spans.map((s) => us(s.bareUs, s)).join(' ')} us per line); ` +
        `each side alone in turns of ${CHUNK} lines, the first side alternating; CPU from /proc/<pid>/task/*/schedstat (all threads, GC included); Node ${process.version}; ${loadNote()}${quick}`,
    };
  };
  return [
    row(
      'e2e.chatProcess.newEntrantsCpuToTmi',
      news,
      'each line a viewer not seen before (an entry, its journal line, the synced journal)',
      TARGET,
    ),
    row(
      'e2e.chatProcess.repeatsCpuToTmi',
      repeats,
      `each line a viewer already entered (no entry, no journal write), each turn ended by one new viewer`,
    ),
  ];
}
