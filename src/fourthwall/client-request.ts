/**
 * Request and response pieces of the Fourthwall client's transport (client-transport.ts): the
 * call request and attempt-outcome types, query-string building, base-URL normalising,
 * `Retry-After` parsing, the connection-phase error codes that prove a request was never sent,
 * bounded body reading and the classification of a non-2xx answer into retry / refresh / fail.
 *
 * Contract: pure functions, no I/O of their own (readBody only drains the body it is given), no
 * logging. `classifyStatus` decides: 401 with credentials -> `unauthorized` (refresh once), 401
 * without / 403 -> FourthwallAuthError, 429 -> retry (not reached), 5xx -> retry (reached), any
 * other -> FourthwallApiError. Error details come from the zod error-body schema; a body is never
 * copied into an error beyond its code and whitelisted context.
 *
 * Deliberately not here: the limiter, deadlines, retry loop and auth refresh (client-transport.ts).
 */
import type { Dispatcher } from 'undici';
import { jsonOrUndefined } from '../http-client/json.js';
import type { AuthHeader } from './auth.js';
import {
  FourthwallApiError,
  FourthwallAuthError,
  FourthwallNetworkError,
  errorContext,
  type FourthwallCallInfo,
  type FourthwallError,
} from './errors.js';
import * as S from './schemas.js';

type QueryValue = string | number | boolean | Date | readonly (string | number)[] | undefined | null;
export type Query = Record<string, QueryValue>;

export interface CallRequest {
  params?: Record<string, string>;
  query?: Query;
  body?: unknown;
  /** Absolute base instead of the API root (the product feed). */
  baseUrl?: string;
}

export type Attempt =
  | { kind: 'ok'; status: number; text: string }
  | { kind: 'retry'; error: FourthwallError; reached: boolean; delayMs?: number }
  | { kind: 'unauthorized'; error: FourthwallApiError; header: AuthHeader }
  | { kind: 'fail'; error: Error };

/** Connection-phase error codes: the request certainly never reached the server. */
export const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export function errCode(e: unknown): string | undefined {
  for (let cur: unknown = e, i = 0; cur && i < 4; cur = (cur as { cause?: unknown }).cause, i++) {
    const c = (cur as { code?: unknown }).code;
    if (typeof c === 'string') return c;
  }
  return undefined;
}

function formatQueryValue(v: string | number | boolean | Date): string {
  return v instanceof Date ? v.toISOString() : String(v);
}

export function queryString(query: Query | undefined): string {
  if (!query) return '';
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const item of v) qs.append(k, formatQueryValue(item as string | number));
    else qs.append(k, formatQueryValue(v as string | number | boolean | Date));
  }
  const s = qs.toString();
  return s ? `?${s}` : '';
}

/**
 * Parses `Retry-After` (delta seconds or HTTP date) into ms from `now`; undefined when absent or
 * unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  const s = v.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Math.round(Number(s) * 1000);
  const at = Date.parse(s);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export function normaliseBase(url: string, what: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `https://${url}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new TypeError(`${what} is not a valid URL`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new TypeError(`${what} must be http(s)`);
  if (u.username || u.password) throw new TypeError(`${what} must not contain credentials`);
  u.search = '';
  u.hash = '';
  return u.toString().replace(/\/+$/, '');
}

/** Sorts a non-2xx answer into retry / refresh / fail (see the module header). */
export function classifyStatus(
  status: number,
  text: string,
  retryAfterHeader: string | string[] | undefined,
  call: FourthwallCallInfo,
  header: AuthHeader | undefined,
  now: number,
): Attempt {
  const parsed = jsonOrUndefined(text);
  const errBody = S.ErrorBodySchema.safeParse(parsed);
  const apiCode = errBody.success ? errBody.data.code.slice(0, 120) : undefined;
  const context = errorContext(parsed);
  const retryAfterMs = parseRetryAfter(retryAfterHeader, now);
  if (status === 401) {
    const error = new FourthwallAuthError(status, apiCode, context, call);
    return header ? { kind: 'unauthorized', error, header } : { kind: 'fail', error };
  }
  if (status === 403) return { kind: 'fail', error: new FourthwallAuthError(status, apiCode, context, call) };
  const error = new FourthwallApiError(status, apiCode, context, call, { retryAfterMs });
  if (status === 429) return { kind: 'retry', error, reached: false, delayMs: retryAfterMs };
  if (status >= 500) return { kind: 'retry', error, reached: true, delayMs: retryAfterMs };
  return { kind: 'fail', error };
}

/** Reads a response body as UTF-8, destroying it and failing past `limit` bytes. */
export async function readBody(
  body: Dispatcher.ResponseData['body'],
  limit: number,
  call: FourthwallCallInfo,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) {
      body.destroy();
      throw new FourthwallNetworkError('RESPONSE_TOO_LARGE', true, call);
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}
