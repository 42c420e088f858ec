/**
 * (Named e2e-1-* so it runs first: its heap figure must not see the teardown of another module's
 * stack freeing memory mid-measurement.)
 * The close of a big gift draw through the product as it runs (startLocalStack: real engine, file
 * storage with the journal on, HTTP server, Fourthwall client talking to the local sandbox):
 * - heap per distinct entrant (row engine.heapPerEntrant, not e2e.*: it calls the engine, not the
 *   socket; e2e-2-chat's e2e.chat.heapPerEntrant is the socket's): 500,000 viewers entered
 *   through GiveawayEngine.enter (the entry call the `!enter` command makes), heap growth after gc
 *   in this process / entrants; engine.enterRate is that call's rate while the rounds are set up;
 * - 1,000,000 entrants, 100 winners, with the sandbox beacon on at the real 3 s period (a live
 *   close waits for the first drand round after the freeze; the sandbox beacon runs on a worker
 *   thread of its own, as drand signs elsewhere: its BLS signing is not the bot's work): `!giveaway end` (endNow) -> the finish
 *   call arriving at the sandbox (its request log), and the beacon round's publication time -> that
 *   finish call (the part the bot controls), medians of 3; the event loop's worst delay from the close until the
 *   draw is finished (winners persisted, finish answered, record saved); `/healthz` latency seen
 *   from a worker thread during the same span.
 * Entrants go in through the engine call rather than a socket (a million chat lines would take
 * minutes on this machine); the close, the freeze, the entrants file, the finish call and the
 * final save are the real ones.
 */
import {
  LoopDelay,
  QUICK,
  drawEnded,
  enterViewers,
  finishCalls,
  gc,
  heldMemory,
  loadNote,
  median,
  openGiftDraw,
  percentile,
  startBenchStack,
  startProber,
  type BenchStack,
} from './e2e-support.js';
import type { DrawRecord } from '../src/giveaway/model.js';
import type { BenchResult } from './types.js';

const ENTRANTS = QUICK ? 100_000 : 1_000_000;
const HEAP_ENTRANTS = QUICK ? 50_000 : 500_000;
const ROUNDS = QUICK ? 1 : 3;
const GIFTS = 100;
const quick = QUICK ? ' (BENCH_QUICK sizes)' : '';
/** BENCH_BEACON=off: the seed-only close (no drand round to wait for), to compare with a build that had no beacon in this bench. */
const BEACON = process.env['BENCH_BEACON'] !== 'off';
const beaconNote = BEACON
  ? 'sandbox beacon on, 3 s period'
  : 'BEACON OFF (BENCH_BEACON=off: the seed-only close, not what a live close does)';

async function closeAndWait(s: BenchStack, drawId: string): Promise<DrawRecord> {
  const done = drawEnded(s, drawId);
  if (s.bot.engine.endNow() !== 1) throw new Error('bench: endNow closed no draw');
  const r = await done;
  await s.bot.engine.whenIdle();
  return r;
}

interface Round {
  closeToFinishMs: number;
  /** From the scheduled publication of the beacon round the draw used to the finish call. */
  roundToFinishMs: number;
  settledMs: number;
  /** CPU time of this process (all threads) from close to finished. */
  cpuMs: number;
  worstLoopMs: number;
  healthz: number[];
  enterRate: number;
}

async function closeRound(s: BenchStack): Promise<Round> {
  const drawId = await openGiftDraw(s, GIFTS);
  const t = performance.now();
  await enterViewers(s, 0, ENTRANTS);
  const enterRate = ENTRANTS / ((performance.now() - t) / 1000);
  if (s.bot.engine.entrantCount(drawId) !== ENTRANTS) throw new Error('bench: not every viewer entered');
  gc();
  const prober = startProber(`${s.bot.http.url}/healthz`);
  const loop = new LoopDelay();
  await loop.start();
  const t0 = Date.now();
  const p0 = performance.now();
  const cpu0 = process.cpuUsage();
  const record = await closeAndWait(s, drawId);
  const settledMs = performance.now() - p0;
  const cpu = process.cpuUsage(cpu0);
  const worstLoopMs = await loop.stop();
  const healthz = await prober.stop();
  if (record.status !== 'finished' || record.winners.length !== GIFTS) {
    throw new Error(`bench: draw ended ${record.status} with ${record.winners.length} winners`);
  }
  const calls = finishCalls(s.fourthwall, drawId);
  if (calls.length !== 1) throw new Error(`bench: ${calls.length} finish calls`);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const beacon = record.fairness.beacon;
  const finishAt = Date.parse(calls[0]!.time);
  if (!BEACON) {
    if (beacon) throw new Error(`bench: BENCH_BEACON=off but the draw used a beacon (${JSON.stringify(beacon)})`);
    return {
      closeToFinishMs: finishAt - t0,
      roundToFinishMs: Number.NaN,
      settledMs,
      cpuMs,
      worstLoopMs,
      healthz,
      enterRate,
    };
  }
  if (!beacon || 'unavailable' in beacon || !beacon.randomness || !beacon.sandbox) {
    throw new Error(`bench: the draw did not use the sandbox beacon (${JSON.stringify(beacon)})`);
  }
  const publishedMs = (beacon.sandbox.genesis + (beacon.round - 1) * beacon.sandbox.period) * 1000;
  return {
    closeToFinishMs: finishAt - t0,
    roundToFinishMs: finishAt - publishedMs,
    settledMs,
    cpuMs,
    worstLoopMs,
    healthz,
    enterRate,
  };
}

export async function run(): Promise<BenchResult[]> {
  const s = await startBenchStack(3600, { beacon: BEACON });
  try {
    // Heap per distinct entrant, real path.
    const heapDraw = await openGiftDraw(s, GIFTS);
    const before = await heldMemory();
    await enterViewers(s, 0, HEAP_ENTRANTS);
    const after = await heldMemory();
    const jsHeapPerEntrant = (after.heap - before.heap) / HEAP_ENTRANTS;
    const buffersPerEntrant = (after.arrayBuffers - before.arrayBuffers) / HEAP_ENTRANTS;
    // Entrants live in typed-array columns outside the JS heap: the row counts both.
    const heapPerEntrant = jsHeapPerEntrant + buffersPerEntrant;
    await closeAndWait(s, heapDraw);
    gc();

    const rounds: Round[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      process.stderr.write(`  close round ${r + 1}/${ROUNDS} (${ENTRANTS} entrants, ${loadNote()})\n`);
      rounds.push(await closeRound(s));
      gc();
    }
    const close = median(rounds.map((r) => r.closeToFinishMs));
    const roundToFinish = median(rounds.map((r) => r.roundToFinishMs));
    const worstLoop = Math.max(...rounds.map((r) => r.worstLoopMs));
    const healthz = rounds.flatMap((r) => r.healthz);
    const p99 = percentile(healthz, 99);
    const hasGc = typeof (globalThis as { gc?: unknown }).gc === 'function';
    const list = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(' ');
    const rows: BenchResult[] = [
      {
        name: 'e2e.close1M.roundToFinishCall',
        value: Math.round(roundToFinish),
        unit: 'ms',
        target: '<= 1000',
        ok: roundToFinish <= 1000,
        detail: `${beaconNote}: the drand round's publication -> the finish call at the sandbox (the part the bot controls), ${ENTRANTS} entrants, ${GIFTS} winners, median of ${ROUNDS} (${list(rounds.map((r) => r.roundToFinishMs))}); ${loadNote()}${quick}`,
      },
      {
        name: 'e2e.close1M.closeToFinishCall',
        value: Math.round(close),
        unit: 'ms',
        detail: `${beaconNote}${BEACON ? ' (so it includes the wait for the first round after the freeze, up to 3 s)' : ''}: ${ENTRANTS} entrants, ${GIFTS} winners, median of ${ROUNDS} (${list(rounds.map((r) => r.closeToFinishMs))}); finished and saved after ${list(rounds.map((r) => r.settledMs))} ms, using ${list(rounds.map((r) => r.cpuMs))} ms of process CPU (all threads); ${loadNote()}${quick}`,
      },
      {
        name: 'e2e.close1M.worstLoopDelay',
        value: Math.round(worstLoop),
        unit: 'ms',
        target: '<= 50',
        ok: worstLoop <= 50,
        detail: `monitorEventLoopDelay from close to finished, worst of ${ROUNDS} (${list(rounds.map((r) => r.worstLoopMs))})${quick}`,
      },
      {
        name: 'e2e.close1M.healthzP99',
        value: Number(p99.toFixed(1)),
        unit: 'ms',
        target: '<= 50',
        ok: p99 <= 50,
        detail: `${healthz.length} GET /healthz from a worker thread during the closes, max ${Math.max(...healthz).toFixed(0)} ms${quick}`,
      },
      {
        name: 'engine.heapPerEntrant',
        value: Math.round(heapPerEntrant),
        unit: 'bytes',
        target: '<= 200',
        ok: hasGc && heapPerEntrant <= 200,
        detail: `${HEAP_ENTRANTS} distinct entrants through GiveawayEngine.enter, growth after gc of the JS heap plus array buffers / entrants (${jsHeapPerEntrant.toFixed(0)} JS heap + ${buffersPerEntrant.toFixed(0)} typed-array columns)${hasGc ? '' : ' (no --expose-gc: not comparable)'}${quick}`,
      },
      {
        name: 'engine.enterRate',
        value: Math.round(median(rounds.map((r) => r.enterRate))),
        unit: 'entries/s',
        detail: `GiveawayEngine.enter called directly (not through chat: the socket path is e2e.chat.*), the journal on, ${ENTRANTS} distinct viewers while the close rounds are set up, median of ${ROUNDS}; ${beaconNote}${quick}`,
      },
    ];
    // Beacon off: no round to wait for, and the rows get their own names (the results file keys rows by name).
    return BEACON
      ? rows
      : rows
          .filter((r) => r.name !== 'e2e.close1M.roundToFinishCall')
          .map((r) => ({ ...r, name: `${r.name}.beaconOff` }));
  } finally {
    await s.dispose();
  }
}
