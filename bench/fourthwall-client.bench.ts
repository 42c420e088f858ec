/**
 * Fourthwall client under its rate limit, against the local Fourthwall sandbox: 1,000 calls of
 * an idempotent GET (getCurrentShop) from 16 concurrent callers, with a client window of 100
 * requests per 1 s. The sandbox runs in a worker thread (its own event loop, like a remote
 * service; the client's loop does only client work) and its own rate rule is set far above the
 * client's (10,000 per 1 s) so that it never holds a request back: the client's limiter is what
 * is measured. The client runs on the system clock, as in production. A separate client warms
 * both threads up first (400 unthrottled calls, not counted): the measured 1,000 calls start on
 * warm code and a fresh client (its own connections and limiter), as in a long-running bot.
 *
 * Reports:
 * - windows over budget, counted from server-side times: the instant the sandbox's rate rule
 *   admitted each request (`admittedAt` in its request log; the sandbox runs on a
 *   sub-millisecond transport clock so whole-millisecond timestamps cannot hide an excess), with
 *   the count from the log's millisecond arrival times and the tightest gap between call i and
 *   call i+100 as detail. Must be 0.
 * - total time / theoretical floor: the floor is 9 s (the first 100 calls at t=0, call 1,000 no
 *   earlier than 9 windows later). Target <= 1.05.
 * - limiter pacing: server admission of call 1 to call 901 over the floor, the share of the total
 *   the limiter's slot reuse adds; the rest is the time one window of 100 calls takes through 16
 *   callers (it grows by the round trip of the busiest slot each window, see rate-limit.ts).
 */
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { FourthwallClient } from '../src/fourthwall/index.js';
import { SEED_SHOP_ID } from '../src/sandbox/fourthwall/index.js';
import type { BenchResult } from './types.js';

const CALLS = 1_000;
const CALLERS = 16;
const LIMIT = 100;
const INTERVAL_MS = 1_000;
const FLOOR_MS = (Math.ceil(CALLS / LIMIT) - 1) * INTERVAL_MS;
/** Calls through a separate, unthrottled client first, so JIT warm-up is not measured. */
const WARMUP_CALLS = 400;
const SANDBOX_RATE_LIMIT = { limit: 10_000, intervalMs: INTERVAL_MS };

interface Started {
  apiUrl: string;
  username: string;
  password: string;
}

interface LoggedRequest {
  operation?: string;
  status: number | string;
  /** ms since the epoch, sub-millisecond. */
  admittedAt?: number;
  /** ISO time, whole milliseconds. */
  time: string;
  delayedMs: number;
}

/**
 * The worker's program (CommonJS, evaluated): registers tsx, starts the sandbox on a
 * sub-millisecond transport clock, posts its URL and credentials, and on any message posts the
 * request log and closes.
 */
function workerSource(): string {
  const tsx = import.meta.resolve('tsx/esm/api');
  const sandbox = new URL('../src/sandbox/fourthwall/index.ts', import.meta.url).href;
  return `
const { parentPort } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
(async () => {
  (await import(${JSON.stringify(tsx)})).register();
  const { startFourthwallSandbox } = await import(${JSON.stringify(sandbox)});
  const clock = {
    now: () => performance.timeOrigin + performance.now(),
    setTimeout(fn, ms) { const t = setTimeout(fn, Math.max(0, ms)); return { cancel: () => clearTimeout(t) }; },
  };
  const sb = await startFourthwallSandbox({ rateLimit: ${JSON.stringify(SANDBOX_RATE_LIMIT)}, transportClock: clock });
  let mark = 0;
  parentPort.on('message', async (m) => {
    if (m === 'mark') {
      mark = sb.control.requests.length;
      parentPort.postMessage({ mark });
      return;
    }
    const requests = sb.control.requests.slice(mark).map((r) => ({
      operation: r.operation, status: r.status, admittedAt: r.admittedAt, time: r.time, delayedMs: r.delayedMs,
    }));
    await sb.close();
    parentPort.postMessage({ requests });
  });
  parentPort.postMessage({ apiUrl: sb.apiUrl, username: sb.username, password: sb.password });
})();
`;
}

/** Resolves with the worker's next message; rejects if the worker has failed (then or before). */
function messages(worker: Worker): <T>() => Promise<T> {
  const crashed = new Promise<never>((_resolve, reject) => worker.once('error', reject));
  crashed.catch(() => undefined);
  return <T>() => Promise.race([new Promise<T>((resolve) => worker.once('message', resolve)), crashed]);
}

/** Number of windows [t, t + windowMs) starting at an arrival that hold more than `limit` arrivals. */
function windowsOverBudget(times: readonly number[], windowMs: number, limit: number): number {
  const t = [...times].sort((a, b) => a - b);
  let over = 0;
  let hi = 0;
  for (let lo = 0; lo < t.length; lo++) {
    if (hi < lo) hi = lo;
    while (hi + 1 < t.length && t[hi + 1]! - t[lo]! < windowMs) hi++;
    if (hi - lo + 1 > limit) over++;
  }
  return over;
}

/** The smallest time between arrival i and arrival i + limit (>= windowMs: no window is over). */
function tightestGap(sorted: readonly number[], limit: number): number {
  let min = Infinity;
  for (let i = 0; i + limit < sorted.length; i++) min = Math.min(min, sorted[i + limit]! - sorted[i]!);
  return min;
}

export async function run(): Promise<BenchResult[]> {
  const worker = new Worker(workerSource(), { eval: true });
  const nextMessage = messages(worker);
  let log: LoggedRequest[] = [];
  let totalMs = 0;
  let failures = 0;
  let wrong = 0;
  try {
    const sb = await nextMessage<Started>();
    const auth = { basic: { username: sb.username, password: sb.password } };
    const warm = new FourthwallClient({
      apiUrl: sb.apiUrl,
      auth,
      rateLimit: { limit: 100_000, intervalMs: INTERVAL_MS },
    });
    try {
      let left = WARMUP_CALLS;
      await Promise.all(
        Array.from({ length: CALLERS }, async () => {
          while (left-- > 0) await warm.getCurrentShop();
        }),
      );
    } finally {
      await warm.close();
    }
    const marked = nextMessage<{ mark: number }>();
    worker.postMessage('mark');
    await marked;
    const client = new FourthwallClient({
      apiUrl: sb.apiUrl,
      auth,
      rateLimit: { limit: LIMIT, intervalMs: INTERVAL_MS },
      deadlineMs: 120_000,
    });
    let next = 0;
    const started = performance.now();
    try {
      await Promise.all(
        Array.from({ length: CALLERS }, async () => {
          while (next < CALLS) {
            next++;
            try {
              const shop = await client.getCurrentShop();
              if (shop.id !== SEED_SHOP_ID) wrong++;
            } catch {
              failures++;
            }
          }
        }),
      );
    } finally {
      totalMs = performance.now() - started;
      await client.close();
    }
    const stopped = nextMessage<{ requests: LoggedRequest[] }>();
    worker.postMessage('stop');
    log = (await stopped).requests.filter((r) => r.operation === 'getCurrentShop');
  } finally {
    await worker.terminate();
  }

  const admitted = log
    .map((r) => r.admittedAt)
    .filter((t): t is number => typeof t === 'number')
    .sort((a, b) => a - b);
  const arrivedMs = log.map((r) => Date.parse(r.time));
  const maxGateDelay = Math.max(0, ...log.map((r) => r.delayedMs));
  const over = windowsOverBudget(admitted, INTERVAL_MS, LIMIT);
  const overMs = windowsOverBudget(arrivedMs, INTERVAL_MS, LIMIT);
  const gap = tightestGap(admitted, LIMIT);
  const ratio = totalMs / FLOOR_MS;
  const lastWindowStart = admitted[CALLS - LIMIT] ?? NaN;
  const pacing = (lastWindowStart - admitted[0]!) / FLOOR_MS;
  const firstWindowMs = admitted[LIMIT - 1]! - admitted[0]!;
  const lastWindowMs = admitted[CALLS - 1]! - lastWindowStart;
  const complete = admitted.length === CALLS && failures === 0 && wrong === 0;
  return [
    {
      name: 'fourthwall.client.windowsOverBudget',
      value: over,
      unit: 'windows',
      target: '0',
      ok: over === 0 && overMs === 0 && complete,
      detail:
        `sandbox admitted ${admitted.length} (max gate delay ${maxGateDelay.toFixed(1)} ms), ${failures} failed, ${wrong} wrong; ` +
        `${CALLERS} callers, client window ${LIMIT}/${INTERVAL_MS} ms; whole-ms arrival count ${overMs}; ` +
        `tightest call i..i+${LIMIT} ${gap.toFixed(2)} ms`,
    },
    {
      name: 'fourthwall.client.timeOverFloor',
      value: ratio,
      unit: 'ratio',
      target: '<= 1.05',
      ok: ratio <= 1.05 && complete,
      detail:
        `total ${totalMs.toFixed(0)} ms, floor ${FLOOR_MS} ms; window 1 served in ${firstWindowMs.toFixed(0)} ms, ` +
        `last window in ${lastWindowMs.toFixed(0)} ms`,
    },
    {
      name: 'fourthwall.client.pacingOverFloor',
      value: pacing,
      unit: 'ratio',
      target: '<= 1.02',
      ok: pacing <= 1.02,
      detail: `sandbox admission of call 1 to call ${CALLS - LIMIT + 1} / ${FLOOR_MS / INTERVAL_MS} windows: the limiter share of the total`,
    },
  ];
}
