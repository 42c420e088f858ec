/**
 * The two HTTP surfaces on one port (README "Security"): the public one a tunnel carries
 * (`POST /webhooks/fourthwall`, `/claim...`, `/verify...`, `/healthz`, and anything else not the
 * streamer's own) and the streamer's own (`/dashboard...`, `/overlay...`, their APIs and event
 * streams).
 *
 * Contract:
 * - `surfaceOf(path)`: 'own' for /dashboard and /overlay (and below), 'public' for every other path.
 * - `isLocalRequest(req, localHosts)`: true only when the Host header names 127.0.0.1, localhost,
 *   [::1] or one of `localHosts` (any port), AND the request carries none of X-Forwarded-For,
 *   Forwarded, CF-Connecting-IP (a request that came through a proxy or tunnel is public whatever
 *   its Host: DNS rebinding and tunnels both end here).
 * - The remote overlay: with an overlay key configured, `/overlay...` also answers a request that
 *   carries the key as `?key=` (then a cookie named for the port, Path=/overlay) or that cookie.
 *   The dashboard is never remote.
 * - `clientKey(req)`: who a public request is for the per-client limits: CF-Connecting-IP, else the
 *   last X-Forwarded-For entry (the one the nearest proxy added), else the socket's address.
 * - `overLimit(limiter, req, res, localHosts)`: spends one token of the client's budget and answers
 *   429 when it is spent; a local request (this machine, no tunnel) is not limited.
 * Does not route or answer requests other than the refusal (`refuseOwn`).
 */
import { cookieValue } from '../shared/cookies.js';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answer429, type RateLimiter } from './rate-limit.js';

export type Surface = 'public' | 'own';

const OWN_PREFIXES = ['/dashboard', '/overlay'];
/** What the tunnel must carry (README "Security"); every path not the streamer's own is public. */
export const PUBLIC_PREFIXES = ['/webhooks/fourthwall', '/claim', '/verify', '/healthz'] as const;
const FORWARDING_HEADERS = ['x-forwarded-for', 'forwarded', 'cf-connecting-ip'] as const;
const ALWAYS_LOCAL = new Set(['127.0.0.1', 'localhost', '[::1]']);

export function surfaceOf(path: string): Surface {
  for (const p of OWN_PREFIXES) if (path === p || path.startsWith(`${p}/`)) return 'own';
  return 'public';
}

/**
 * The surface of a request target, judged on the raw path AND on the path as the WHATWG URL
 * parser normalises it (`/x/../overlay` is `/overlay` to the routes, which parse it that way):
 * own when either is. A target that does not parse is treated as own (refused unless local).
 */
export function surfaceOfTarget(target: string): Surface {
  const raw = target.split('?')[0] ?? '/';
  if (surfaceOf(raw) === 'own') return 'own';
  try {
    return surfaceOf(new URL(target, 'http://localhost').pathname);
  } catch {
    return 'own';
  }
}

/** The Host header's name without its port, lower case ('' when missing or malformed). */
function hostName(req: IncomingMessage): string {
  const host = (req.headers.host ?? '').trim().toLowerCase();
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end > 0 ? host.slice(0, end + 1) : '';
  }
  const colon = host.indexOf(':');
  return colon >= 0 ? host.slice(0, colon) : host;
}

function forwarded(req: IncomingMessage): boolean {
  return FORWARDING_HEADERS.some((h) => req.headers[h] !== undefined);
}

export function isLocalRequest(req: IncomingMessage, localHosts: ReadonlySet<string>): boolean {
  if (forwarded(req)) return false;
  const name = hostName(req);
  return ALWAYS_LOCAL.has(name) || localHosts.has(name);
}

export function clientKey(req: IncomingMessage): string {
  const cf = req.headers['cf-connecting-ip'];
  if (typeof cf === 'string' && cf.trim()) return cf.trim().slice(0, 64);
  const xff = req.headers['x-forwarded-for'];
  const list = Array.isArray(xff) ? xff.join(',') : xff;
  if (list) {
    const last = list.split(',').map((s) => s.trim()).filter(Boolean).pop();
    if (last) return last.slice(0, 64);
  }
  return req.socket.remoteAddress ?? 'unknown';
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** The remote overlay's key check (see the module contract). */
export class OverlayKey {
  private readonly cookieValue: string;

  constructor(private readonly key: string) {
    this.cookieValue = createHash('sha256').update(`giftdrop overlay\n${key}`).digest('base64url');
  }

  static cookieName(req: IncomingMessage): string {
    return `giftdrop_overlay_${req.socket.localPort ?? 0}`;
  }

  /** 'query' (set the cookie), 'cookie', or undefined when the request does not carry the key. */
  check(req: IncomingMessage): 'query' | 'cookie' | undefined {
    const q = new URL(req.url ?? '/', 'http://x').searchParams.get('key');
    if (q && timingSafeEqual(digest(q), digest(this.key))) return 'query';
    const c = cookieValue(req, OverlayKey.cookieName(req));
    if (c && timingSafeEqual(digest(c), digest(this.cookieValue))) return 'cookie';
    return undefined;
  }

  setCookie(req: IncomingMessage): string {
    return `${OverlayKey.cookieName(req)}=${this.cookieValue}; Path=/overlay; HttpOnly; SameSite=Lax`;
  }
}

/** The answer to a request for the streamer's own pages that is not local. */
export function refuseOwn(res: ServerResponse): void {
  const body =
    "giftdrop: this page answers only on the streamer's own machine (http://127.0.0.1 or localhost on HTTP_PORT, or a name in GIFTDROP_LOCAL_HOSTS), never through a proxy or tunnel\n";
  res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(body);
}

/** True when the request was refused (429) for being over its client's limit (see the contract). */
export function overLimit(limiter: RateLimiter, req: IncomingMessage, res: ServerResponse, localHosts: ReadonlySet<string>): boolean {
  if (isLocalRequest(req, localHosts)) return false;
  const verdict = limiter.take(clientKey(req));
  if (verdict.ok) return false;
  answer429(res, verdict.retryAfterSeconds);
  return true;
}
