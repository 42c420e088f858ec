/**
 * The public surface under a /verify flood (issue 31): ten clients (each its own address, as a
 * tunnel reports them in X-Forwarded-For) fetch the verify page of a 100,000-entrant draw in a
 * loop, one request at a time each, as fast as they are answered; meanwhile a prober times
 * `GET /healthz` every 10 ms and a signed webhook every 50 ms. The same probes run first without
 * the flood (the anchor, same run, same stack), and each row reports the flood's p99 beside the
 * anchor's, as a ratio. The whole bot runs in this thread (startLocalStack, sandbox mode, logging
 * off); the flood and the probes each run on their own worker thread (their own event loops).
 *
 * What bounds it: the page is built once and cached; each client may take 10 pages at once, then
 * one every 2 s (429 with Retry-After after that). Targets: /healthz p99 < 50 ms and webhook
 * p99 < 200 ms during the flood. Settings: default limits; BENCH_QUICK=1 halves the phases.
 */
import { Worker } from 'node:worker_threads';
import { signWebhookBody } from '../src/fourthwall/webhooks.js';
import { finishedRecord } from '../test/support/fairness-records.js';
import { QUICK, loadNote, percentile, startBenchStack } from './e2e-support.js';
import type { BenchResult } from './types.js';

const PHASE_MS = QUICK ? 3_000 : 6_000;
const CLIENTS = 10;
const ENTRANTS = 100_000;

const PROBES = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { performance } = require('node:perf_hooks');
const { base, hooks } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
const health = [], webhook = [], statuses = {};
let stop = false, k = 0;
parentPort.on('message', () => (stop = true));
function time(opts, body, into) {
  return new Promise((resolve) => {
    const t = performance.now();
    const req = http.request(base + opts.path, { agent, method: opts.method, headers: opts.headers }, (res) => {
      res.resume();
      res.on('end', () => { into.push(performance.now() - t); statuses[res.statusCode] = (statuses[res.statusCode] || 0) + 1; resolve(); });
    });
    req.on('error', () => { into.push(Infinity); resolve(); });
    req.end(body);
  });
}
const healthLoop = async () => { while (!stop) { await time({ path: '/healthz', method: 'GET', headers: {} }, undefined, health); await new Promise((r) => setTimeout(r, 10)); } };
const hookLoop = async () => {
  while (!stop && k < hooks.length) {
    const h = hooks[k++];
    await time({ path: '/webhooks/fourthwall', method: 'POST', headers: { 'content-type': 'application/json', 'x-fourthwall-hmac-sha256': h.signature } }, h.body, webhook);
    await new Promise((r) => setTimeout(r, 50));
  }
};
Promise.all([healthLoop(), hookLoop()]).then(() => parentPort.postMessage({ health, webhook, statuses }));
`;

const FLOOD = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { base, clients, path } = workerData;
let stop = false;
parentPort.on('message', () => (stop = true));
const statuses = {};
let bytes = 0;
async function client(c) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  while (!stop) {
    await new Promise((resolve) => {
      const req = http.get(base + path, { agent, headers: { 'x-forwarded-for': '203.0.113.' + c, host: 'giftdrop.tunnel.example' } }, (res) => {
        res.on('data', (d) => (bytes += d.length));
        res.on('end', () => { statuses[res.statusCode] = (statuses[res.statusCode] || 0) + 1; resolve(); });
      });
      req.on('error', () => { statuses.error = (statuses.error || 0) + 1; resolve(); });
    });
  }
}
Promise.all(Array.from({ length: clients }, (_, c) => client(c))).then(() => parentPort.postMessage({ statuses, bytes }));
`;

interface ProbeResult {
  health: number[];
  webhook: number[];
  statuses: Record<string, number>;
}

function worker<T>(source: string, data: unknown): { stop(): Promise<T> } {
  const w = new Worker(source, { eval: true, workerData: data });
  const done = new Promise<T>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  return {
    async stop() {
      w.postMessage('stop');
      const out = await done;
      await w.terminate();
      return out;
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function run(): Promise<BenchResult[]> {
  const s = await startBenchStack();
  try {
    await s.bot.repo.saveDraw(finishedRecord({ id: 'big_draw', entrants: ENTRANTS, winners: 3 }));
    const secret = s.fourthwall.webhookSecret;
    const order = [...s.fourthwall.state.orders.values()][0];
    const hooks = (phase: string) =>
      Array.from({ length: 400 }, (_, i) => {
        const body = JSON.stringify({ testMode: false, id: `weve_${phase}_${i}`, webhookId: 'wcon_bench', shopId: 'sh_bench', type: 'ORDER_PLACED', apiVersion: 'V1', createdAt: new Date().toISOString(), data: order });
        return { body, signature: signWebhookBody(body, secret) };
      });
    const base = s.bot.http.url;
    // warm: the page's script bundle and the first build happen before anything is timed
    await fetch(`${base}/verify/big_draw`).then((r) => r.arrayBuffer());

    const idleProbe = worker<ProbeResult>(PROBES, { base, hooks: hooks('idle') });
    await sleep(PHASE_MS);
    const idle = await idleProbe.stop();

    const flood = worker<{ statuses: Record<string, number>; bytes: number }>(FLOOD, { base, clients: CLIENTS, path: '/verify/big_draw' });
    const floodProbe = worker<ProbeResult>(PROBES, { base, hooks: hooks('flood') });
    await sleep(PHASE_MS);
    const busy = await floodProbe.stop();
    const f = await flood.stop();
    await s.bot.http.idle();

    const p99 = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 99);
    const hIdle = p99(idle.health);
    const hBusy = p99(busy.health);
    const wIdle = p99(idle.webhook);
    const wBusy = p99(busy.webhook);
    const floodNote = `${CLIENTS} clients x ${PHASE_MS / 1000} s flood of /verify/<${ENTRANTS.toLocaleString('en')}-entrant draw>: ${JSON.stringify(f.statuses)}, ${(f.bytes / 1e6).toFixed(1)} MB sent; ${loadNote()}${QUICK ? ' (BENCH_QUICK phases)' : ''}`;
    return [
      {
        name: 'public.verifyFlood.healthzP99',
        value: Number(hBusy.toFixed(1)),
        unit: 'ms',
        target: '< 50',
        ok: hBusy < 50,
        detail: `no flood (anchor, same run): ${hIdle.toFixed(1)} ms, ratio ${(hBusy / hIdle).toFixed(2)}x; ${busy.health.length} probes; ${floodNote}`,
      },
      {
        name: 'public.verifyFlood.webhookP99',
        value: Number(wBusy.toFixed(1)),
        unit: 'ms',
        target: '< 200',
        ok: wBusy < 200 && (busy.statuses['200'] ?? 0) === busy.health.length + busy.webhook.length,
        detail: `signed ORDER_PLACED every 50 ms; no flood (anchor): ${wIdle.toFixed(1)} ms, ratio ${(wBusy / wIdle).toFixed(2)}x; ${busy.webhook.length} webhooks, probe statuses ${JSON.stringify(busy.statuses)}`,
      },
    ];
  } finally {
    await s.dispose();
  }
}
