/**
 * FourthwallTransport: the core every FourthwallClient call goes through - limiter, auth, deadline,
 * attempts, retries, schema check - over undici. Subclasses (client-gifting.ts, client-commerce.ts,
 * client.ts) call `json(key, request, schema)` or `execute(key, request)` with a key of the
 * operations table; this module owns no operation of its own.
 *
 * Contract:
 * - every request (API calls, token refreshes, the product feed) passes the client's one
 *   sliding-window limiter (rate-limit.ts) and waits there, by priority (`gate`): a draw's own
 *   calls before ordinary ones, background work after both;
 * - each call has a deadline (`deadlineMs`: queueing, attempts and backoff) and each attempt a
 *   timeout (`timeoutMs`); network errors, 5xx and 429 (`Retry-After` honoured) are retried with
 *   jittered backoff, but a NON-idempotent operation (finishDraw, createGiveawayLinks, ...) is never
 *   re-sent once it may have reached the server: FourthwallOutcomeUnknownError;
 * - a 401 with an OAuth token refreshes it once (shared) and re-sends once; another 401/403 is
 *   FourthwallAuthError; tokens obtained at runtime reach the logger's scrubber before use;
 * - answers are checked with the zod wire schemas (FourthwallSchemaError); `signal` ends every call
 *   in flight, queued or waiting at once; logs method, path (no query), status, attempt, duration
 *   at debug, never headers, bodies, query strings or credentials.
 * Does not: define operations (client-*.ts), build requests (client-request.ts), map to the domain's
 * ShopPort / ShopError (an adapter does), or verify webhooks (webhooks.ts).
 */
import type { Dispatcher } from 'undici';
import PQueue from 'p-queue';
import { undici, type Undici } from '../http-client/undici.js';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { systemClock, type Clock, type TimerHandle } from '../shared/clock.js';
import { backoffDelay, sleep, type Backoff } from '../shared/retry.js';
import { registerSecret } from '../logging/index.js';
import { jsonOrUndefined } from '../http-client/json.js';
import { cryptoRandom, type RandomSource } from '../shared/random.js';
import {
  createAuthProvider,
  type AuthConfig,
  type AuthHeader,
  type AuthProvider,
  type TokenTransport,
} from './auth.js';
import {
  FourthwallAuthError,
  FourthwallError,
  FourthwallNetworkError,
  FourthwallOutcomeUnknownError,
  FourthwallSchemaError,
  FourthwallTimeoutError,
  FourthwallTokenError,
  type FourthwallCallInfo,
} from './errors.js';
import {
  NOT_SENT_CODES,
  classifyStatus,
  errCode,
  normaliseBase,
  queryString,
  readBody,
  type Attempt,
  type CallRequest,
} from './client-request.js';
import { OPERATIONS, buildPath, type OperationKey } from './operations.js';
import { DEFAULT_RATE_LIMIT, SlidingWindowLimiter, type Permit, type RateLimit } from './rate-limit.js';
import * as S from './schemas.js';

/** Default API root. */
export const DEFAULT_API_URL = 'https://api.fourthwall.com/open-api/v1.0';

export interface RetryOptions {
  /** Attempts per call, including the first (default 4). */
  maxAttempts?: number;
  /** First backoff delay (default 250 ms); doubles each retry. */
  baseDelayMs?: number;
  /** Cap of one backoff delay (default 5000 ms). `Retry-After` may ask for longer. */
  maxDelayMs?: number;
}

export interface FourthwallClientOptions {
  /** API root, e.g. `https://api.fourthwall.com/open-api/v1.0`. */
  apiUrl: string;
  /** Credentials, or a ready AuthProvider. */
  auth: AuthConfig | AuthProvider;
  /** Client-side budget (default 100 per 10 s). */
  rateLimit?: RateLimit;
  logger?: Logger;
  /** Per attempt (default 10 000 ms). */
  timeoutMs?: number;
  /** Per call, including queueing and retries (default 60 000 ms). */
  deadlineMs?: number;
  retry?: RetryOptions;
  userAgent?: string;
  clock?: Clock;
  /** Jitter source (default crypto). */
  random?: RandomSource;
  /** undici dispatcher to use (default: the client's own Agent, closed by `close()`). */
  dispatcher?: Dispatcher;
  /** Largest response body read (default 5 MiB). */
  maxResponseBytes?: number;
  /** Told every OAuth token obtained at runtime (default: registered with `logger`'s scrubber). */
  registerSecret?: (value: string) => void;
  /** Ends every call in flight, queued or waiting to retry at once when it aborts; no new attempt starts. */
  signal?: AbortSignal;
}

/**
 * The order calls ask the limiter in (p-queue priority, higher first): what a running draw waits on,
 * then ordinary calls, then background refreshes and polls.
 */
const CALL_PRIORITY = { draw: 2, normal: 1, background: 0 } as const;
const DRAW_CALLS: ReadonlySet<string> = new Set<OperationKey>([
  'finishDraw',
  'getDraw',
  'createGiveawayLinks',
  'getGiveawayPackage',
  'getGiftPurchase',
]);
const BACKGROUND_CALLS: ReadonlySet<string> = new Set<OperationKey>([
  'listProducts',
  'getProduct',
  'fetchProductFeed',
  'listPromotions',
  'listOrders',
  'listWebhookEvents',
  'getGiftingConfig',
]);

function priorityOf(key: string): number {
  if (DRAW_CALLS.has(key)) return CALL_PRIORITY.draw;
  return BACKGROUND_CALLS.has(key) ? CALL_PRIORITY.background : CALL_PRIORITY.normal;
}

/** The transport core of the Fourthwall client (see the module header); FourthwallClient extends it. */
export class FourthwallTransport {
  private readonly apiUrl: string;
  private readonly auth: AuthProvider;
  private readonly limiter: SlidingWindowLimiter;
  /**
   * Who asks the limiter next (p-queue): one at a time, highest priority first, then in order: a
   * draw's own calls (finish, read-back, links, token refresh) before ordinary ones, background work
   * (catalog refresh, product feed, promotions, order feed, the catch-up poll) after both, so a
   * finish never waits behind a queued catalog refresh; the limiter says when.
   */
  private readonly gate = new PQueue({ concurrency: 1 });
  private readonly log: Logger | undefined;
  private readonly clock: Clock;
  private readonly random: RandomSource;
  /** Created with undici on the first request unless one was given. */
  private dispatcher: Dispatcher | undefined;
  private readonly ownsDispatcher: boolean;
  private readonly timeoutMs: number;
  private readonly deadlineMs: number;
  private readonly maxAttempts: number;
  private readonly backoff: Backoff;
  private readonly userAgent: string;
  private readonly maxResponseBytes: number;
  private readonly signal: AbortSignal | undefined;

  constructor(options: FourthwallClientOptions) {
    this.signal = options.signal;
    this.apiUrl = normaliseBase(options.apiUrl, 'apiUrl');
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? cryptoRandom;
    this.log = options.logger?.child({ module: 'fourthwall' });
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.deadlineMs = options.deadlineMs ?? 60_000;
    this.maxAttempts = Math.max(1, options.retry?.maxAttempts ?? 4);
    this.backoff = { baseMs: options.retry?.baseDelayMs ?? 250, maxMs: options.retry?.maxDelayMs ?? 5_000 };
    this.userAgent = options.userAgent ?? 'giftdrop/0.1';
    this.maxResponseBytes = options.maxResponseBytes ?? 5 * 1024 * 1024;
    this.limiter = new SlidingWindowLimiter(options.rateLimit ?? DEFAULT_RATE_LIMIT, this.clock);
    this.ownsDispatcher = !options.dispatcher;
    this.dispatcher = options.dispatcher;
    const isProvider = typeof (options.auth as AuthProvider).headerFor === 'function';
    this.auth = isProvider
      ? (options.auth as AuthProvider)
      : createAuthProvider(options.auth as AuthConfig, {
          clock: this.clock,
          transport: this.tokenTransport(),
          defaultTokenUrl: `${this.apiUrl}/platform/token`,
          logger: this.log,
          registerSecret:
            options.registerSecret ?? ((value) => options.logger && registerSecret(options.logger, value)),
        });
  }

  /** Secret values of the configured credentials (for `createLogger({ secrets })`). */
  secrets(): string[] {
    return this.auth.secrets();
  }

  /** Requests waiting for the rate limiter right now (in p-queue's line or at the limiter). */
  get queued(): number {
    return this.gate.size + this.limiter.waiting;
  }

  /** A permit of the limiter, asked for in priority order (the gate); rejects when `signal` aborts first. */
  private permit(priority: number, signal?: AbortSignal): Promise<Permit> {
    return this.gate.add(({ signal: s }) => this.limiter.acquire(s), { priority, ...(signal ? { signal } : {}) });
  }

  /** Closes the client's own connection pool. */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher?.close();
  }

  /** undici's `request` and the dispatcher, loading undici on the first call. */
  private async transport(): Promise<{ request: Undici['request']; dispatcher: Dispatcher }> {
    const u = await undici();
    this.dispatcher ??= new u.Agent({
      keepAliveTimeout: 4_000,
      connect: { timeout: Math.min(this.timeoutMs, 10_000) },
    });
    return { request: u.request, dispatcher: this.dispatcher };
  }

  /** Keeps `util.inspect` / `console.log` of a client short and secret-free. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `FourthwallClient<${this.apiUrl}>`;
  }

  toJSON(): Record<string, unknown> {
    return { apiUrl: this.apiUrl, auth: this.auth.describe() };
  }

  // -------------------------------------------------------------------------------------------
  // Transport
  // -------------------------------------------------------------------------------------------
  protected async json<T extends z.ZodType>(key: OperationKey, req: CallRequest, schema: T): Promise<z.infer<T>> {
    const { text, call } = await this.execute(key, req);
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw new FourthwallSchemaError('', ['<root>: response body is not JSON'], call);
    }
    return S.parseWire(schema, data, call);
  }

  /**
   * Aborts `own` when the client's `signal` aborts, until the returned function is called (a
   * listener per call, removed after it: no AbortSignal.any tied to the long-lived signal).
   */
  private followStop(own: AbortController): () => void {
    const signal = this.signal;
    if (!signal) return () => undefined;
    const onAbort = () => own.abort();
    if (signal.aborted) own.abort();
    else signal.addEventListener('abort', onAbort, { once: true });
    return () => signal.removeEventListener('abort', onAbort);
  }

  /** Runs one call: limiter, auth, attempts, retries (see the module header). */
  protected async execute(
    key: OperationKey,
    req: CallRequest,
  ): Promise<{ status: number; text: string; call: FourthwallCallInfo }> {
    const spec = OPERATIONS[key];
    const path = buildPath(spec.path, req.params);
    const call: FourthwallCallInfo = { operation: key, method: spec.method, path };
    const url = `${req.baseUrl ?? this.apiUrl}${path}${queryString(req.query)}`;
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const deadline = this.clock.now() + this.deadlineMs;
    let failures = 0;
    let refreshed = false;

    for (let attemptNo = 1; ; attemptNo++) {
      this.signal?.throwIfAborted();
      const result = await this.attempt(spec.auth, call, url, body, deadline, attemptNo);
      if (result.kind === 'ok') return { status: result.status, text: result.text, call };
      if (result.kind === 'fail') {
        // e.g. a 2xx body too large to read: the server did the work.
        if (!spec.idempotent && result.error instanceof FourthwallNetworkError && result.error.reachedServer)
          throw new FourthwallOutcomeUnknownError(call, { cause: result.error });
        throw result.error;
      }
      if (result.kind === 'unauthorized') {
        if (refreshed) throw new FourthwallAuthError(401, result.error.apiCode, result.error.context, call);
        refreshed = true;
        let retry = false;
        try {
          retry = await this.auth.onUnauthorized(result.header);
        } catch (e) {
          throw this.tokenFailure(e, call);
        }
        if (!retry) throw new FourthwallAuthError(401, result.error.apiCode, result.error.context, call);
        continue;
      }
      // Retry. A non-idempotent operation is retried only after a failure that certainly did not reach
      // the server (connection refused, DNS, 429, a failed token refresh); otherwise its outcome is unknown.
      if (result.reached && !spec.idempotent) throw new FourthwallOutcomeUnknownError(call, { cause: result.error });
      failures++;
      if (failures >= this.maxAttempts) throw result.error;
      const delay = result.delayMs ?? backoffDelay(this.backoff, failures, this.random);
      if (this.clock.now() + delay >= deadline) throw result.error;
      this.log?.debug(
        { op: key, method: spec.method, path, attempt: attemptNo, retryInMs: delay, error: result.error.code },
        'fourthwall call will be retried',
      );
      await sleep(this.clock, delay, this.signal);
    }
  }

  /** Token endpoint failure -> auth error (rejected) or a not-sent network error (transient). */
  private tokenFailure(e: unknown, call: FourthwallCallInfo): Error {
    if (e instanceof FourthwallTokenError && e.status !== undefined && e.status >= 400 && e.status < 500) {
      return new FourthwallAuthError(
        401,
        'OAUTH_REFRESH_FAILED',
        e.oauthError ? { oauthError: e.oauthError } : {},
        call,
        { cause: e },
      );
    }
    return new FourthwallNetworkError('TOKEN_ENDPOINT', false, call, { cause: e });
  }

  private async attempt(
    requirement: 'A' | 'B' | 'none',
    call: FourthwallCallInfo,
    url: string,
    body: string | undefined,
    deadline: number,
    attemptNo: number,
  ): Promise<Attempt> {
    let header: AuthHeader | undefined;
    try {
      header = await this.auth.headerFor(requirement);
    } catch (e) {
      const err = this.tokenFailure(e, call);
      return err instanceof FourthwallAuthError
        ? { kind: 'fail', error: err }
        : { kind: 'retry', error: err as FourthwallError, reached: false };
    }

    const queueAbort = new AbortController();
    const queueTimer = this.clock.setTimeout(() => queueAbort.abort(), Math.max(0, deadline - this.clock.now()));
    let permit;
    const unfollowQueue = this.followStop(queueAbort);
    try {
      permit = await this.permit(priorityOf(call.operation), queueAbort.signal);
    } catch {
      this.signal?.throwIfAborted();
      return { kind: 'fail', error: new FourthwallTimeoutError('queued', this.deadlineMs, call) };
    } finally {
      queueTimer.cancel();
      unfollowQueue();
    }

    const started = this.clock.now();
    const budget = Math.min(this.timeoutMs, deadline - started);
    const ac = new AbortController();
    const unfollow = this.followStop(ac);
    let timer: TimerHandle | undefined;
    const headers: Record<string, string> = {
      accept:
        call.operation === 'fetchProductFeed' ? 'application/rss+xml, application/xml, text/xml' : 'application/json',
      'user-agent': this.userAgent,
    };
    if (header) headers.authorization = header.value;
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      if (budget <= 0) return { kind: 'fail', error: new FourthwallTimeoutError('request', this.deadlineMs, call) };
      timer = this.clock.setTimeout(() => ac.abort(), budget);
      let status: number;
      let text: string;
      let retryAfter: string | string[] | undefined;
      try {
        const { request, dispatcher } = await this.transport();
        const res = await request(url, {
          method: call.method,
          headers,
          body,
          dispatcher,
          signal: ac.signal,
          headersTimeout: budget,
          bodyTimeout: budget,
        });
        // The request has reached the server by now: its slot's cooldown may start.
        permit.release();
        status = res.statusCode;
        retryAfter = res.headers['retry-after'];
        text = await readBody(res.body, status >= 200 && status < 300 ? this.maxResponseBytes : 64 * 1024, call);
      } catch (e) {
        permit.release();
        this.signal?.throwIfAborted();
        const ms = this.clock.now() - started;
        const code = errCode(e);
        const timedOut = ac.signal.aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
        this.log?.debug(
          {
            op: call.operation,
            method: call.method,
            path: call.path,
            attempt: attemptNo,
            ms,
            error: timedOut ? 'timeout' : (code ?? 'network'),
          },
          'fourthwall call failed',
        );
        if (e instanceof FourthwallError) return { kind: 'fail', error: e };
        if (timedOut)
          return { kind: 'retry', error: new FourthwallTimeoutError('request', ms, call, { cause: e }), reached: true };
        const notSent = code !== undefined && NOT_SENT_CODES.has(code);
        return {
          kind: 'retry',
          error: new FourthwallNetworkError(code, !notSent, call, { cause: e }),
          reached: !notSent,
        };
      }
      const ms = this.clock.now() - started;
      this.log?.debug(
        { op: call.operation, method: call.method, path: call.path, status, attempt: attemptNo, ms },
        'fourthwall call',
      );
      if (status >= 200 && status < 300) return { kind: 'ok', status, text };
      return classifyStatus(status, text, retryAfter, call, header, this.clock.now());
    } finally {
      timer?.cancel();
      unfollow();
      permit.release();
    }
  }

  /** Token requests through the same limiter (at a draw's priority: every call waits on a token) and timeouts as API calls. */
  private tokenTransport(): TokenTransport {
    return async (url, form) => {
      const permit = await this.permit(CALL_PRIORITY.draw);
      const ac = new AbortController();
      const timer = this.clock.setTimeout(() => ac.abort(), this.timeoutMs);
      try {
        const { request, dispatcher } = await this.transport();
        const res = await request(url, {
          method: 'POST',
          dispatcher,
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            accept: 'application/json',
            'user-agent': this.userAgent,
          },
          body: form.toString(),
          signal: ac.signal,
          headersTimeout: this.timeoutMs,
          bodyTimeout: this.timeoutMs,
        });
        const text = await readBody(res.body, 64 * 1024, {
          operation: 'oauthToken',
          method: 'POST',
          path: '<token url>',
        });
        this.log?.debug({ op: 'oauthToken', method: 'POST', status: res.statusCode }, 'fourthwall token endpoint');
        return { status: res.statusCode, body: jsonOrUndefined(text) };
      } finally {
        timer.cancel();
        permit.release();
      }
    };
  }
}
