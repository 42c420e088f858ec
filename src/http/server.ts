/**
 * The bot's HTTP server: `POST /webhooks/fourthwall` and `GET /healthz`, plus the routes handed in
 * as `routes` (the operator pages: /overlay, /dashboard, see src/web; /verify; /claim).
 *
 * Two surfaces on one port (surfaces.ts): a request for the streamer's own pages (/dashboard,
 * /overlay) that is not local (Host not 127.0.0.1/localhost/GIFTDROP_LOCAL_HOSTS, or carrying a
 * forwarding header) gets 403 before any route sees it; /overlay also answers the overlay key when
 * one is configured. Everything else is public and bounded: `/healthz` per-client rate limit (429;
 * local requests are not limited),
 * at most `maxConcurrentBodies` webhook bodies read at once (503 + Retry-After above it), a cap
 * on open connections, header/request/idle timeouts.
 *
 * Webhooks: the raw body is read (over 1 MiB -> 413, reading stops), verified against whichever
 * secrets are configured BEFORE anything parses it (no match -> 401, nothing changes), parsed
 * (bad envelope -> 400, logged), then answered 200 at once; duplicates (same envelope id) get 200
 * and are ignored. An event whose `createdAt` is older than `maxEventAgeMs` (default 15 minutes) is
 * answered 200 `{ignored:'too old'}` and not handed on (a replay; a genuinely missed event is still
 * fetched by the catch-up poll, which this check does not touch). The event is handed to `onEvent` only after the answer is sent, so slow work
 * never delays the acknowledgement. This module does no giveaway logic.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logging/index.js';
import { parseWebhookEvent, verifyWebhookSignature, type WebhookEvent } from '../fourthwall/webhooks.js';
import { RejectionLog } from './rejections.js';
import { RateLimiter, type RateLimitOptions } from './rate-limit.js';
import { OverlayKey, isLocalRequest, overLimit, refuseOwn, surfaceOf, surfaceOfTarget } from './surfaces.js';

export const MAX_WEBHOOK_BYTES = 1024 * 1024;
/** Webhook bodies read at the same time; more get 503 (Fourthwall retries). */
export const MAX_CONCURRENT_BODIES = 32;
/** A webhook event older than this (its `createdAt`) is not acted on from the webhook path. */
export const MAX_EVENT_AGE_MS = 15 * 60_000;
/** Open connections at most (sockets beyond it are refused by the OS accept loop). */
export const MAX_CONNECTIONS = 1024;
const HEALTH_LIMIT: RateLimitOptions = { perSecond: 20, burst: 40 };

export interface HealthReport {
  status: 'ok';
  mode: 'sandbox' | 'live';
  /** The chat connection's state, or 'degraded' while connected but the bot's lines go unconfirmed. */
  chat: 'connected' | 'connecting' | 'disconnected' | 'degraded';
  /** Why chat is degraded (only then). */
  chatReason?: string;
  openDraws: number;
  /** One line per problem the streamer must fix (credentials refused at start-up), only when any. */
  problems?: string[];
  [extra: string]: unknown;
}

export interface HttpServerOptions {
  host: string;
  port: number;
  logger: Logger;
  secrets: { webhookSecret?: string; appHmacKey?: string };
  /** Called after the 200 was sent. Errors are logged, never thrown back. */
  onEvent(event: WebhookEvent): Promise<void> | void;
  /** True when the event id was seen before (checked before answering, so duplicates are cheap). */
  seenEvent(eventId: string): boolean;
  health(): HealthReport;
  /** Event types the bot acts on; other types are acknowledged even when their data is unfamiliar. */
  handledTypes?: ReadonlySet<string>;
  /** Extra routes (e.g. /verify/<id>), tried in order before the 404; each returns true when it answered. */
  routes?: ReadonlyArray<(req: IncomingMessage, res: ServerResponse) => boolean>;
  /** Extra names that count as this machine for the streamer's own pages (GIFTDROP_LOCAL_HOSTS). */
  localHosts?: ReadonlySet<string>;
  /** GIFTDROP_OVERLAY_KEY: when set, /overlay also answers remote requests carrying it. */
  overlayKey?: string;
  /** Webhook bodies read at once (default MAX_CONCURRENT_BODIES). */
  maxConcurrentBodies?: number;
  /** Oldest webhook event acted on, by its createdAt (default MAX_EVENT_AGE_MS). */
  maxEventAgeMs?: number;
  /** Clock for the event age and the rate limits (default Date.now). */
  now?: () => number;
}

export interface BotHttpServer {
  readonly url: string;
  readonly port: number;
  /** Resolves when every accepted webhook has been handed off and processed. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body?: unknown): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      resolve('too-large');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        chunks.length = 0;
        resolve('too-large');
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!done) resolve(Buffer.concat(chunks, size));
    });
    req.on('error', (err) => {
      if (!done) reject(err);
    });
  });
}

/** The envelope's id and type when it is a well-formed envelope of a type the bot does not handle. */
function unusedEnvelope(body: Buffer, handled: ReadonlySet<string> | undefined): { id: string; type: string } | undefined {
  if (!handled) return undefined;
  try {
    const json = JSON.parse(body.toString('utf8')) as { id?: unknown; type?: unknown };
    if (typeof json.id === 'string' && typeof json.type === 'string' && json.id && !handled.has(json.type))
      return { id: json.id, type: json.type };
  } catch {
    // not JSON: a bad payload
  }
  return undefined;
}

export async function startHttpServer(options: HttpServerOptions): Promise<BotHttpServer> {
  const log = options.logger.child({ module: 'http' });
  const pending = new Set<Promise<void>>();
  const rejections = new RejectionLog(log);
  const now = options.now ?? Date.now;
  const healthLimit = new RateLimiter({ ...HEALTH_LIMIT, now });
  const maxBodies = options.maxConcurrentBodies ?? MAX_CONCURRENT_BODIES;
  const maxAgeMs = options.maxEventAgeMs ?? MAX_EVENT_AGE_MS;
  const localHosts = options.localHosts ?? new Set<string>();
  const overlayKey = options.overlayKey ? new OverlayKey(options.overlayKey) : undefined;
  let bodies = 0;

  const handleWebhook = async (req: IncomingMessage, res: ServerResponse) => {
    if (bodies >= maxBodies) {
      rejections.note('busy', { limit: maxBodies });
      res.setHeader('connection', 'close');
      res.setHeader('retry-after', '1');
      send(res, 503, { error: 'busy' });
      return;
    }
    bodies += 1;
    let body: Buffer | 'too-large';
    try {
      body = await readBody(req, MAX_WEBHOOK_BYTES);
    } finally {
      bodies -= 1;
    }
    if (body === 'too-large') {
      rejections.note('too-large', { limit: MAX_WEBHOOK_BYTES });
      res.setHeader('connection', 'close');
      send(res, 413, { error: 'payload too large' });
      return;
    }
    const verdict = verifyWebhookSignature(body, req.headers, options.secrets);
    if (!verdict.ok) {
      rejections.note('signature', { reason: verdict.reason, bytes: body.length });
      send(res, 401, { error: 'invalid signature' });
      return;
    }
    let event: WebhookEvent;
    try {
      event = parseWebhookEvent(body);
    } catch (err) {
      // A type the bot does not use is acknowledged even when its data is not the shape we know.
      const unused = unusedEnvelope(body, options.handledTypes);
      if (unused) {
        log.debug({ eventId: unused.id, type: unused.type }, 'webhook of an unused type acknowledged and ignored');
        send(res, 200, { ok: true, ignored: true });
        return;
      }
      rejections.note('payload', { reason: (err as Error).message });
      send(res, 400, { error: 'bad payload' });
      return;
    }
    const created = Date.parse(event.createdAt ?? '');
    if (Number.isFinite(created) && now() - created > maxAgeMs) {
      rejections.note('too-old', { eventId: event.id, type: event.type, createdAt: event.createdAt, maxAgeMs });
      send(res, 200, { ok: true, ignored: 'too old' });
      return;
    }
    if (options.seenEvent(event.id)) {
      log.debug({ eventId: event.id, type: event.type }, 'duplicate webhook ignored');
      send(res, 200, { ok: true, duplicate: true });
      return;
    }
    send(res, 200, { ok: true });
    log.debug({ eventId: event.id, type: event.type, scheme: verdict.scheme }, 'webhook accepted');
    const work = (async () => {
      try {
        await options.onEvent(event);
      } catch (err) {
        log.error({ err, eventId: event.id, type: event.type }, 'webhook handling failed');
      }
    })();
    pending.add(work);
    void work.finally(() => pending.delete(work));
  };

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (surfaceOfTarget(req.url ?? '/') === 'own' && !isLocalRequest(req, localHosts)) {
      const key = surfaceOf(path) === 'own' && path.startsWith('/overlay') ? overlayKey?.check(req) : undefined;
      if (!key) return refuseOwn(res);
      if (key === 'query') res.setHeader('set-cookie', overlayKey!.setCookie(req));
    }
    if (path === '/webhooks/fourthwall') {
      if (req.method !== 'POST') return send(res, 405, { error: 'method not allowed' });
      handleWebhook(req, res).catch((err) => {
        log.error({ err }, 'webhook request failed');
        if (!res.headersSent) send(res, 500, { error: 'internal error' });
      });
      return;
    }
    if (path === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
      if (overLimit(healthLimit, req, res, localHosts)) return;
      return send(res, 200, options.health());
    }
    for (const route of options.routes ?? []) if (route(req, res)) return;
    send(res, 404, { error: 'not found' });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;
  server.keepAliveTimeout = 5_000;
  // A socket with nothing moving for this long is closed (event streams turn it off for theirs).
  server.timeout = 30_000;
  server.maxConnections = MAX_CONNECTIONS;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const hostForUrl = options.host.includes(':') ? `[${options.host}]` : options.host;

  return {
    url: `http://${hostForUrl}:${port}`,
    port,
    async idle() {
      while (pending.size) await Promise.allSettled([...pending]);
    },
    async close() {
      rejections.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      while (pending.size) await Promise.allSettled([...pending]);
    },
  };
}
