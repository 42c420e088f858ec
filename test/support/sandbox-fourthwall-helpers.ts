/**
 * Test helpers for the Fourthwall sandbox tests: Basic/Bearer headers, a small JSON fetch
 * wrapper, a real local webhook receiver (records raw bodies and headers; scripted answers per
 * delivery, including never answering), HMAC verification done independently with node:crypto,
 * and a predicate wait.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FourthwallSandbox } from '../../src/sandbox/fourthwall/index.js';

export function basic(
  sb: Pick<FourthwallSandbox, 'username' | 'password'>,
  password = sb.password,
): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${sb.username}:${password}`).toString('base64')}` };
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
}

/** fetch + JSON; `body` objects are sent as JSON, strings as-is. */
export async function call(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  let body: string | undefined;
  if (typeof init.body === 'string') body = init.body;
  else if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(url, { method: init.method ?? 'GET', headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** Base64 HMAC-SHA256 of the raw body, computed here independently of the sandbox. */
function expectedSignature(raw: Buffer, key: string): string {
  return createHmac('sha256', Buffer.from(key, 'utf8')).update(raw).digest('base64');
}

export function signatureMatches(raw: Buffer, header: string | string[] | undefined, key: string): boolean {
  if (typeof header !== 'string') return false;
  const a = Buffer.from(expectedSignature(raw, key), 'base64');
  const b = Buffer.from(header, 'base64');
  return a.length === b.length && timingSafeEqual(a, b);
}

interface ReceivedWebhook {
  raw: Buffer;
  headers: IncomingHttpHeaders;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export interface Receiver {
  url: string;
  received: ReceivedWebhook[];
  waitFor(predicate: (w: ReceivedWebhook) => boolean, timeoutMs?: number): Promise<ReceivedWebhook>;
  close(): Promise<void>;
}

/**
 * A webhook receiver on 127.0.0.1:0. `respond(n)` (n = 1-based request count) picks the
 * status to answer, or `hang` to never answer. Default 200.
 */
export async function startReceiver(respond: (n: number) => number | 'hang' = () => 200): Promise<Receiver> {
  const received: ReceivedWebhook[] = [];
  const hanging: ServerResponse[] = [];
  const listeners = new Set<() => void>();
  let n = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      received.push({ raw, headers: req.headers, json: JSON.parse(raw.toString('utf8')) });
      for (const l of [...listeners]) l();
      const answer = respond(++n);
      if (answer === 'hang') {
        hanging.push(res);
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/webhooks/fourthwall`,
    received,
    waitFor(predicate, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const hit = received.find(predicate);
          if (hit) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(hit);
          }
          return hit !== undefined;
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(
            new Error(
              `receiver: no matching webhook within ${timeoutMs} ms (got ${received.map((r) => r.json?.type).join(', ')})`,
            ),
          );
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
    async close() {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Waits until `predicate` holds, checking every few milliseconds; fails after `timeoutMs`. */
export async function until(predicate: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
