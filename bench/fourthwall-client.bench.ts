/**
 * Fourthwall client under its rate limit: 1,000 calls from 16 concurrent callers against a local
 * node:http server, with a client window of 100 requests per 1 s. Reports how many server-side
 * windows went over budget (must be 0, counted from arrival times at the server) and the total
 * time divided by the theoretical floor (900 calls after the first full window at 100/s = 9 s).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FourthwallClient } from '../src/fourthwall/index.js';
import type { BenchResult } from './types.js';

const CALLS = 1_000;
const CALLERS = 16;
const LIMIT = 100;
const INTERVAL_MS = 1_000;

const SHOP = JSON.stringify({ id: 'sh_bench', name: 'Bench Shop', domain: 'bench.example.com', publicDomain: 'bench.example.com' });

/** Number of windows [t, t + windowMs) starting at an arrival that hold more than `limit` arrivals. */
function windowsOverBudget(times: number[], windowMs: number, limit: number): number {
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

export async function run(): Promise<BenchResult[]> {
  const arrivals: number[] = [];
  const server = createServer((req, res) => {
    arrivals.push(Date.now());
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(SHOP) });
      res.end(SHOP);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new FourthwallClient({
    apiUrl: url,
    auth: { basic: { username: 'bench', password: 'bench-password' } },
    rateLimit: { limit: LIMIT, intervalMs: INTERVAL_MS },
    deadlineMs: 120_000,
  });
  let next = 0;
  let failures = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (next < CALLS) {
        next++;
        try {
          await client.getCurrentShop();
        } catch {
          failures++;
        }
      }
    }),
  );
  const totalMs = Date.now() - started;
  await client.close();
  await new Promise<void>((r) => server.close(() => r()));

  const floorMs = (Math.ceil(CALLS / LIMIT) - 1) * INTERVAL_MS;
  const over = windowsOverBudget(arrivals, INTERVAL_MS, LIMIT);
  const ratio = totalMs / floorMs;
  // Split the excess: pacing (first arrival to the first arrival of the last window) is the
  // limiter's doing; the last window's spread is how fast this machine serves 100 calls.
  const sorted = [...arrivals].sort((a, b) => a - b);
  const lastWindowStart = sorted[CALLS - LIMIT] ?? NaN;
  const pacing = (lastWindowStart - sorted[0]!) / floorMs;
  const lastWindowMs = sorted[CALLS - 1]! - lastWindowStart;
  const startupMs = sorted[0]! - started;
  return [
    {
      name: 'fourthwall.client.windowsOverBudget',
      value: over,
      unit: 'windows',
      target: '0',
      ok: over === 0 && failures === 0 && arrivals.length === CALLS,
      detail: `${arrivals.length} server arrivals, ${failures} failed calls, ${CALLERS} callers, window ${LIMIT}/${INTERVAL_MS} ms`,
    },
    {
      name: 'fourthwall.client.timeOverFloor',
      value: ratio,
      unit: 'ratio',
      target: '<= 1.05',
      ok: ratio <= 1.05,
      detail: `total ${totalMs} ms, floor ${floorMs} ms; first arrival after ${startupMs} ms, last window served in ${lastWindowMs} ms`,
    },
    {
      name: 'fourthwall.client.pacingOverFloor',
      value: pacing,
      unit: 'ratio',
      target: '<= 1.02',
      ok: pacing <= 1.02,
      detail: 'server arrival of call 1 to call 901 / 9 windows: the limiter share of the total',
    },
  ];
}
