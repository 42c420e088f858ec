/**
 * Webhook load generator, run as its OWN process (child_process.fork) so the bot under test and
 * the load never share an event loop or a thread. Open loop: request i of a stream is sent at
 * t0 + i / rate whether or not earlier ones were answered; latency is measured from the moment
 * the request was written to the end of its response.
 *
 * Protocol (IPC): the parent sends { url, durationMs, streams: [{ name, rate, secret, templates }] }
 * where templates are envelope objects (their `id` is replaced per request) signed with `secret`
 * (pass a wrong secret for badly signed requests). The reply is one message per run:
 * { streams: { [name]: { sent, answered, latency: number[], statuses: { [code]: n }, errors,
 *   firstSend, lastSend } },
 *   elapsedMs }. The message 'report' gets the same for the run in progress, with partial: true.
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
let seq = 0;

function runStream(url, s, durationMs, t0, out) {
  const interval = 1000 / s.rate;
  const total = Math.floor((durationMs / 1000) * s.rate);
  let i = 0;
  return new Promise((resolve) => {
    let done = 0;
    const finish = () => {
      if (++done === total) resolve();
    };
    const send = () => {
      const template = s.templates[i % s.templates.length];
      const body = JSON.stringify({ ...template, id: `weve_load_${process.pid}_${seq++}` });
      const signature = createHmac('sha256', s.secret).update(body).digest('base64');
      const sentAt = performance.now();
      if (out.sent === 0) out.firstSend = sentAt;
      out.lastSend = sentAt;
      out.sent++;
      const req = http.request(
        url,
        {
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'x-fourthwall-hmac-sha256': signature,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            out.latency.push(performance.now() - sentAt);
            out.answered++;
            out.statuses[res.statusCode] = (out.statuses[res.statusCode] ?? 0) + 1;
            finish();
          });
        },
      );
      req.setTimeout(10_000, () => req.destroy());
      req.on('error', () => {
        out.errors++;
        finish();
      });
      req.end(body);
    };
    const tick = () => {
      const now = performance.now();
      while (i < total && t0 + i * interval <= now) {
        send();
        i++;
      }
      if (i < total) setTimeout(tick, Math.max(0, t0 + i * interval - performance.now()));
    };
    if (total === 0) resolve();
    else setTimeout(tick, Math.max(0, t0 - performance.now()));
  });
}

/** The run in progress, for a 'report' asked before it finished. */
let current;

process.on('message', async (msg) => {
  if (msg === 'exit') {
    agent.destroy();
    process.exit(0);
  }
  if (msg === 'report') {
    process.send({ ...current, elapsedMs: performance.now() - current.t0, partial: true });
    return;
  }
  const t0 = performance.now() + 20;
  const streams = {};
  current = { streams, t0 };
  await Promise.all(
    msg.streams.map((s) => {
      streams[s.name] = { sent: 0, answered: 0, latency: [], statuses: {}, errors: 0, firstSend: 0, lastSend: 0 };
      return runStream(msg.url, s, msg.durationMs, t0, streams[s.name]);
    }),
  );
  process.send({ streams, elapsedMs: performance.now() - t0 });
});
