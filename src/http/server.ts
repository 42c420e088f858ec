/**
 * The bot's HTTP listeners (docs/security.md, surfaces.ts):
 * - the public one on `options.port` (HTTP_PORT, what a tunnel carries): `POST /webhooks/fourthwall`,
 *   `GET /healthz` (limited per client) and the public `routes` (/verify, /claim). It never serves
 *   the streamer's pages, whatever the Host or headers: /overlay... and /dashboard... answer 404.
 * - the streamer's own on `options.local.port` (GIFTDROP_LOCAL_PORT, loopback unless
 *   GIFTDROP_LOCAL_BIND says otherwise): `GET /healthz` and the `local.routes` (/overlay,
 *   /dashboard and their APIs); a request that is not local (surfaces.ts `isLocalRequest`) gets
 *   403, except /overlay... carrying the overlay key when one is configured, and the overlay's
 *   data-free script and style.
 *
 * Contract: each listener is bounded by its own connection cap, header, request and idle
 * timeouts (listener); each public request's client is decided once (`clientKeyOf`) and recorded
 * for the routes. Webhook bodies are bounded by bytes, not by slots a stranger could hold (issue
 * 46: behind a tunnel that adds no header every sender is one client, Fourthwall included); a
 * webhook is verified before anything parses it and answered 200 only once `onEvent` says it is
 * safe (handleWebhook). Does no giveaway logic and keeps no event ids (the event intake does).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from '../logging/index.js';
import {
  hasSignatureShape,
  parseWebhookEvent,
  verifyWebhookSignature,
  type WebhookEvent,
} from '../fourthwall/webhooks.js';
import { RejectionLog } from './rejections.js';
import { RateLimiter, type RateLimitOptions } from './rate-limit.js';
import {
  OverlayKey,
  clientKeyOf,
  clientOf,
  isLocalRequest,
  notOnPublic,
  overLimit,
  isOverlayShellAsset,
  recordClient,
  refuseOwn,
  surfaceOfTarget,
  type TrustProxy,
} from './surfaces.js';

export const MAX_WEBHOOK_BYTES = 1024 * 1024;
/** Webhook body bytes held in memory at once, all reads together (past it, the read holding the most is cut). */
export const MAX_BUFFERED_BODY_BYTES = 32 * 1024 * 1024;
/** A webhook event older than this (its `createdAt`) is not acted on from the webhook path. */
export const MAX_EVENT_AGE_MS = 15 * 60_000;
/**
 * A webhook not safe this long after its request arrived is answered 503 (Fourthwall counts an
 * answer after 2,000 ms as failed anyway; the rest is for the way back through the tunnel).
 */
export const ACK_DEADLINE_MS = 1_500;
/** How far ahead of this machine's clock a webhook's `createdAt` may be. */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;
/** Open connections on the public listener at most (sockets beyond it are closed at once). */
export const MAX_CONNECTIONS = 1024;
/** Open connections on the streamer's own listener at most (OBS, a dashboard tab, their streams). */
export const MAX_LOCAL_CONNECTIONS = 128;
/** A request's headers must have arrived within this long, its whole body within REQUEST_TIMEOUT_MS. */
export const HEADERS_TIMEOUT_MS = 5_000;
export const REQUEST_TIMEOUT_MS = 10_000;
/** A socket with nothing moving for this long is closed (event streams turn it off for theirs). */
export const IDLE_TIMEOUT_MS = 10_000;
/** How often Node checks the two timeouts above (its default, 30 s, let idle sockets pile up). */
const TIMEOUT_CHECK_MS = 1_000;
const HEALTH_LIMIT: RateLimitOptions = { perSecond: 20, burst: 40 };

export interface HealthReport {
  status: 'ok';
  mode: 'sandbox' | 'live';
  /** The chat connection's state, or 'degraded' while connected but the bot's lines go unconfirmed. */
  chat: 'connected' | 'connecting' | 'disconnected' | 'degraded';
  /** Why chat is degraded (only then). */
  chatReason?: string;
  /** Which transport carries chat: `irc` (tmi.js) or `eventsub` (EventSub + Send Chat Message); the `chat.transport` setting. */
  chatTransport?: 'irc' | 'eventsub';
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
  /**
   * Takes a verified webhook's event in and settles once it is safe to acknowledge: resolving is
   * the 200 (`'duplicate'`: answered `{duplicate:true}`), rejecting is a 503 (logged in one line
   * with the error's message; Fourthwall delivers the event again).
   */
  onEvent(event: WebhookEvent): Promise<WebhookVerdict | void> | WebhookVerdict | void;
  /** Optional fast path: true when the event id is already safe (a redelivery is answered 200 at once). */
  seenEvent?(eventId: string): boolean;
  health(): HealthReport;
  /** Event types the bot acts on; other types are acknowledged even when their data is unfamiliar. */
  handledTypes?: ReadonlySet<string>;
  /** Public routes (/verify/<id>, /claim), tried in order before the 404; each returns true when it answered. */
  routes?: ReadonlyArray<HttpRoute>;
  /** The streamer's own listener; without it the streamer's pages are served nowhere. */
  local?: LocalListenerOptions;
  /** GIFTDROP_TRUST_PROXY: who writes a public client's address (default: the last hop, surfaces.ts). */
  trustProxy?: TrustProxy;
  /** Webhook body bytes held at once, all reads together (default MAX_BUFFERED_BODY_BYTES). */
  maxBufferedBodyBytes?: number;
  /** Oldest webhook event acted on, by its createdAt (default MAX_EVENT_AGE_MS). */
  maxEventAgeMs?: number;
  /** How long after its arrival a webhook may wait for `onEvent` before a 503 (default ACK_DEADLINE_MS). */
  ackDeadlineMs?: number;
  /** Clock for the event age and the rate limits (default Date.now). */
  now?: () => number;
}

/** What `onEvent` may resolve with: how the 200 reads (anything else: `{ok:true}`). */
export type WebhookVerdict = 'duplicate' | (string & {});

export type HttpRoute = (req: IncomingMessage, res: ServerResponse) => boolean;

export interface LocalListenerOptions {
  /** GIFTDROP_LOCAL_BIND (default 127.0.0.1). */
  host: string;
  /** GIFTDROP_LOCAL_PORT (0: chosen by the OS). */
  port: number;
  /** The streamer's pages (/overlay, /dashboard), tried in order before the 404. */
  routes: ReadonlyArray<HttpRoute>;
  /** Extra names that count as this machine (GIFTDROP_LOCAL_HOSTS). */
  localHosts?: ReadonlySet<string>;
  /** GIFTDROP_OVERLAY_KEY: when set, /overlay also answers remote requests carrying it. */
  overlayKey?: string;
}

export interface BotHttpServer {
  /** The public listener's address (HTTP_PORT). */
  readonly url: string;
  readonly port: number;
  /** The streamer's own listener's address, when it was started. */
  readonly localUrl?: string;
  readonly localPort?: number;
  /** Resolves when every webhook handed to `onEvent` has settled (one answered 503 for time included). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** A webhook not acknowledged: 503 with Retry-After, so Fourthwall delivers it again. */
function refuse(res: ServerResponse): void {
  res.setHeader('retry-after', '1');
  send(res, 503, { error: 'not saved yet; deliver again' });
}

type Settled<T> = { kind: 'done'; value: T } | { kind: 'failed'; err: unknown } | { kind: 'late' };

/** How `work` settled within `ms` (a timer of its own, cleared as soon as it settles). */
function settleWithin<T>(work: Promise<T>, ms: number): Promise<Settled<T>> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ kind: 'late' }), Math.max(0, ms));
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve({ kind: 'done', value });
      },
      (err: unknown) => {
        clearTimeout(timer);
        resolve({ kind: 'failed', err });
      },
    );
  });
}

function send(res: ServerResponse, status: number, body?: unknown): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The bytes every body read holds together, and the reads holding them (to cut the biggest). */
interface BodyBudget {
  max: number;
  held: number;
  reads: Set<{ size: number; cut(): void }>;
}

/**
 * The body, or why there is none: over `limit`, the client went away (or timed out) before its
 * end, or `cut` (the shared budget ran out and this read held the most).
 */
function readBody(
  req: IncomingMessage,
  limit: number,
  budget: BodyBudget,
): Promise<Buffer | 'too-large' | 'incomplete' | 'cut'> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      resolve('too-large');
      return;
    }
    const chunks: Buffer[] = [];
    let done = false;
    const read = { size: 0, cut: () => finish('cut') };
    budget.reads.add(read);
    const finish = (v: Buffer | 'too-large' | 'incomplete' | 'cut') => {
      if (done) return;
      done = true;
      budget.held -= read.size;
      budget.reads.delete(read);
      chunks.length = 0;
      resolve(v);
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      read.size += chunk.length;
      budget.held += chunk.length;
      if (read.size > limit) return finish('too-large');
      chunks.push(chunk);
      // Past the shared budget, the read holding the most is cut (this one, or a bigger one).
      while (budget.held > budget.max) {
        let biggest = read;
        for (const r of budget.reads) if (r.size > biggest.size) biggest = r;
        biggest.cut();
        if (biggest === read) return;
      }
    });
    req.on('end', () => finish(Buffer.concat(chunks, read.size)));
    // A request that ends without its body ('close' before 'end': the client left or the request
    // timeout cut it) frees its place at once.
    req.on('error', () => finish('incomplete'));
    req.on('close', () => finish('incomplete'));
  });
}

/** The envelope's id and type when it is a well-formed envelope of a type the bot does not handle. */
function unusedEnvelope(
  body: Buffer,
  handled: ReadonlySet<string> | undefined,
): { id: string; type: string } | undefined {
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

/** The server with the streamer's own listener started (`options.local` given). */
export interface BotHttpServerWithPages extends BotHttpServer {
  readonly localUrl: string;
  readonly localPort: number;
}

export async function startHttpServer(
  options: HttpServerOptions & { local: LocalListenerOptions },
): Promise<BotHttpServerWithPages>;
export async function startHttpServer(options: HttpServerOptions): Promise<BotHttpServer>;
export async function startHttpServer(options: HttpServerOptions): Promise<BotHttpServer> {
  const log = options.logger.child({ module: 'http' });
  const pending = new Set<Promise<unknown>>();
  const rejections = new RejectionLog(log);
  const now = options.now ?? Date.now;
  const healthLimit = new RateLimiter({ ...HEALTH_LIMIT, now });
  const budget: BodyBudget = {
    max: options.maxBufferedBodyBytes ?? MAX_BUFFERED_BODY_BYTES,
    held: 0,
    reads: new Set(),
  };
  const maxAgeMs = options.maxEventAgeMs ?? MAX_EVENT_AGE_MS;
  const ackDeadlineMs = options.ackDeadlineMs ?? ACK_DEADLINE_MS;

  /**
   * Webhooks: a request without a signature header that could be one (base64 of 32 bytes, for a
   * configured secret: `hasSignatureShape`) is answered 401 unread. The raw body is then read with
   * no count of slots a stranger could hold (a slow body costs a socket, not Fourthwall's turn),
   * bounded by bytes: at most MAX_BUFFERED_BODY_BYTES for all reads together (past it, the read
   * holding the most is cut: 503 + Retry-After, connection closed) and 1 MiB per body (413). It is
   * verified against whichever secrets are configured
   * BEFORE anything parses it (no match -> 401, nothing changes), parsed (bad envelope -> 400,
   * logged), then handed to `onEvent` and answered only from its verdict: 200 once `onEvent`
   * resolved, that is once the event is safe (its id, and what it opened, synced); a rejection (a
   * save or a sync failed: EIO, ENOSPC) -> 503 with Retry-After and one log line, so Fourthwall
   * delivers it again; not safe within ACK_DEADLINE_MS of its arrival (inside Fourthwall's 2 s) ->
   * 503 the same way while its handling goes on, and its redelivery is answered from that
   * handling. Duplicates (same envelope id, already safe) -> 200 `{duplicate:true}`. `createdAt`
   * older than `maxEventAgeMs` (15 minutes) or more than MAX_CLOCK_SKEW_MS ahead of this clock ->
   * 200 `{ignored:'too old'|'from the future'}`, not handed on (a replay, or a clock that is off;
   * the catch-up poll still fetches a missed event). No `createdAt` (Fourthwall always sends one):
   * handled, and the envelope id's dedupe refuses a replay of it.
   */
  const handleWebhook = async (req: IncomingMessage, res: ServerResponse) => {
    const arrived = performance.now();
    const client = clientOf(req);
    // Checked before a byte of the body is read: no signature that could be one, no read.
    if (!hasSignatureShape(req.headers, options.secrets)) {
      const configured = !!options.secrets.webhookSecret || !!options.secrets.appHmacKey;
      rejections.note('signature', {
        reason: configured
          ? 'no signature header of the right shape (body not read)'
          : 'no webhook secret or app HMAC key configured',
      });
      res.setHeader('connection', 'close');
      send(res, 401, { error: 'invalid signature' });
      return;
    }
    const body = await readBody(req, MAX_WEBHOOK_BYTES, budget);
    if (body === 'cut') {
      rejections.note('busy', { client, heldBytes: budget.max });
      res.setHeader('connection', 'close');
      res.setHeader('retry-after', '1');
      send(res, 503, { error: 'busy' });
      req.destroy();
      return;
    }
    if (body === 'incomplete') {
      rejections.note('incomplete', { client });
      return;
    }
    if (body === 'too-large') {
      rejections.note('too-large', { limit: MAX_WEBHOOK_BYTES });
      res.setHeader('connection', 'close');
      send(res, 413, { error: 'payload too large' });
      return;
    }
    const sig = verifyWebhookSignature(body, req.headers, options.secrets);
    if (!sig.ok) {
      rejections.note('signature', { reason: sig.reason, bytes: body.length });
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
    if (Number.isFinite(created) && created - now() > MAX_CLOCK_SKEW_MS) {
      rejections.note('from-the-future', {
        eventId: event.id,
        type: event.type,
        createdAt: event.createdAt,
        maxSkewMs: MAX_CLOCK_SKEW_MS,
      });
      send(res, 200, { ok: true, ignored: 'from the future' });
      return;
    }
    if (!Number.isFinite(created))
      log.debug(
        { eventId: event.id, type: event.type },
        'webhook without a readable createdAt: handled (its id is the replay guard)',
      );
    if (options.seenEvent?.(event.id)) {
      log.debug({ eventId: event.id, type: event.type }, 'duplicate webhook ignored');
      send(res, 200, { ok: true, duplicate: true });
      return;
    }
    const ids = { eventId: event.id, type: event.type };
    log.debug({ ...ids, scheme: sig.scheme }, 'webhook accepted');
    const work = (async () => options.onEvent(event))();
    pending.add(work);
    void work.then(
      () => pending.delete(work),
      () => pending.delete(work),
    );
    const verdict = await settleWithin(work, ackDeadlineMs - (performance.now() - arrived));
    if (verdict.kind === 'late') {
      log.warn(
        { ...ids, deadlineMs: ackDeadlineMs },
        `webhook ${event.type} not acknowledged (503): it is not saved yet ${ackDeadlineMs} ms after it arrived; Fourthwall delivers it again, answered once it is saved`,
      );
      refuse(res);
      // Its handling goes on; a failure after the answer is said here too (the intake retries it).
      work.catch((err: unknown) =>
        log.error(
          { ...ids, err },
          `webhook ${event.type} answered 503 for time then failed: ${(err as Error).message}`,
        ),
      );
      return;
    }
    if (verdict.kind === 'failed') {
      const err = verdict.err as Error;
      log.error(
        { ...ids, err },
        `webhook ${event.type} not acknowledged (503): ${err.message}; Fourthwall delivers it again`,
      );
      refuse(res);
      return;
    }
    if (verdict.value === 'duplicate') {
      log.debug(ids, 'duplicate webhook ignored');
      send(res, 200, { ok: true, duplicate: true });
      return;
    }
    send(res, 200, { ok: true });
    log.debug(ids, 'webhook acknowledged');
  };

  const publicServer = listener(MAX_CONNECTIONS, (req, res) => {
    recordClient(req, clientKeyOf(req, options.trustProxy));
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (surfaceOfTarget(req.url ?? '/') === 'own') return notOnPublic(res);
    if (path === '/webhooks/fourthwall') {
      if (req.method !== 'POST') return send(res, 405, { error: 'method not allowed' });
      handleWebhook(req, res).catch((err) => {
        log.error({ err }, 'webhook request failed');
        if (!res.headersSent) send(res, 500, { error: 'internal error' });
      });
      return;
    }
    if (path === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
      if (overLimit(healthLimit, req, res)) return;
      return send(res, 200, options.health());
    }
    for (const route of options.routes ?? []) if (route(req, res)) return;
    send(res, 404, { error: 'not found' });
  });

  const local = options.local;
  const localServer = local ? ownListener(local, options.health) : undefined;

  await listen(publicServer, options.port, options.host);
  try {
    if (local && localServer) await listen(localServer, local.port, local.host);
  } catch (err) {
    await closeServer(publicServer);
    throw err;
  }
  const { port } = publicServer.address() as AddressInfo;
  const localPort = localServer ? (localServer.address() as AddressInfo).port : undefined;

  return {
    url: urlOf(options.host, port),
    port,
    ...(local && localPort !== undefined ? { localUrl: urlOf(local.host, localPort), localPort } : {}),
    async idle() {
      while (pending.size) await Promise.allSettled([...pending]);
    },
    async close() {
      rejections.close();
      await Promise.all([closeServer(publicServer), localServer ? closeServer(localServer) : undefined]);
      while (pending.size) await Promise.allSettled([...pending]);
    },
  };
}

/**
 * A listener with the bounds every one of ours has: its own connection cap (public
 * MAX_CONNECTIONS, local MAX_LOCAL_CONNECTIONS: a flood of idle sockets on the public port cannot
 * touch the overlay; on the local one a new connection beyond the cap closes the oldest idle one
 * instead of being refused, `evictIdleBeyond`, so other local programs holding sockets never shut
 * OBS out), headers within HEADERS_TIMEOUT_MS and the whole request within REQUEST_TIMEOUT_MS,
 * checked every second, idle sockets closed after IDLE_TIMEOUT_MS (event streams turn that off for
 * theirs).
 */
function listener(
  maxConnections: number | 'evict-idle',
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Server {
  const server = createServer(
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    },
    handle,
  );
  server.keepAliveTimeout = 5_000;
  server.timeout = IDLE_TIMEOUT_MS;
  if (maxConnections === 'evict-idle') evictIdleBeyond(server, MAX_LOCAL_CONNECTIONS);
  else server.maxConnections = maxConnections;
  return server;
}

/**
 * The streamer's own listener's connection cap (issue 46): every client there is this machine,
 * so a cap that refuses new connections let any local program holding idle sockets shut OBS out.
 * Instead, at `max` open connections a new one closes the OLDEST connection with no request in
 * progress (one that never sent a whole request, or waits between requests); only when every
 * connection is busy (answering, or an event stream: those are bounded by the SSE hub) is the new
 * one closed. The overlay's live stream is always busy, so it is never the one closed.
 */
function evictIdleBeyond(server: Server, max: number): void {
  const open = new Map<Socket, { busy: number }>(); // insertion order: oldest first
  server.on('connection', (socket: Socket) => {
    if (open.size >= max) {
      let idle: Socket | undefined;
      for (const [s, st] of open) {
        if (st.busy === 0) {
          idle = s;
          break;
        }
      }
      if (!idle) return void socket.destroy();
      open.delete(idle);
      idle.destroy();
    }
    open.set(socket, { busy: 0 });
    socket.once('close', () => open.delete(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const st = open.get(req.socket);
    if (!st) return;
    st.busy += 1;
    // Between requests it is idle again, and the newest idle (moved to the end of the age order).
    res.once('close', () => {
      st.busy -= 1;
      if (st.busy === 0 && open.has(req.socket)) {
        open.delete(req.socket);
        open.set(req.socket, st);
      }
    });
  });
}

/** The streamer's own listener: local requests only (the overlay key aside), then its routes. */
function ownListener(o: LocalListenerOptions, health: () => HealthReport): Server {
  const localHosts = o.localHosts ?? new Set<string>();
  const overlayKey = o.overlayKey ? new OverlayKey(o.overlayKey) : undefined;
  return listener('evict-idle', (req, res) => {
    recordClient(req, clientKeyOf(req, { kind: 'none' }));
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (!isLocalRequest(req, localHosts)) {
      // Another machine: only the overlay, and only with GIFTDROP_OVERLAY_KEY (its script and style
      // hold no data; everything else carries `?key=`, on every request: no cookie).
      const overlay =
        overlayKey &&
        surfaceOfTarget(req.url ?? '/') === 'own' &&
        (path === '/overlay' || path.startsWith('/overlay/'));
      if (!overlay || !(isOverlayShellAsset(path) || overlayKey.check(req))) return refuseOwn(res);
    }
    if (path === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) return send(res, 200, health());
    for (const route of o.routes) if (route(req, res)) return;
    send(res, 404, { error: 'not found' });
  });
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function urlOf(host: string, port: number): string {
  const name = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}
