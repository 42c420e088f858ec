/**
 * Small HTTP plumbing for the Fourthwall sandbox: reading a request body with a size cap, JSON
 * answers, Fourthwall-style error bodies (`{code, ...context}`) raised as `ApiError`, query
 * paging, and the page envelope `{results, total, page, size, totalPages}`.
 * It knows nothing about routes, auth or state.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** An error answered to the caller as `status` with body `{code, ...context}`. */
export class ApiError extends Error {
  readonly status: number;
  readonly body: { code: string } & Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: string,
    context: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(Object.keys(context).length > 0 ? `${code} ${JSON.stringify(context)}` : code);
    this.name = 'ApiError';
    this.status = status;
    this.body = { code, ...context };
    this.headers = headers;
  }
}

/** Largest request body accepted (bytes). */
const MAX_BODY_BYTES = 1024 * 1024;

/** Reads the whole body; larger than `MAX_BODY_BYTES` -> 413 `PAYLOAD_TOO_LARGE`. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new ApiError(413, 'PAYLOAD_TOO_LARGE', { maxBytes: MAX_BODY_BYTES });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Parses a JSON body; empty or malformed -> 400 `INVALID_REQUEST_BODY`. */
export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) throw new ApiError(400, 'INVALID_REQUEST_BODY', { reason: 'body is required' });
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new ApiError(400, 'INVALID_REQUEST_BODY', { reason: 'malformed JSON' });
  }
}

/** Writes a JSON answer (or an empty body when `body` is undefined). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  if (body === undefined) {
    res.writeHead(status, { 'content-length': '0', ...headers });
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** Writes a non-JSON answer. */
export function sendText(res: ServerResponse, status: number, contentType: string, text: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': contentType, 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

/** A 400 naming the field that failed validation. */
export function invalid(field: string, reason: string): ApiError {
  return new ApiError(400, 'VALIDATION_ERROR', { field, reason });
}

/** Treats `value` as a JSON object or fails with a 400 naming `field`. */
export function asObject(value: unknown, field = 'body'): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(field, 'must be an object');
  return value as Record<string, unknown>;
}

/** A required non-empty string field. */
export function requireString(obj: Record<string, unknown>, field: string, prefix = ''): string {
  const v = obj[field];
  if (typeof v !== 'string' || v.trim() === '') throw invalid(prefix + field, 'must be a non-empty string');
  return v;
}

/** An optional string field. */
export function optionalString(obj: Record<string, unknown>, field: string, prefix = ''): string | undefined {
  const v = obj[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalid(prefix + field, 'must be a string');
  return v;
}

export interface PageRequest {
  page: number;
  size: number;
}

/** Reads `page` (default 0) and `size` (default `defaultSize`, max `maxSize`) from a query. */
export function pageOf(query: URLSearchParams, defaultSize = 20, maxSize = 100): PageRequest {
  const read = (name: string, dflt: number, min: number, max: number): number => {
    const raw = query.get(name);
    if (raw === null || raw === '') return dflt;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw invalid(name, `must be an integer from ${min} to ${max}`);
    return n;
  };
  return { page: read('page', 0, 0, 1_000_000), size: read('size', defaultSize, 1, maxSize) };
}

/** The page envelope every list operation answers with. */
export function paginate<T>(
  items: readonly T[],
  req: PageRequest,
): {
  results: T[];
  total: number;
  page: number;
  size: number;
  totalPages: number;
} {
  const start = req.page * req.size;
  return {
    results: items.slice(start, start + req.size),
    total: items.length,
    page: req.page,
    size: req.size,
    totalPages: Math.ceil(items.length / req.size),
  };
}

/** Reads a form-encoded or JSON body into a flat string map (OAuth token requests). */
export function parseFormOrJson(raw: Buffer, contentType: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if ((contentType ?? '').includes('application/json')) {
    const obj = asObject(parseJsonBody(raw));
    for (const [k, v] of Object.entries(obj)) if (typeof v === 'string') out[k] = v;
    return out;
  }
  for (const [k, v] of new URLSearchParams(raw.toString('utf8'))) out[k] = v;
  return out;
}
