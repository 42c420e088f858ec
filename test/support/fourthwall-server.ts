/**
 * A small purpose-built node:http server for Fourthwall client tests: real sockets on 127.0.0.1,
 * port chosen by the OS. Every request is recorded (method, path, query, headers, body and the
 * server-side arrival time from Date.now(), taken when the request head arrives) before the
 * test's handler answers it. Handlers may answer, hang, or reset the socket.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { EventEmitter } from 'node:events';

interface RecordedRequest {
  method: string;
  /** Path without query string. */
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
  /** Date.now() when the request head arrived. */
  arrivedAt: number;
  /** 0-based index among all requests. */
  index: number;
}

export type TestHandler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export interface TestServer {
  url: string;
  requests: RecordedRequest[];
  /** Resolves once `n` requests have fully arrived (body read). */
  waitForRequests(n: number): Promise<void>;
  setHandler(handler: TestHandler): void;
  close(): Promise<void>;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Destroys the request's socket without answering (a connection reset after the request arrived). */
export function resetSocket(res: ServerResponse): void {
  res.socket?.destroy();
}

/** Starts a recording server on 127.0.0.1 (`port` 0 = chosen by the OS). */
export async function startTestServer(handler: TestHandler, port = 0): Promise<TestServer> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const events = new EventEmitter();
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const arrivedAt = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://localhost');
      const rec: RecordedRequest = {
        method: req.method ?? '',
        path: u.pathname,
        query: u.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        arrivedAt,
        index: requests.length,
      };
      requests.push(rec);
      events.emit('request');
      Promise.resolve(current(rec, res)).catch((e: unknown) => {
        if (!res.headersSent) sendJson(res, 599, { code: 'TEST_HANDLER_FAILED', message: String(e) });
      });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}`,
    requests,
    waitForRequests(n) {
      if (requests.length >= n) return Promise.resolve();
      return new Promise((resolve) => {
        const on = () => {
          if (requests.length >= n) {
            events.off('request', on);
            resolve();
          }
        };
        events.on('request', on);
      });
    },
    setHandler(h) {
      current = h;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Largest number of arrivals inside any half-open window [t, t + windowMs) of the sorted times.
 * With integer ms times, two arrivals exactly windowMs apart are in different windows.
 */
export function maxInAnyWindow(times: number[], windowMs: number): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < t.length; hi++) {
    while (t[hi]! - t[lo]! >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}
