/**
 * Overlay updates through the real path: the whole local stack (Fourthwall sandbox, chat server,
 * the real bot with its journal on disk), a gift draw opened by a signed webhook, 10,000 viewers
 * typing `!enter` at 1,000/s on the chat server's WebSocket, and two overlay clients reading
 * `/overlay/events` over real HTTP sockets; then `!giveaway end`, the picks, the finish at the
 * sandbox and the winners frame.
 *
 * Measured: latency from the engine's `entered` event to the SSE frame (received by a client) that
 * first shows that entrant counted, p50/p99 over all entrants; the winners frame's latency; frames
 * and bytes each client received, per entrant. Anchors in the same run: the batch window (250 ms)
 * for the latency, and the bytes one frame per `!enter` would have cost (the average frame size)
 * for the batching.
 */
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/index.js';
import { fileSchema } from '../src/config/schema.js';
import { startLocalStack } from '../src/local/local-stack.js';
import { silentLogger } from '../src/logging/index.js';
import type { BenchResult } from './types.js';

const ENTRANTS = 10_000;
const PER_SECOND = 1_000;
const SLICE_MS = 20;
const BATCH_MS = 250;

interface Client {
  bytes: number;
  frames: number;
  close(): void;
}

function openClient(
  url: string,
  onState: (
    state: { draws: { key: string; entrants: number; stage: string; winners: unknown[] }[] },
    at: number,
  ) => void,
): Promise<Client> {
  return new Promise((resolve, reject) => {
    const c: Client = { bytes: 0, frames: 0, close: () => req.destroy() };
    const req = request(`${url}/overlay/events`, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`overlay events answered ${res.statusCode}`));
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk: string) => {
        const at = performance.now();
        c.bytes += Buffer.byteLength(chunk);
        buf += chunk;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = frame
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n');
          if (!frame.startsWith('event: state') || !data) continue;
          c.frames += 1;
          onState(JSON.parse(data) as Parameters<typeof onState>[0], at);
        }
      });
      resolve(c);
    });
    req.on('error', reject);
    req.end();
  });
}

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

export async function run(): Promise<BenchResult[]> {
  const dir = await mkdtemp(join(tmpdir(), 'giftdrop-bench-overlay-'));
  const logger = silentLogger();
  const base = loadConfig({ env: { DATA_DIR: dir, HTTP_PORT: '0', LOG_LEVEL: 'silent' }, dotenv: false, cwd: dir });
  const stack = await startLocalStack({
    config: { ...base, settings: fileSchema.parse({ reminders: { ackEverySeconds: 0 } }) },
    logger,
    operator: { notify: () => undefined },
    fourthwall: { drawDurationSeconds: 170 },
    chat: { botIsMod: true },
  });
  const clients: Client[] = [];
  try {
    const { fourthwall, chatServer, bot } = stack;
    fourthwall.control.setLive(true, { broadcasterId: chatServer.channelId, broadcasterLogin: chatServer.channel });
    const opened = new Promise<string>((resolve) => bot.engine.events.once('draw-opened', (r) => resolve(r.id)));
    fourthwall.control.simulateGiftPurchase({ quantity: 3, username: 'bench_fan', durationSeconds: 170 });
    const drawId = await opened;

    // engine event time per entrant count; matched by the first frame that shows the count
    const eventAt: number[] = [];
    bot.engine.events.on('entered', (id, _e, n) => {
      if (id === drawId) eventAt[n] = performance.now();
    });
    const latencies: number[] = [];
    let shown = 0;
    let winnersAt = 0;
    let winnersFrameAt = 0;
    bot.engine.events.on('winners', (r) => {
      if (r.id === drawId) winnersAt = performance.now();
    });
    const measure = (
      state: { draws: { key: string; entrants: number; stage: string; winners: unknown[] }[] },
      at: number,
    ) => {
      const d = state.draws.find((x) => x.key === drawId);
      if (!d) return;
      for (let n = shown + 1; n <= d.entrants; n++) if (eventAt[n] !== undefined) latencies.push(at - eventAt[n]!);
      shown = Math.max(shown, d.entrants);
      if (d.stage === 'winners' && d.winners.length && winnersAt && !winnersFrameAt) winnersFrameAt = at;
    };
    clients.push(await openClient(bot.http.localUrl, measure));
    clients.push(await openClient(bot.http.localUrl, () => undefined));

    const lines: string[] = [];
    for (let i = 0; i < ENTRANTS; i++)
      lines.push(chatServer.formatPrivmsg(chatServer.viewer(`bench_viewer_${i}`), '!enter'));
    const perSlice = (PER_SECOND * SLICE_MS) / 1000;
    const t0 = performance.now();
    for (let sent = 0, slice = 0; sent < lines.length; slice++) {
      const due = t0 + slice * SLICE_MS;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      chatServer.injectRaw(lines.slice(sent, sent + perSlice));
      sent += perSlice;
    }
    const deadline = Date.now() + 30_000;
    while (shown < ENTRANTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const joinSeconds = (performance.now() - t0) / 1000;
    const bytesWhileJoining = clients.map((c) => c.bytes);
    const framesWhileJoining = clients[0]!.frames;

    const endAt = performance.now();
    chatServer.inject(chatServer.broadcaster, '!giveaway end');
    while (!winnersFrameAt && Date.now() < deadline + 30_000) await new Promise((r) => setTimeout(r, 20));
    const record = await bot.repo.getDraw(drawId);

    latencies.sort((a, b) => a - b);
    const p50 = pct(latencies, 50);
    const p99 = pct(latencies, 99);
    const perEntrant = bytesWhileJoining[0]! / ENTRANTS;
    const avgFrame = bytesWhileJoining[0]! / Math.max(1, framesWhileJoining);
    return [
      {
        name: 'overlay.update.latencyP50',
        value: Math.round(p50),
        unit: 'ms',
        detail: `engine 'entered' -> SSE frame received, ${latencies.length} of ${ENTRANTS} entrants at ${PER_SECOND}/s (${joinSeconds.toFixed(1)} s), 2 clients`,
      },
      {
        name: 'overlay.update.latencyP99',
        value: Math.round(p99),
        unit: 'ms',
        detail: `same run; anchor: the ${BATCH_MS} ms batch window`,
      },
      {
        name: 'overlay.update.p99ToBatchWindow',
        value: p99 / BATCH_MS,
        unit: 'x',
        target: '<= 2',
        ok: p99 <= 2 * BATCH_MS,
        detail: `p99 latency / ${BATCH_MS} ms batch window`,
      },
      {
        name: 'overlay.update.winnersLatency',
        value: Math.round(winnersFrameAt - winnersAt),
        unit: 'ms',
        detail: `'winners' event -> winners frame; draw ${record?.status}, ${record?.winners.length} winners of ${record?.entrants}`,
      },
      {
        name: 'overlay.update.endToWinners',
        value: Math.round(winnersFrameAt - endAt),
        unit: 'ms',
        detail:
          '!giveaway end in chat -> winners on the overlay: close, freeze, picks, finish at the sandbox, journal, frame; beacon off (the seed-only close: live, the close also waits for a drand round, 0-3 s; see e2e.close1M.*)',
      },
      {
        name: 'overlay.framesPerEntrant',
        value: framesWhileJoining / ENTRANTS,
        unit: 'frames',
        target: '< 0.05',
        ok: framesWhileJoining / ENTRANTS < 0.05,
        detail: `${framesWhileJoining} frames for ${ENTRANTS} !enter; anchor: 1 frame per !enter (unbatched), ~${Math.round(avgFrame)} B each`,
      },
      {
        name: 'overlay.bytesPerEntrantPerClient',
        value: perEntrant,
        unit: 'bytes',
        detail: `per client (${bytesWhileJoining.join(' / ')} bytes while ${ENTRANTS} joined)`,
      },
    ];
  } finally {
    for (const c of clients) c.close();
    await stack.close();
    await rm(dir, { recursive: true, force: true });
  }
}
