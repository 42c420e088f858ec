/**
 * The event-stream hub's bounds over real sockets (a plain node:http server around SseHub): a new
 * stream over the per-client cap ends that client's oldest (not refused), over the total cap the
 * oldest of all; a client that does not read what was written is dropped at the next heartbeats;
 * a stream older than its maximum age is ended (the browser reconnects); an idle stream (bytes
 * waiting that did not drain between two heartbeats) is dropped under the buffer bound. Waits are
 * on response events or on the hub's state reaching a condition, never on a fixed sleep.
 */
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SseHub, type SseHubOptions } from '../src/web/operator/sse.js';

let server: Server | undefined;
let hub: SseHub | undefined;
afterEach(async () => {
  hub?.closeAll();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = hub = undefined;
});

let responses: ServerResponse[] = [];

async function start(o: Partial<SseHubOptions>): Promise<{ port: number; hub: SseHub }> {
  const h = (hub = new SseHub({ max: 100, ...o }));
  responses = [];
  server = createServer((req, res) => {
    responses.push(res);
    h.open(req, res, 'event: state\ndata: {}\n\n', String(req.headers['x-client'] ?? 'a'));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as AddressInfo).port, hub: h };
}

function open(port: number, client: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path: '/', headers: { 'x-client': client }, agent: false }, resolve);
    req.on('error', reject);
  });
}

/** Resolves once `cond` holds (checked every few ms; the test's timeout bounds it). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}

const ended = (res: IncomingMessage) =>
  new Promise<void>((r) => (res.readableEnded || res.destroyed ? r() : (res.on('end', r), res.on('close', r))));

describe('SseHub', () => {
  it("a stream over the per-client cap ends that client's newest earlier stream (the long-lived one that renders stays); other clients keep theirs", async () => {
    const { port, hub } = await start({ maxPerClient: 2 });
    const a1 = await open(port, 'a');
    a1.resume();
    const a2 = await open(port, 'a');
    a2.resume();
    const b1 = await open(port, 'b');
    const a3 = await open(port, 'a');
    for (const r of [a2, b1, a3]) expect(r.statusCode).toBe(200);
    await ended(a2);
    expect(hub.evicted).toBe(1);
    expect(hub.size).toBe(3);
    expect(a1.readableEnded).toBe(false);
    expect(b1.readableEnded).toBe(false);
  });

  it('over the total cap the newest earlier stream is ended, the oldest kept and the newest let in', async () => {
    const { port, hub } = await start({ max: 2, maxPerClient: 5 });
    const first = await open(port, 'a');
    first.resume();
    const second = await open(port, 'b');
    second.resume();
    const third = await open(port, 'c');
    expect(third.statusCode).toBe(200);
    await ended(second);
    expect(hub.size).toBe(2);
    expect(first.readableEnded).toBe(false);
  });

  it('a client that does not read is dropped (at the heartbeat, or once over the buffer bound)', async () => {
    const { port, hub } = await start({ heartbeatMs: 30 });
    const sock = connect(port, '127.0.0.1');
    sock.write('GET / HTTP/1.1\r\nhost: 127.0.0.1\r\nx-client: lazy\r\n\r\n');
    sock.pause(); // never reads
    await until(() => hub.size === 1);
    // far more than the socket buffers take: the rest waits in the stream, never drained
    for (let i = 0; i < 16; i++) hub.broadcast(`event: state\ndata: ${'x'.repeat(900_000)}\n\n`);
    await until(() => hub.size === 0);
    sock.destroy();
  });

  it('idle: a stream whose waiting bytes did not drain between two heartbeats is dropped (under the buffer bound)', async () => {
    const { port, hub } = await start({ heartbeatMs: 40 });
    const sock = connect(port, '127.0.0.1');
    sock.write('GET / HTTP/1.1\r\nhost: 127.0.0.1\r\nx-client: idle\r\n\r\n');
    sock.pause();
    await until(() => hub.size === 1);
    const res = responses[0]!;
    // fill the socket buffers until some bytes wait in the stream itself, well under 1 MiB
    while (res.writableLength === 0) {
      hub.broadcast(`event: state\ndata: ${'y'.repeat(64_000)}\n\n`);
      await new Promise((r) => setImmediate(r));
    }
    expect(res.writableLength).toBeLessThan(512 * 1024);
    // nothing more is broadcast: only heartbeats (a few bytes) run now
    await until(() => hub.size === 0);
    expect(res.destroyed).toBe(true);
    sock.destroy();
  });

  it('a stream older than its maximum age is ended', async () => {
    const { port, hub } = await start({ heartbeatMs: 20, maxAgeMs: 40 });
    const res = await open(port, 'a');
    res.resume();
    await ended(res);
    expect(hub.size).toBe(0);
  });
});
