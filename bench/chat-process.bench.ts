/**
 * Chat CPU of the bot as a streamer runs it: the bot is its own process (`node scripts/run.mjs
 * main`, what `npm start` execs, live mode, LOG_LEVEL info, dist/ as `npm ci` leaves it) joined
 * to a chat stand-in (the local chat sandbox, in this process), with a gift draw open; beside it,
 * in the same channel and the same run, a bare tmi.js client as its own process (no giftdrop
 * code: connect, join, count `message` events). Each line the stand-in sends reaches both at once
 * (one frame per batch to every joined socket), so both read the same bytes in the same stretch of
 * the machine's load.
 *
 * Per round: 200,000 `!enter` lines of viewers not seen before (each a new entrant: an entry, a
 * journal line, the synced journal), then the same 200,000 lines again (each a repeat: no entry,
 * no journal write), ended by one new viewer whose journal line says the bot handled them all. Each process's CPU time (user + system, every thread, read from
 * /proc/<pid>/stat: Linux only) over the span from the first line sent until that process has
 * handled the last one (the bot: the draw's journal holds every entrant; the bare client: its
 * count) includes its garbage collection; the rows are the bot's CPU per line over the bare
 * client's (median of ROUNDS rounds, per round listed), after a 20,000-line warm-up on both.
 * Target: <= 1.3x for new entrants. `npm run bench -- chat-process` on each Node line (the bench's
 * own `node` runs both processes). `BENCH_CPU_PROF=<dir>`: the bot runs with `--cpu-prof` into
 * <dir> (the bare client into <dir>/bare), and <dir>/spans.json lists the measured spans (CLOCK_MONOTONIC microseconds, the
 * profile's clock) to read the profile over; BENCH_THREADS=1 prints each thread's CPU per line;
 * BENCH_CHAT_LINES and BENCH_CHAT_ROUNDS change the sizes (the rows say them); BENCH_BOT_ROOT runs
 * the bot of another checkout (built, its node_modules installed: an older build beside this one).
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
const ROUNDS = Number(process.env['BENCH_CHAT_ROUNDS'] ?? (QUICK ? 1 : 5));
/** Lines per injected chunk (the stand-in sends a chunk at once, in frames of ~64 KiB). */
const CHUNK = 25_000;
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

/** CPU time (user + system, all threads) of process `pid` in microseconds, from /proc. */
function cpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[11] utime, fields[12] stime (proc(5) fields 14 and 15), in clock ticks (USER_HZ 100).
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
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
    const bot = spawn(process.execPath, ['scripts/run.mjs', 'main'], {
      cwd: botRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(bot);
    let webhookUrl: string | undefined;
    let tail = '';
    const onOutput = (d: Buffer) => {
      const text = d.toString();
      tail = (tail + text).slice(-4000);
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

    let sent = 0;
    let entrants = 0;
    /**
     * Sends `lines` (`newEntrants` of them new viewers, the last one always) in chunks; resolves
     * with both processes' CPU over the span until each handled them (the bot: the last line's
     * new entrant is journaled, and lines are handled in order).
     */
    const spans: { kind: string; from: number; to: number }[] = [];
    const measure = async (kind: 'new' | 'repeat', lines: string[], newEntrants: number): Promise<Span> => {
      const from = Number(process.hrtime.bigint() / 1000n);
      const threads = process.env['BENCH_THREADS'] === '1';
      const botT0 = threads ? threadsUs(bot.pid!) : undefined;
      const bareT0 = threads ? threadsUs(bare.pid!) : undefined;
      const bot0 = cpuUs(bot.pid!);
      const bare0 = cpuUs(bare.pid!);
      for (let i = 0; i < lines.length; i += CHUNK) {
        chat.injectRaw(lines.slice(i, i + CHUNK));
        // Let the sockets drain before the next chunk (no chunk piles up in this process's memory).
        await until(() => bareCount >= sent + Math.min(i + CHUNK, lines.length) - 1000, 'the bare client to keep up');
      }
      sent += lines.length;
      entrants += newEntrants;
      let botUs = NaN;
      let bareUs = NaN;
      await until(
        async () => {
          if (Number.isNaN(bareUs) && bareCount >= sent) bareUs = cpuUs(bare.pid!) - bare0;
          if (Number.isNaN(botUs) && (await journal.poll()) >= entrants) botUs = cpuUs(bot.pid!) - bot0;
          return !Number.isNaN(botUs) && !Number.isNaN(bareUs);
        },
        () =>
          `both sides to handle the lines (bare ${bareCount} of ${sent}, bot journal ${journal.lines} of ${entrants} entrants, ${chat.joined().length} joined; bot said: ${tail.slice(-600)})`,
      );
      spans.push({ kind, from, to: Number(process.hrtime.bigint() / 1000n) });
      if (botT0 && bareT0) {
        process.stderr.write(`  ${kind} per line, us: bot ${threadDelta(botT0, threadsUs(bot.pid!), lines.length)}\n`);
        process.stderr.write(
          `  ${kind} per line, us: bare ${threadDelta(bareT0, threadsUs(bare.pid!), lines.length)}\n`,
        );
      }
      return { botUs, bareUs };
    };

    const used = new Set<string>();
    const next = { i: 0 };
    await measure('new', enterLines(chat, used, next, WARM), WARM);
    for (let r = 0; r < ROUNDS; r++) {
      process.stderr.write(
        `  round ${r + 1}/${ROUNDS}: ${LINES} new entrants, then ${LINES} repeats (${loadNote()})\n`,
      );
      const lines = enterLines(chat, used, next, LINES);
      news.push(await measure('new', lines, LINES));
      // The same lines again, ended by one new viewer (its journal line says the bot got there).
      repeats.push(await measure('repeat', [...lines, ...enterLines(chat, used, next, 1)], 1));
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
    const us = (x: number) => (x / LINES).toFixed(2);
    return {
      name,
      value: Number(ratio.toFixed(3)),
      unit: 'x',
      ...(target !== undefined ? { target: `<= ${target}`, ok: ratio <= target } : {}),
      detail:
        `CPU per !enter line, the bot as its own process (node scripts/run.mjs main${process.env['BENCH_BOT_ROOT'] ? ` in ${process.env['BENCH_BOT_ROOT']}` : ''}, live, LOG_LEVEL info) / a bare tmi.js client process, same lines from one chat stand-in at once; ` +
        `${what}; ${LINES} lines per round, median of ${spans.length} (per round: ${ratios.map((x) => x.toFixed(2)).join(' ')}; bot ${spans.map((s) => us(s.botUs)).join(' ')} us, bare ${spans.map((s) => us(s.bareUs)).join(' ')} us per line); ` +
        `CPU from /proc/<pid>/stat (all threads, GC included); Node ${process.version}; ${loadNote()}${quick}`,
    };
  };
  return [
    row(
      'e2e.chatProcess.newEntrantsCpuToTmi',
      news,
      'each line a viewer not seen before (an entry, its journal line, the synced journal)',
      TARGET,
    ),
    row('e2e.chatProcess.repeatsCpuToTmi', repeats, 'each line a viewer already entered (no entry, no journal write)'),
  ];
}
