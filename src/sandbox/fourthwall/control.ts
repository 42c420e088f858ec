/**
 * The control surface of the Fourthwall sandbox, for tests and demos: a programmatic object
 * (simulate a gift purchase, go live, expire a draw, redeem or close a prize, issue an OAuth code, inject faults, read the
 * delivery and request logs, wait for a delivery) and the same over HTTP under `/__sandbox/...`
 * for another process. HTTP control routes require the sandbox's Basic credentials (checked by
 * the server). None of this exists on the real service.
 */
import type { Clock } from '../../shared/clock.js';
import type { SandboxAuth } from './auth.js';
import type { FaultBook, FaultRule, FaultSpec } from './faults.js';
import { CLOSED_GIFT_STATUSES, type ClosedGiftStatus, type Gifting, type GiftPurchaseInput } from './gifting.js';
import { ApiError, asObject, invalid, optionalString } from './http.js';
import type { RollingWindowGate } from './rate-limit.js';
import type { ShopState } from './state.js';
import type { Gift, GiveawayLink, Order } from './types.js';
import { serveShopSim, type ShopSimControl } from './shop-sim.js';
import type { DeliveryRecord, WebhookFaultSpec, WebhookHub } from './webhooks.js';

/** One request the sandbox received. */
export interface RequestRecord {
  method: string;
  /** Path without the query string. */
  path: string;
  /** Operation name when the path is an API operation. */
  operation?: string;
  /** HTTP status answered, or `dropped` / `hung` / `aborted` (client went away), 0 while pending. */
  status: number | 'dropped' | 'hung' | 'aborted';
  /** ISO time the request arrived (transport clock). */
  time: string;
  /** Milliseconds the rate rule held it back. */
  delayedMs: number;
  /** When the rate rule admitted it (ms since the epoch, transport clock); API operations only. */
  admittedAt?: number;
  /** Milliseconds from arrival to answer. */
  durationMs?: number;
}

export interface BroadcasterInfo {
  broadcasterId: string;
  broadcasterLogin: string;
  thumbnailUrl?: string;
}

/** Operation fault helpers; `operation` is a route's operation name (see `ApiRoute`) or `*`. */
export interface FaultControl {
  inject(operation: string, spec: FaultSpec): void;
  /** The next `times` calls answer `status` (default 503) without being processed. */
  fail(operation: string, times?: number, status?: number): void;
  /** The next `times` calls answer 429 with `Retry-After: retryAfterSeconds`. */
  rateLimit(operation: string, times?: number, retryAfterSeconds?: number): void;
  /** The next `times` calls wait `delayMs` before being processed. */
  delay(operation: string, delayMs: number, times?: number): void;
  /** The next `times` calls are accepted and never answered (until the sandbox closes). */
  hang(operation: string, times?: number): void;
  /** The next `times` calls are processed, then the connection is dropped without an answer. */
  dropAfterProcessing(operation: string, times?: number): void;
  pending(): FaultRule[];
  clear(): void;
}

/** Webhook delivery fault helpers (`type` limits a fault to one event type). */
export interface WebhookFaultControl {
  /** The next `times` matching events are delivered twice (same event id). */
  duplicate(options?: { type?: string; times?: number }): void;
  /** The next matching event is held and delivered right after the following event. */
  outOfOrder(options?: { type?: string; times?: number }): void;
  /** The next `times` matching events wait `delayMs` before their first attempt. */
  delay(delayMs: number, options?: { type?: string; times?: number }): void;
  /** The next `times` matching events are never sent (Fourthwall lists them as FAILED in GET /webhook-events). */
  drop(options?: { type?: string; times?: number }): void;
  /** Sends held events now. */
  releaseHeld(): void;
  clear(): void;
}

export interface SandboxControl {
  /** A supporter buys `quantity` gifts (shop must be live): returns the purchase and its draw. */
  simulateGiftPurchase(input: GiftPurchaseInput): { purchase: Record<string, unknown>; draw: Record<string, unknown> };
  /** Marks the stream started/ended, like `PUT /streaming/start|end`. */
  setLive(live: boolean, broadcaster?: BroadcasterInfo): Record<string, unknown>;
  /** Closes an open draw now with no winners (GIFT_DRAW_ENDED) and opens its REDO draw. */
  expireDraw(drawId: string): { ended: Record<string, unknown>; redo?: Record<string, unknown> };
  /** A winner redeems a gift (draw gift with a winner, or a giveaway link): places an order. */
  redeemGift(giftId: string): Order;
  /** The shop closes a prize not redeemed yet (a link: CANCELLED; a gift: `as`, default CANCELLED); no webhook. */
  closeGift(giftId: string, as?: ClosedGiftStatus): Gift | GiveawayLink;
  /** A single-use OAuth authorization code, as after the user's consent. */
  issueAuthCode(redirectUri?: string): string;
  /** Expires every issued access token now. */
  expireAccessTokens(): void;
  /** Emits any event type with any data to subscribed webhooks (`testMode`: the dashboard's "test" webhook). */
  emitEvent(type: string, data: unknown, options?: { testMode?: boolean }): DeliveryRecord[];
  faults: FaultControl;
  webhookFaults: WebhookFaultControl;
  /** Lists `GET /webhook-events` oldest first instead of newest first (the API documents no order). */
  setEventListOrder(order: 'newest-first' | 'oldest-first'): void;
  /** Every delivery so far (live records: they update as attempts happen). */
  readonly deliveries: readonly DeliveryRecord[];
  /** Every request so far. */
  readonly requests: readonly RequestRecord[];
  /** Resolves with the first delivery satisfying `predicate`; rejects after `timeoutMs` (default 5000). */
  waitForDelivery(predicate: (d: DeliveryRecord) => boolean, timeoutMs?: number): Promise<DeliveryRecord>;
  /** Requests currently held back by the rate rule. */
  rateLimitWaiting(): number;
  /** Supporters: paid orders (with PII), donations, memberships, thank-yous, promotion status. */
  shop: ShopSimControl;
}

export interface ControlDeps {
  state: ShopState;
  gifting: Gifting;
  hub: WebhookHub;
  auth: SandboxAuth;
  faults: FaultBook;
  gate: RollingWindowGate;
  requests: RequestRecord[];
  /** Real-time clock for waitForDelivery's timeout. */
  waitClock: Clock;
  shop: ShopSimControl;
}

const DEFAULT_BROADCASTER: BroadcasterInfo = {
  broadcasterId: '100000001',
  broadcasterLogin: 'sandbox_streamer',
  thumbnailUrl: 'https://static-cdn.jtvnw.net/previews-ttv/live_user_sandbox_streamer-{width}x{height}.jpg',
};

/** Builds the programmatic control object. */
export function createControl(d: ControlDeps): SandboxControl {
  const wf = (kind: WebhookFaultSpec['kind'], o: { type?: string; times?: number } = {}, delayMs?: number): void =>
    d.hub.addFault({
      kind,
      ...(o.type !== undefined ? { type: o.type } : {}),
      ...(o.times !== undefined ? { times: o.times } : {}),
      ...(delayMs !== undefined ? { delayMs } : {}),
    });
  return {
    simulateGiftPurchase: (input) => d.gifting.simulatePurchase(input),
    setLive(live, broadcaster) {
      if (live) {
        const b = broadcaster ?? DEFAULT_BROADCASTER;
        d.state.streaming = { type: 'TWITCH', status: 'ONLINE', ...b };
      } else {
        d.state.streaming = { ...d.state.streaming, status: 'OFFLINE' };
      }
      return { shopId: d.state.shop.id, services: [{ ...d.state.streaming }] };
    },
    expireDraw: (id) => d.gifting.expire(id),
    redeemGift: (id) => d.gifting.redeem(id),
    closeGift: (id, as) => d.gifting.closePrize(id, as),
    issueAuthCode: (redirectUri) => d.auth.issueAuthCode(redirectUri),
    expireAccessTokens: () => d.auth.expireAccessTokens(),
    emitEvent: (type, data, options) => d.hub.emit(type, data, options),
    faults: {
      inject: (op, spec) => d.faults.add(op, spec),
      fail: (op, times = 1, status = 503) => d.faults.add(op, { kind: 'status', times, status }),
      rateLimit: (op, times = 1, retryAfterSeconds = 1) =>
        d.faults.add(op, { kind: 'rate-limit', times, retryAfterSeconds }),
      delay: (op, delayMs, times = 1) => d.faults.add(op, { kind: 'delay', times, delayMs }),
      hang: (op, times = 1) => d.faults.add(op, { kind: 'hang', times }),
      dropAfterProcessing: (op, times = 1) => d.faults.add(op, { kind: 'drop-after-processing', times }),
      pending: () => d.faults.pending(),
      clear: () => d.faults.clear(),
    },
    webhookFaults: {
      duplicate: (o) => wf('duplicate', o),
      outOfOrder: (o) => wf('hold', o),
      delay: (ms, o) => wf('delay', o, ms),
      drop: (o) => wf('drop', o),
      releaseHeld: () => d.hub.releaseHeld(),
      clear: () => d.hub.clearFaults(),
    },
    setEventListOrder: (order) => void (d.hub.listOrder = order),
    get deliveries() {
      return d.hub.deliveries;
    },
    get requests() {
      return d.requests;
    },
    waitForDelivery: (predicate, timeoutMs = 5000) => d.hub.waitFor(predicate, timeoutMs, d.waitClock),
    rateLimitWaiting: () => d.gate.waiting(),
    shop: d.shop,
  };
}

function optionalInt(obj: Record<string, unknown>, field: string): number | undefined {
  const v = obj[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(field, 'must be a number');
  return v;
}

function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof RangeError) throw new ApiError(400, 'VALIDATION_ERROR', { reason: err.message });
    throw err;
  }
}

/**
 * Serves `/__sandbox/<rest>` (credentials already checked). `json` parses the body lazily.
 * Returns the status and body to answer.
 */
export function serveControl(
  control: SandboxControl,
  method: string,
  rest: string,
  json: () => unknown,
): { status: number; body?: unknown } {
  const body = (): Record<string, unknown> => (method === 'GET' || method === 'DELETE' ? {} : asObject(json()));
  const r = `${method} ${rest}`;
  if (r === 'POST /gift-purchases') {
    const b = body();
    const quantity = optionalInt(b, 'quantity') ?? 1;
    const durationSeconds = optionalInt(b, 'durationSeconds');
    const productId = optionalString(b, 'productId');
    const username = optionalString(b, 'username');
    const message = optionalString(b, 'message');
    return {
      status: 201,
      body: control.simulateGiftPurchase({
        quantity,
        ...(durationSeconds !== undefined ? { durationSeconds } : {}),
        ...(productId !== undefined ? { productId } : {}),
        ...(username !== undefined ? { username } : {}),
        ...(message !== undefined ? { message } : {}),
      }),
    };
  }
  if (r === 'PUT /live') {
    const b = body();
    if (typeof b['live'] !== 'boolean') throw invalid('live', 'must be a boolean');
    const id = optionalString(b, 'broadcasterId');
    const login = optionalString(b, 'broadcasterLogin');
    return {
      status: 200,
      body: control.setLive(b['live'], id && login ? { broadcasterId: id, broadcasterLogin: login } : undefined),
    };
  }
  const expire = /^\/draws\/([^/]+)\/expire$/.exec(rest);
  if (method === 'POST' && expire)
    return { status: 200, body: control.expireDraw(decodeURIComponent(expire[1] as string)) };
  const redeem = /^\/gifts\/([^/]+)\/redeem$/.exec(rest);
  if (method === 'POST' && redeem)
    return { status: 200, body: control.redeemGift(decodeURIComponent(redeem[1] as string)) };
  const close = /^\/gifts\/([^/]+)\/close$/.exec(rest);
  if (method === 'POST' && close) {
    const as = optionalString(body(), 'status') ?? 'CANCELLED';
    if (!(CLOSED_GIFT_STATUSES as readonly string[]).includes(as))
      throw invalid('status', `must be one of ${CLOSED_GIFT_STATUSES.join(', ')}`);
    return { status: 200, body: control.closeGift(decodeURIComponent(close[1] as string), as as ClosedGiftStatus) };
  }
  if (r === 'POST /auth-codes') {
    const redirectUri = optionalString(body(), 'redirectUri');
    return { status: 201, body: { code: control.issueAuthCode(redirectUri) } };
  }
  if (r === 'POST /access-tokens/expire') {
    control.expireAccessTokens();
    return { status: 204 };
  }
  if (r === 'POST /events') {
    const b = body();
    if (typeof b['type'] !== 'string') throw invalid('type', 'must be a string');
    const records = control.emitEvent(b['type'], b['data'] ?? {}, { testMode: b['testMode'] === true });
    return { status: 201, body: { eventIds: records.map((x) => x.eventId) } };
  }
  if (r === 'POST /faults') {
    const b = body();
    if (typeof b['operation'] !== 'string') throw invalid('operation', 'must be an operation name or *');
    const spec = b as unknown as FaultSpec;
    guard(() => control.faults.inject(b['operation'] as string, spec));
    return { status: 201, body: { pending: control.faults.pending() } };
  }
  if (r === 'GET /faults') return { status: 200, body: { pending: control.faults.pending() } };
  if (r === 'DELETE /faults') {
    control.faults.clear();
    return { status: 204 };
  }
  if (r === 'POST /webhook-faults') {
    const b = body();
    const type = optionalString(b, 'type');
    const times = optionalInt(b, 'times');
    const opts = { ...(type !== undefined ? { type } : {}), ...(times !== undefined ? { times } : {}) };
    guard(() => {
      if (b['kind'] === 'duplicate') control.webhookFaults.duplicate(opts);
      else if (b['kind'] === 'out-of-order') control.webhookFaults.outOfOrder(opts);
      else if (b['kind'] === 'delay') control.webhookFaults.delay(optionalInt(b, 'delayMs') ?? 0, opts);
      else if (b['kind'] === 'drop') control.webhookFaults.drop(opts);
      else throw new RangeError('kind must be duplicate, out-of-order, delay or drop');
    });
    return { status: 201 };
  }
  if (r === 'POST /webhook-faults/release') {
    control.webhookFaults.releaseHeld();
    return { status: 204 };
  }
  if (r === 'DELETE /webhook-faults') {
    control.webhookFaults.clear();
    return { status: 204 };
  }
  if (r === 'GET /deliveries') return { status: 200, body: { deliveries: control.deliveries } };
  if (r === 'GET /requests') return { status: 200, body: { requests: control.requests } };
  const sim = serveShopSim(control.shop, method, rest, json);
  if (sim) return sim;
  throw new ApiError(404, 'NOT_FOUND');
}
