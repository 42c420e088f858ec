/**
 * Shared pieces of the Fourthwall sandbox API's route groups (api-*.ts): the route, context,
 * result and dependency types, and the small query / body validators every group uses.
 *
 * Contract: validators throw the sandbox's `INVALID_REQUEST` ApiError (http.ts `invalid`) naming
 * the offending field (with its `prefix`, e.g. `items[0].`); they never touch state. `ok` builds
 * a 200 (or the given status) result; `newestFirst` sorts by `createdAt` descending; `isoNow`
 * is the business clock as an ISO string.
 *
 * Deliberately not here: the routes themselves (api-gifting.ts, api-shop.ts, api-fulfillment.ts,
 * api-webhooks.ts), the route table and matching (api.ts), transport concerns (server.ts).
 */
import type { Clock } from '../../shared/clock.js';
import type { Gifting } from './gifting.js';
import { invalid } from './http.js';
import type { IdFactory } from './ids.js';
import type { ShopState } from './state.js';
import type { UriRules, WebhookHub } from './webhooks.js';

type AuthRule = 'A' | 'B';

interface RouteContext {
  params: Record<string, string>;
  query: URLSearchParams;
  /** The parsed JSON body (400 on a missing or malformed one). */
  json(): unknown;
}

export interface RouteResult {
  status: number;
  body?: unknown;
}

export interface ApiRoute {
  operation: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Relative to the API root, `:name` segments are parameters. */
  path: string;
  auth: AuthRule;
  handler(ctx: RouteContext): RouteResult;
}

export interface ApiDeps {
  state: ShopState;
  gifting: Gifting;
  hub: WebhookHub;
  ids: IdFactory;
  clock: Clock;
  webhookSecret: string;
  uriRules: UriRules;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function ok(body: unknown, status = 200): RouteResult {
  return { status, body };
}

export function newestFirst<T extends { createdAt: string }>(items: Iterable<T>): T[] {
  return [...items].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

export function dateFilter(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  const t = Date.parse(raw);
  if (Number.isNaN(t)) throw invalid(name, 'must be an ISO 8601 date-time');
  return t;
}

export function multi(query: URLSearchParams, name: string): string[] {
  return query
    .getAll(name)
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

export function uuidField(obj: Record<string, unknown>, field: string, prefix = ''): string {
  const v = obj[field];
  if (typeof v !== 'string' || !UUID_RE.test(v)) throw invalid(prefix + field, 'must be a uuid');
  return v;
}

export function positiveInt(obj: Record<string, unknown>, field: string, prefix = ''): number {
  const v = obj[field];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
    throw invalid(prefix + field, 'must be a positive integer');
  return v;
}

export function arrayField(obj: Record<string, unknown>, field: string, minItems = 0): unknown[] {
  const v = obj[field];
  if (!Array.isArray(v)) throw invalid(field, 'is required and must be an array');
  if (v.length < minItems) throw invalid(field, `must have at least ${minItems} item(s)`);
  return v;
}

/** The business clock's now as an ISO 8601 string. */
export function isoNow(d: Pick<ApiDeps, 'clock'>): string {
  return new Date(d.clock.now()).toISOString();
}
