/**
 * The local Fourthwall sandbox server: one node:http server on 127.0.0.1 (OS-chosen port unless
 * configured) that behaves like Fourthwall for the bot and its client. It answers the API under
 * both `/open-api/v1.0/` and `/open-api/v1/`, the OAuth token endpoint (also under the Keycloak
 * form `/auth/realms/<realm>/protocol/openid-connect/token`), the public shop site under
 * `/shop`, and the sandbox-only control routes under `/__sandbox/`.
 * Request pipeline for API operations: read body -> route -> auth (401 / 403 for Bearer on
 * Basic-only operations) -> rate rule (delay, never refuse) -> injected faults -> handler.
 * State lives in memory for the life of the server. It is a test and demo double, not a
 * production service: no TLS, no persistence.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { systemClock, type Clock, type TimerHandle } from '../../shared/clock.js';
import { silentLogger, type Logger } from '../../logging/index.js';
import { buildApiRoutes, matchRoute, type ApiRoute } from './api.js';
import { SandboxAuth, type Principal } from './auth.js';
import { createControl, serveControl, type RequestRecord, type SandboxControl } from './control.js';
import { FaultBook } from './faults.js';
import { Gifting } from './gifting.js';
import { ApiError, parseFormOrJson, parseJsonBody, readBody, sendJson } from './http.js';
import { createIdFactory } from './ids.js';
import { ShopSim } from './shop-sim.js';
import { RollingWindowGate, type RateLimit } from './rate-limit.js';
import { buildSeed } from './seed.js';
import { serveSite } from './site.js';
import { ShopState } from './state.js';
import { WebhookHub, type DeliveryRetry } from './webhooks.js';

export interface FourthwallSandboxOptions {
  /** Port to listen on; 0 (default) lets the OS choose. */
  port?: number;
  /** Interface to listen on (default 127.0.0.1). */
  host?: string;
  /** Basic credentials of the API user (default `sandbox-api-user` and a random password). */
  username?: string;
  password?: string;
  /** The shop's webhook secret (default random). */
  webhookSecret?: string;
  /** A platform app HMAC key; when set, deliveries also carry `X-Fourthwall-Hmac-Apps-SHA256`. */
  appHmacKey?: string;
  /** OAuth client (default `app_sandbox` and a random secret). */
  clientId?: string;
  clientSecret?: string;
  /** The rate rule (default 100 per 10 000 ms). */
  rateLimit?: RateLimit;
  /** Entry window of simulated draws in seconds (default 60). */
  drawDurationSeconds?: number;
  /** Business time: timestamps, token expiry, draw expiry (default system clock). */
  clock?: Clock;
  /** Transport timers: rate-rule waits, delivery retries/timeouts, injected delays (default system clock). */
  transportClock?: Clock;
  logger?: Logger;
  /** OAuth access token lifetime in seconds (default 300). */
  tokenLifetimeSeconds?: number;
  /** Webhook delivery retries (default 5 attempts, waits [1000, 2000, 5000, 10000] ms, 2000 ms timeout). */
  deliveryRetry?: Partial<DeliveryRetry>;
  /** Makes generated ids reproducible. */
  seed?: string;
  /** Accept loopback webhook URLs on any port (default true; false applies Fourthwall's IP/port rules to them too). */
  allowLoopbackWebhooks?: boolean;
}

export interface FourthwallSandbox {
  /** `http://127.0.0.1:PORT/open-api/v1.0` */
  apiUrl: string;
  /** The same API under the spec's prefix, `http://127.0.0.1:PORT/open-api/v1`. */
  apiUrlV1: string;
  /** The public shop site, `http://127.0.0.1:PORT/shop`. */
  shopUrl: string;
  /** The OAuth token endpoint. */
  tokenUrl: string;
  port: number;
  username: string;
  password: string;
  webhookSecret: string;
  appHmacKey?: string;
  clientId: string;
  clientSecret: string;
  /** The in-memory shop (read it; change it through the API or `control`). */
  state: ShopState;
  control: SandboxControl;
  close(): Promise<void>;
}

const API_PREFIXES = ['/open-api/v1.0', '/open-api/v1'];
const SHOP_PATH = '/shop';
const KEYCLOAK_TOKEN = /^\/auth\/realms\/[^/]+\/protocol\/openid-connect\/token$/;

function stripPrefix(path: string): string | undefined {
  for (const p of API_PREFIXES) {
    if (path === p) return '/';
    if (path.startsWith(`${p}/`)) return path.slice(p.length);
  }
  return undefined;
}

/** Starts a sandbox; resolves once it listens. */
export async function startFourthwallSandbox(options: FourthwallSandboxOptions = {}): Promise<FourthwallSandbox> {
  const clock = options.clock ?? systemClock;
  const transport = options.transportClock ?? systemClock;
  const logger = (options.logger ?? silentLogger()).child({ module: 'sandbox-fourthwall' });
  const ids = createIdFactory(options.seed);
  const username = options.username ?? 'sandbox-api-user';
  const password = options.password ?? ids.secret();
  const webhookSecret = options.webhookSecret ?? ids.secret();
  const clientId = options.clientId ?? 'app_sandbox';
  const clientSecret = options.clientSecret ?? ids.secret();
  const rateLimit = options.rateLimit ?? { limit: 100, intervalMs: 10_000 };
  const retry: DeliveryRetry = {
    attempts: options.deliveryRetry?.attempts ?? 5,
    delaysMs: options.deliveryRetry?.delaysMs ?? [1000, 2000, 5000, 10_000],
    timeoutMs: options.deliveryRetry?.timeoutMs ?? 2000,
  };
  if (!Number.isInteger(retry.attempts) || retry.attempts < 1)
    throw new RangeError('deliveryRetry.attempts must be >= 1');

  const requests: RequestRecord[] = [];
  const sockets = new Set<Socket>();
  const hung = new Set<ServerResponse>();
  let app: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined;

  const server: Server = createServer((req, res) => {
    if (!app) {
      sendJson(res, 503, { code: 'SANDBOX_STARTING' });
      return;
    }
    void app(req, res);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const hostForUrl = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const origin = `http://${hostForUrl}:${addr.port}`;
  const apiUrl = `${origin}${API_PREFIXES[0]}`;
  const shopUrl = `${origin}${SHOP_PATH}`;

  const state = new ShopState(buildSeed(shopUrl));
  const hub = new WebhookHub({
    shopId: state.shop.id,
    webhookSecret,
    ...(options.appHmacKey !== undefined ? { appHmacKey: options.appHmacKey } : {}),
    retry,
    uriRules: { allowLoopback: options.allowLoopbackWebhooks ?? true },
    clock,
    transportClock: transport,
    ids,
    logger,
  });
  const gifting = new Gifting({
    state,
    hub,
    clock,
    ids,
    shopUrl,
    drawDurationSeconds: options.drawDurationSeconds ?? 60,
    logger,
  });
  const auth = new SandboxAuth(
    {
      username,
      password,
      clientId,
      clientSecret,
      tokenLifetimeSeconds: options.tokenLifetimeSeconds ?? 300,
      refreshLifetimeSeconds: 30 * 24 * 3600,
      authCodeLifetimeSeconds: 600,
    },
    clock,
    ids,
  );
  const gate = new RollingWindowGate(rateLimit, transport);
  const faults = new FaultBook();
  const routes: ApiRoute[] = buildApiRoutes({
    state,
    gifting,
    hub,
    ids,
    clock,
    webhookSecret,
    uriRules: { allowLoopback: options.allowLoopbackWebhooks ?? true },
  });
  const shop = new ShopSim({ state, hub, ids, clock });
  const control = createControl({ state, gifting, hub, auth, faults, gate, requests, waitClock: systemClock, shop });
  let closed = false;

  const faultDelays = new Set<{ handle: TimerHandle; resolve(): void }>();
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const entry = {
        handle: transport.setTimeout(() => {
          faultDelays.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      faultDelays.add(entry);
    });

  const apiOperation = async (
    req: IncomingMessage,
    res: ServerResponse,
    rel: string,
    query: URLSearchParams,
    raw: Buffer,
    entry: RequestRecord,
  ): Promise<void> => {
    const method = req.method ?? 'GET';
    const match = matchRoute(routes, method, rel);
    if (!match) throw new ApiError(404, 'NOT_FOUND', { path: entry.path });
    if ('methodNotAllowed' in match) throw new ApiError(405, 'METHOD_NOT_ALLOWED', { method });
    const { route, params } = match;
    entry.operation = route.operation;
    const who = auth.authenticate(req.headers.authorization);
    if (!who.ok) {
      const challenge =
        who.reason === 'expired'
          ? 'Bearer error="invalid_token", error_description="token expired"'
          : 'Basic realm="Fourthwall"';
      throw new ApiError(401, 'UNAUTHORIZED', {}, { 'www-authenticate': challenge });
    }
    const principal: Principal = who.principal;
    if (route.auth === 'B' && principal.scheme !== 'basic') {
      throw new ApiError(403, 'FORBIDDEN', { reason: 'this operation accepts Basic credentials only' });
    }
    const admission = await gate.acquire();
    entry.delayedMs = admission.delayedMs;
    entry.admittedAt = admission.admittedAt;
    if (closed) return;
    const fault = faults.take(route.operation);
    if (fault?.kind === 'status') {
      sendJson(res, fault.status, {
        code: fault.status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST',
        injected: true,
      });
      return;
    }
    if (fault?.kind === 'rate-limit') {
      sendJson(
        res,
        429,
        { code: 'TOO_MANY_REQUESTS', injected: true },
        { 'retry-after': String(fault.retryAfterSeconds) },
      );
      return;
    }
    if (fault?.kind === 'hang') {
      entry.status = 'hung';
      hung.add(res);
      return;
    }
    if (fault?.kind === 'delay') await sleep(fault.delayMs);
    if (closed) return;
    const result = route.handler({ params, query, json: () => parseJsonBody(raw) });
    if (fault?.kind === 'drop-after-processing') {
      entry.status = 'dropped';
      req.socket.destroy();
      return;
    }
    sendJson(res, result.status, result.body);
  };

  app = async (req, res) => {
    const started = transport.now();
    const url = new URL(req.url ?? '/', origin);
    const path = url.pathname;
    const method = req.method ?? 'GET';
    const entry: RequestRecord = { method, path, status: 0, time: new Date(started).toISOString(), delayedMs: 0 };
    requests.push(entry);
    res.on('finish', () => {
      if (typeof entry.status === 'number') entry.status = res.statusCode;
      entry.durationMs = transport.now() - started;
      logger.debug({ method, path, status: entry.status, durationMs: entry.durationMs }, 'sandbox request');
    });
    res.on('close', () => {
      if (!res.writableFinished && entry.status === 0) entry.status = 'aborted';
    });
    try {
      const raw = await readBody(req);
      if (path.startsWith('/__sandbox/')) {
        if (!auth.isBasic(req.headers.authorization)) {
          throw new ApiError(401, 'UNAUTHORIZED', {}, { 'www-authenticate': 'Basic realm="Fourthwall sandbox"' });
        }
        const out = serveControl(control, method, path.slice('/__sandbox'.length), () => parseJsonBody(raw));
        sendJson(res, out.status, out.body);
        return;
      }
      if (path === SHOP_PATH || path.startsWith(`${SHOP_PATH}/`)) {
        serveSite(
          { state, gifting, auth, shopUrl, clientId },
          req,
          res,
          path.slice(SHOP_PATH.length),
          url.searchParams,
        );
        return;
      }
      const rel = stripPrefix(path);
      if ((rel === '/platform/token' || KEYCLOAK_TOKEN.test(path)) && method === 'POST') {
        const result = auth.exchange(parseFormOrJson(raw, req.headers['content-type']));
        if (result.ok) sendJson(res, 200, result.body, { 'cache-control': 'no-store' });
        else
          sendJson(res, result.status, {
            code: result.error.toUpperCase(),
            error: result.error,
            error_description: result.description,
          });
        return;
      }
      if (rel === undefined) throw new ApiError(404, 'NOT_FOUND', { path });
      await apiOperation(req, res, rel, url.searchParams, raw, entry);
    } catch (err) {
      if (err instanceof ApiError) {
        sendJson(res, err.status, err.body, err.headers);
        return;
      }
      logger.error({ err, method, path }, 'sandbox handler failed');
      sendJson(res, 500, { code: 'INTERNAL_SERVER_ERROR' });
    }
  };

  logger.info({ apiUrl, shopUrl }, 'fourthwall sandbox listening');

  return {
    apiUrl,
    apiUrlV1: `${origin}${API_PREFIXES[1]}`,
    shopUrl,
    tokenUrl: `${apiUrl}/platform/token`,
    port: addr.port,
    username,
    password,
    webhookSecret,
    ...(options.appHmacKey !== undefined ? { appHmacKey: options.appHmacKey } : {}),
    clientId,
    clientSecret,
    state,
    control,
    async close() {
      if (closed) return;
      closed = true;
      gifting.shutdown();
      hub.close();
      gate.close();
      for (const d of faultDelays) {
        d.handle.cancel();
        d.resolve();
      }
      faultDelays.clear();
      for (const res of hung) res.destroy();
      hung.clear();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await done;
    },
  };
}
