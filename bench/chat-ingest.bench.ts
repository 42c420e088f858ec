/**
 * PIECE benchmark, kept beside the end-to-end one (e2e-2-chat.bench.ts, which is the figure that
 * counts): a toy `enter` command over a Map, no engine, no journal. Rows are named `piece.*` and
 * carry no target.
 *
 * Chat ingest: 100,000 `!enter` lines from 50,000 distinct users pushed through the sandbox chat
 * server (real WebSocket on 127.0.0.1, lines batched into big frames by `injectRaw`) into the
 * command layer: TwitchChat (tmi.js + tag parser) -> CommandRegistry -> an `enter` command that
 * records each user id once. Compared, in the same run, with a bare tmi.js client counting its
 * `message` events for the same lines (the ceiling: tmi.js's own receive path). Also heap bytes
 * per distinct entrant (with --expose-gc). The machine is shared and noisy: each round runs both
 * back to back (alternating which goes first), the ratio is the median of the per-round ratios,
 * the rates are the best of each.
 */
import { startChatServer, type ChatServer, type SimViewer } from '../src/sandbox/chat/index.js';
import { CommandRegistry } from '../src/commands/registry.js';
import { TwitchChat } from '../src/twitch/client.js';
import { silentLogger } from '../src/logging/index.js';
import { systemClock } from '../src/shared/clock.js';
import type { ChatMessage } from '../src/shared/chat.js';
import { CountWait, rawRound } from './bare-tmi.js';
import type { BenchResult } from './types.js';

const LINES = 100_000;
const USERS = 50_000;
const ROUNDS = 5;

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** USERS viewers with distinct user ids (the sandbox derives ids from logins; skip the rare clash). */
function buildLines(server: ChatServer): string[] {
  const viewers: SimViewer[] = [];
  const ids = new Set<string>();
  for (let i = 0; viewers.length < USERS; i++) {
    const sub = i % 5 === 0;
    const v = server.viewer(`viewer_${i}`, { subscriber: sub, subMonths: sub ? 3 : 0 });
    if (ids.has(v.userId)) continue;
    ids.add(v.userId);
    viewers.push(v);
  }
  const lines: string[] = [];
  for (let i = 0; i < LINES; i++) lines.push(server.formatPrivmsg(viewers[i % USERS]!, '!enter'));
  return lines;
}

/** Resolves when `count()` reaches `target`, checking on every macrotask turn. */

async function oursRound(
  server: ChatServer,
  lines: string[],
): Promise<{ rate: number; entrants: number; heapPerEntrant: number }> {
  const logger = silentLogger();
  const chat = new TwitchChat({
    url: server.url,
    channel: server.channel,
    username: server.botLogin,
    token: server.token,
    logger,
    clock: systemClock,
  });
  const registry = new CommandRegistry({ clock: systemClock, logger });
  const entrants = new Map<string, string>();
  let handled = 0;
  const wait = new CountWait();
  registry.register({
    name: 'enter',
    permission: 'everyone',
    execute(ctx) {
      if (!entrants.has(ctx.msg.userId)) entrants.set(ctx.msg.userId, ctx.msg.login);
    },
  });
  const reply = (text: string) => chat.say(text);
  chat.on('message', (msg: ChatMessage) => {
    if (registry.handle(msg, reply)) handled++;
    wait.poke();
  });
  await chat.connect();
  await server.waitFor(() => server.joined().length === 1, 5000, 'bot joined');
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  server.injectRaw(lines);
  await wait.until(() => handled, lines.length);
  const rate = lines.length / ((performance.now() - t0) / 1000);
  gc();
  const heapAfter = process.memoryUsage().heapUsed;
  const result = { rate, entrants: entrants.size, heapPerEntrant: (heapAfter - heapBefore) / entrants.size };
  await chat.disconnect();
  await server.waitFor(() => server.connections() === 0, 5000, 'bot gone');
  return result;
}

export async function run(): Promise<BenchResult[]> {
  const server = await startChatServer({ logger: silentLogger() });
  try {
    const lines = buildLines(server);
    let raw = 0;
    let ours = 0;
    let entrants = 0;
    let heap = Infinity;
    const ratios: number[] = [];
    // Warm-up (JIT) for both paths, not measured.
    await rawRound(server, lines.slice(0, 20_000));
    await oursRound(server, lines.slice(0, 20_000));
    for (let r = 0; r < ROUNDS; r++) {
      let rawRate = 0;
      let o: Awaited<ReturnType<typeof oursRound>> | undefined;
      if (r % 2 === 0) {
        rawRate = await rawRound(server, lines);
        gc();
        o = await oursRound(server, lines);
      } else {
        o = await oursRound(server, lines);
        gc();
        rawRate = await rawRound(server, lines);
      }
      gc();
      ratios.push(o.rate / rawRate);
      raw = Math.max(raw, rawRate);
      ours = Math.max(ours, o.rate);
      entrants = o.entrants;
      heap = Math.min(heap, o.heapPerEntrant);
    }
    ratios.sort((a, b) => a - b);
    const ratio = ratios[Math.floor(ratios.length / 2)]!;
    const hasGc = typeof (globalThis as { gc?: unknown }).gc === 'function';
    return [
      {
        name: 'piece.chat.ingest.rate',
        value: Math.round(ours),
        unit: 'msg/s',
        detail: `${LINES} !enter lines, ${entrants} distinct entrants, best of ${ROUNDS}`,
      },
      {
        name: 'piece.chat.ingest.tmiRawRate',
        value: Math.round(raw),
        unit: 'msg/s',
        detail: 'bare tmi.js client counting message events, same lines',
      },
      {
        name: 'piece.chat.ingest.ratioToTmi',
        value: ratio,
        unit: 'x',
        detail: `median of ${ROUNDS} rounds (${ratios.map((x) => x.toFixed(2)).join(' ')})`,
      },
      {
        name: 'piece.chat.ingest.heapPerEntrant',
        value: Math.round(heap),
        unit: 'bytes',
        detail: hasGc
          ? 'heap growth after gc / distinct entrants (Map userId -> login)'
          : 'no --expose-gc: figure includes garbage',
      },
    ];
  } finally {
    await server.close();
  }
}
