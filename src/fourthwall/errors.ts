/**
 * The Fourthwall client's error family, all on GiftdropError.
 *
 * Contract: every error names the operation, HTTP method and path (relative to the API root,
 * without query string) it came from. None ever carries a credential, an Authorization header,
 * a request body or a whole response body: API errors keep only the body's `code` and its
 * primitive context fields (e.g. `drawId`, `availableGifts`).
 *
 * Deliberately not here: translation into domain errors (ShopError) - that happens in the
 * adapter that implements the domain's ShopPort.
 */
import { GiftdropError } from '../shared/errors.js';

/** Where a call was going when it failed. */
export interface FourthwallCallInfo {
  /** Operation key from the operations table, e.g. `finishDraw`. */
  operation: string;
  method: string;
  /** Path relative to the API root (or the feed path), without query string. */
  path: string;
}

/** Base of every error raised by the Fourthwall client. */
export class FourthwallError extends GiftdropError {
  readonly operation: string;
  readonly method: string;
  readonly path: string;

  constructor(code: string, message: string, call: FourthwallCallInfo, options?: { cause?: unknown }) {
    super(code, `${message} (${call.operation} ${call.method} ${call.path})`, options);
    this.operation = call.operation;
    this.method = call.method;
    this.path = call.path;
  }
}

/** Primitive context values copied from an error body (strings cut to 200 characters). */
export type ApiErrorContext = Record<string, string | number | boolean | null>;

/**
 * The API answered with a non-success status. `code` is the body's `code` when present
 * (e.g. `GIVEAWAY_DRAW_ALREADY_FINISHED`), else `HTTP_<status>`.
 */
export class FourthwallApiError extends FourthwallError {
  readonly status: number;
  /** The body's `code`, or undefined when the body had none. */
  readonly apiCode: string | undefined;
  readonly context: ApiErrorContext;
  /** The delay a `Retry-After` header asked for, in ms, when one was sent. */
  readonly retryAfterMs: number | undefined;

  constructor(
    status: number,
    apiCode: string | undefined,
    context: ApiErrorContext,
    call: FourthwallCallInfo,
    options?: { retryAfterMs?: number; cause?: unknown },
  ) {
    const code = apiCode ?? `HTTP_${status}`;
    super(code, `Fourthwall answered ${status} ${code}`, call, options);
    this.status = status;
    this.apiCode = apiCode;
    this.context = context;
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/** 401 or 403 after the one permitted token refresh (or with credentials that cannot refresh). */
export class FourthwallAuthError extends FourthwallApiError {}

/** An attempt (or the whole call's deadline) ran out of time. */
export class FourthwallTimeoutError extends FourthwallError {
  /** `queued`: the deadline passed while waiting for the rate limiter; nothing was sent. */
  readonly phase: 'queued' | 'request';
  constructor(phase: 'queued' | 'request', afterMs: number, call: FourthwallCallInfo, options?: { cause?: unknown }) {
    super(
      'FOURTHWALL_TIMEOUT',
      `Fourthwall call timed out after ${afterMs} ms${phase === 'queued' ? ' waiting for the rate limiter' : ''}`,
      call,
      options,
    );
    this.phase = phase;
  }
}

/** The connection failed (refused, reset, DNS, TLS...). `reachedServer` is false only when certain. */
export class FourthwallNetworkError extends FourthwallError {
  readonly reachedServer: boolean;
  /** The low-level error code, e.g. `ECONNREFUSED`, `UND_ERR_SOCKET`. */
  readonly networkCode: string | undefined;
  constructor(
    networkCode: string | undefined,
    reachedServer: boolean,
    call: FourthwallCallInfo,
    options?: { cause?: unknown },
  ) {
    super('FOURTHWALL_NETWORK', `Fourthwall connection failed${networkCode ? ` (${networkCode})` : ''}`, call, options);
    this.networkCode = networkCode;
    this.reachedServer = reachedServer;
  }
}

/**
 * A non-idempotent call (e.g. finishDraw) failed in a way that means it may have reached the
 * server and taken effect (timeout after sending, connection reset, 5xx). It was NOT re-sent:
 * the caller must reconcile (e.g. GET the draw) before doing anything else.
 */
export class FourthwallOutcomeUnknownError extends FourthwallError {
  constructor(call: FourthwallCallInfo, options: { cause: unknown }) {
    super(
      'FOURTHWALL_OUTCOME_UNKNOWN',
      'Fourthwall call may or may not have taken effect; reconcile before retrying',
      call,
      options,
    );
  }
}

/** A response did not match the wire schema. `field` is the path of the first bad field, e.g. `gifts[0].id`. */
export class FourthwallSchemaError extends FourthwallError {
  readonly field: string;
  readonly issues: readonly string[];
  constructor(field: string, issues: readonly string[], call: FourthwallCallInfo) {
    super(
      'FOURTHWALL_SCHEMA',
      `Fourthwall response did not match the expected shape at ${field || '<root>'}: ${issues[0] ?? 'invalid'}`,
      call,
    );
    this.field = field;
    this.issues = issues;
  }
}

/** OAuth token endpoint failures (exchange or refresh). Never carries a token or secret. */
export class FourthwallTokenError extends GiftdropError {
  readonly status: number | undefined;
  /** The endpoint's `error` field (e.g. `invalid_grant`), when given. */
  readonly oauthError: string | undefined;
  constructor(message: string, status?: number, oauthError?: string, options?: { cause?: unknown }) {
    super('FOURTHWALL_TOKEN', message, options);
    this.status = status;
    this.oauthError = oauthError;
  }
}

/** True when `e` is a FourthwallApiError, optionally with the given body code. */
export function isApiError(e: unknown, code?: string): e is FourthwallApiError {
  return e instanceof FourthwallApiError && (code === undefined || e.code === code);
}

/** True when `e` is an API error with this HTTP status. */
export function isApiStatus(e: unknown, status: number): e is FourthwallApiError {
  return e instanceof FourthwallApiError && e.status === status;
}

/** True when a non-idempotent call's effect is unknown and must be reconciled. */
export function isOutcomeUnknown(e: unknown): e is FourthwallOutcomeUnknownError {
  return e instanceof FourthwallOutcomeUnknownError;
}

/** True for failures a later try may cure (timeouts, network errors, 5xx, 429). */
export function isTransient(e: unknown): boolean {
  if (e instanceof FourthwallTimeoutError || e instanceof FourthwallNetworkError) return true;
  return e instanceof FourthwallApiError && (e.status >= 500 || e.status === 429);
}

/** Keeps only primitive fields of an error body, minus `code`; strings are cut to 200 chars. */
export function errorContext(body: unknown): ApiErrorContext {
  const out: ApiErrorContext = {};
  if (!body || typeof body !== 'object' || Array.isArray(body)) return out;
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (k === 'code') continue;
    if (typeof v === 'string') out[k] = v.length > 200 ? `${v.slice(0, 200)}...` : v;
    else if (typeof v === 'number' || typeof v === 'boolean' || v === null) out[k] = v;
  }
  return out;
}
