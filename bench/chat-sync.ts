/**
 * A/B helper for the chat-ingestion row (not a benchmark row; run by hand): the same chat frames
 * handed synchronously to tmi.js's frame handler of a bare client (counting `message` events) and
 * of the real bot's client (TagsMessage -> command registry -> engine with an open gift draw ->
 * journal, flushed at the end of the round), alternating, CPU time per line. No socket and no
 * chat sandbox in the measured part, so the ratio is harsher than e2e-2-chat's (the socket's
 * cost dilutes it there) but much steadier, and the gap (bot - bare, us/line) is our code plus
 * what it costs tmi.js (caches, garbage collection).
 * D=<distinct viewers> among the 100,000 `!enter` lines (line i is viewer i mod D): D=100000 gives
 * the cost of a new entrant's line, D=1000 that of a repeated `!enter`; default 50,000 (the bench's mix).
 * Usage: node --expose-gc --import tsx bench/chat-sync.ts [rounds]
 */
import tmi from 'tmi.js';
import { gc, median, openGiftDraw, startBenchStack } from './e2e-support.js';
import { closeDraw, flat, viewers } from './chat-support.js';

const LINES = 100_000;
const PER_FRAME = 1_000;
const D = Number(process.env['D'] ?? 50_000);
const ROUNDS = Number(process.argv[2] ?? 11);

/** tmi.js's handler of one WebSocket message (a frame of CRLF-separated lines). */
type FrameHandler = { _onMessage(event: { data: string }): void };

const cpuUs = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

const s = await startBenchStack();
try {
  const vs = viewers(s.chatServer, 'sync_', D);
  const frames: string[] = [];
  for (let i = 0; i < LINES; i += PER_FRAME) {
    const part: string[] = [];
    for (let j = i; j < i + PER_FRAME; j++) part.push(s.chatServer.formatPrivmsg(vs[j % D]!, '!enter'));
    frames.push(flat(`${part.join('\r\n')}\r\n`));
  }
  const bot = (s.bot.chat as unknown as { client: FrameHandler }).client;
  const bare = new tmi.Client({
    options: { skipUpdatingEmotesets: true },
    channels: [s.chatServer.channel],
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
  });
  let seen = 0;
  bare.on('message', () => {
    seen++;
  });
  const bareRound = async (): Promise<number> => {
    seen = 0;
    gc();
    const c0 = cpuUs();
    for (const f of frames) {
      (bare as unknown as FrameHandler)._onMessage({ data: f });
      await null; // a microtask turn after each frame, as after a socket read
    }
    const us = cpuUs() - c0;
    if (seen !== LINES) throw new Error(`bare client saw ${seen} of ${LINES} lines`);
    return us;
  };
  const botRound = async (): Promise<number> => {
    const drawId = await openGiftDraw(s, 5);
    gc();
    const c0 = cpuUs();
    for (const f of frames) {
      bot._onMessage({ data: f });
      await null;
    }
    await s.bot.repo.flush();
    const us = cpuUs() - c0;
    const entrants = s.bot.service.entrantCount(drawId);
    if (entrants !== Math.min(D, LINES)) throw new Error(`the draw has ${entrants} entrants, expected ${Math.min(D, LINES)}`);
    await closeDraw(s, drawId);
    return us;
  };
  await bareRound();
  await botRound();
  const bares: number[] = [];
  const bots: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let a: number;
    let b: number;
    if (r % 2) {
      a = await bareRound();
      b = await botRound();
    } else {
      b = await botRound();
      a = await bareRound();
    }
    bares.push(a / LINES);
    bots.push(b / LINES);
    ratios.push(a / b);
  }
  const gap = median(bots) - median(bares);
  console.log(`D=${D}: bare ${median(bares).toFixed(2)} us/line, bot ${median(bots).toFixed(2)} us/line, gap ${gap.toFixed(2)} us/line, ratio median ${median(ratios).toFixed(3)} (${ratios.map((x) => x.toFixed(3)).join(' ')})`);
} finally {
  await s.dispose();
}
