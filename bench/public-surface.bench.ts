/**
 * The public surface under a /verify flood (issues 31, 38): ten clients come through a tunnel (a
 * TCP forwarder to HTTP_PORT, each with its own X-Forwarded-For as a tunnel agent appends it, and a
 * browser's Accept-Encoding) and fetch the verify page of a 100,000-entrant draw in a loop, one
 * request at a time each, as fast as they are answered; meanwhile a prober times the streamer's
 * `GET /healthz` (their own listener, what the overlay and dashboard share) every 10 ms and a signed
 * webhook through the tunnel (Fourthwall's own X-Forwarded-For) every 50 ms. The same probes run first without
 * the flood (the anchor, same run, same stack), and each row reports the flood's p99 beside the
 * anchor's, as a ratio. The whole bot runs in this thread (startLocalStack, sandbox mode, logging
 * off); the flood and the probes each run on their own worker thread (their own event loops).
 *
 * What bounds it: the page is built once and kept precompressed; each client may take 4 pages at
 * once, then one every 5 s (429 with Retry-After after that), told apart by the last
 * X-Forwarded-For entry (GIFTDROP_TRUST_PROXY=ngrok: the tunnel here appends it as ngrok's agent does;
 * the default trusts no header and would make the ten one client). Targets: /healthz p99 < 50 ms and webhook
 * p99 < 200 ms during the flood; the page sent to a browser under a quarter of its plain size.
 * Settings: default limits; BENCH_QUICK=1 halves the phases.
 */
import { Worker } from 'node:worker_threads';
import { signWebhookBody } from '../src/fourthwall/webhooks.js';
import { finishedRecord } from '../test/support/fairness-records.js';
import { startTcpForwarder } from '../test/support/tcp-forwarder.js';
import { QUICK, loadNote, percentile, startBenchStack } from './e2e-support.js';
import type { BenchResult } from './types.js';

const PHASE_MS = QUICK ? 3_000 : 6_000;
const CLIENTS = 10;
const ENTRANTS = 100_000;

const PROBES = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { performance } = require('node:perf_hooks');
const { base, local, hooks } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
const health = [], webhook = [], statuses = {};
let stop = false, k = 0;
parentPort.on('message', () => (stop = true));
function time(opts, body, into) {
  return new Promise((resolve) => {
    const t = performance.now();
    const req = http.request((opts.base || base) + opts.path, { agent, method: opts.method, headers: opts.headers }, (res) => {
      res.resume();
      res.on('end', () => { into.push(performance.now() - t); statuses[res.statusCode] = (statuses[res.statusCode] || 0) + 1; resolve(); });
    });
    req.on('error', () => { into.push(Infinity); resolve(); });
    req.end(body);
  });
}
const healthLoop = async () => { while (!stop) { await time({ base: local, path: '/healthz', method: 'GET', headers: {} }, undefined, health); await new Promise((r) => setTimeout(r, 10)); } };
const hookLoop = async () => {
  while (!stop && k < hooks.length) {
    const h = hooks[k++];
    await time({ path: '/webhooks/fourthwall', method: 'POST', headers: { 'content-type': 'application/json', 'x-fourthwall-hmac-sha256': h.signature, 'x-forwarded-for': '34.117.0.' + (k % 4) } }, h.body, webhook);
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
      const req = http.get(base + path, { agent, headers: { 'x-forwarded-for': '203.0.113.' + c, host: 'giftdrop.tunnel.example', 'accept-encoding': 'gzip, deflate, br, zstd' } }, (res) => {
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
  const s = await startBenchStack(3600, { env: { GIFTDROP_TRUST_PROXY: 'ngrok' } });
  const tunnel = await startTcpForwarder(s.bot.http.port);
  try {
    await s.bot.repo.saveDraw(finishedRecord({ id: 'big_draw', entrants: ENTRANTS, winners: 3 }));
    const secret = s.fourthwall.webhookSecret;
    const order = [...s.fourthwall.state.orders.values()][0];
    const hooks = (phase: string) =>
      Array.from({ length: 400 }, (_, i) => {
        const body = JSON.stringify({
          testMode: false,
          id: `weve_${phase}_${i}`,
          webhookId: 'wcon_bench',
          shopId: 'sh_bench',
          type: 'ORDER_PLACED',
          apiVersion: 'V1',
          createdAt: new Date().toISOString(),
          data: order,
        });
        return { body, signature: signWebhookBody(body, secret) };
      });
    const base = `http://127.0.0.1:${tunnel.port}`;
    const local = s.bot.http.localUrl;
    // warm: the page's script bundle and the first build happen before anything is timed; the
    // page's size as sent plain and as sent to a browser (brotli), for the bytes row
    const size = async (encoding: string) => {
      const r = await fetch(`${base}/verify/big_draw`, {
        headers: { 'x-forwarded-for': '198.51.100.1', 'accept-encoding': encoding },
      });
      return Number(r.headers.get('content-length'));
    };
    const plainBytes = await size('identity');
    const brBytes = await size('gzip, deflate, br, zstd');

    const idleProbe = worker<ProbeResult>(PROBES, { base, local, hooks: hooks('idle') });
    await sleep(PHASE_MS);
    const idle = await idleProbe.stop();

    const flood = worker<{ statuses: Record<string, number>; bytes: number }>(FLOOD, {
      base,
      clients: CLIENTS,
      path: '/verify/big_draw',
    });
    const floodProbe = worker<ProbeResult>(PROBES, { base, local, hooks: hooks('flood') });
    await sleep(PHASE_MS);
    const busy = await floodProbe.stop();
    const f = await flood.stop();
    await s.bot.http.idle();

    const p99 = (xs: number[]) =>
      percentile(
        [...xs].sort((a, b) => a - b),
        99,
      );
    const hIdle = p99(idle.health);
    const hBusy = p99(busy.health);
    const wIdle = p99(idle.webhook);
    const wBusy = p99(busy.webhook);
    const floodNote = `${CLIENTS} clients through a TCP tunnel to HTTP_PORT (own X-Forwarded-For, Accept-Encoding gzip/br; GIFTDROP_TRUST_PROXY=ngrok) x ${PHASE_MS / 1000} s flood of /verify/<${ENTRANTS.toLocaleString('en')}-entrant draw>: ${JSON.stringify(f.statuses)}, ${(f.bytes / 1e6).toFixed(2)} MB sent; ${loadNote()}${QUICK ? ' (BENCH_QUICK phases)' : ''}`;
    return [
      {
        name: 'public.verifyFlood.localHealthzP99',
        value: Number(hBusy.toFixed(1)),
        unit: 'ms',
        target: '< 50',
        ok: hBusy < 50,
        detail: `GET /healthz on the streamer's own listener; no flood (anchor, same run): ${hIdle.toFixed(1)} ms, ratio ${(hBusy / hIdle).toFixed(2)}x; ${busy.health.length} probes; ${floodNote}`,
      },
      {
        name: 'public.verifyFlood.webhookP99',
        value: Number(wBusy.toFixed(1)),
        unit: 'ms',
        target: '< 200',
        ok: wBusy < 200 && (busy.statuses['200'] ?? 0) === busy.health.length + busy.webhook.length,
        detail: `signed ORDER_PLACED every 50 ms through the tunnel; no flood (anchor): ${wIdle.toFixed(1)} ms, ratio ${(wBusy / wIdle).toFixed(2)}x; ${busy.webhook.length} webhooks, probe statuses ${JSON.stringify(busy.statuses)}`,
      },
      {
        name: 'public.verify.brotliBytes',
        value: brBytes,
        unit: 'bytes',
        target: '< 1/4 of plain',
        ok: brBytes * 4 < plainBytes,
        detail: `the ${ENTRANTS.toLocaleString('en')}-entrant verify page as sent to a browser (Accept-Encoding: gzip, deflate, br, zstd) vs plain (anchor, same run): ${plainBytes} bytes, ratio ${(brBytes / plainBytes).toFixed(3)}x`,
      },
    ];
  } finally {
    await tunnel.close();
    await s.dispose();
  }
}
