/**
 * `GET /verify/<id>`: the public verification page of a finished draw (src/web/verify-page.ts).
 * Public (a tunnel carries it), so it is bounded: a per-client rate limit (429 with Retry-After),
 * and each draw's page is built once and cached (a 100,000-entrant page is megabytes and a
 * fraction of a second of the event loop to build): concurrent requests for a page being built
 * wait for that one build; a reroll (`forget(id)`) drops the draw's page so the next request
 * builds the new one. "Not drawn yet" answers are cached for a few seconds too, so a flood of
 * them does not reload the draw from disk per request. Builds themselves are bounded for everyone
 * together (BUILD_LIMIT: a flood cycling through many draw ids from many addresses cannot spend
 * the event loop on rebuilding pages): over it, 503 with Retry-After.
 *
 * Contract: answers only GET/HEAD on `/verify/<id>` (id URL-decoded, 1-150 bytes) and returns
 * false for every other path so the server can route on. 200 with the page; 404 for an unknown
 * id; 409 with a short text while the draw's seed is not revealed yet; 503 when a page would
 * have to be built over the build limit; 429 over the client's
 * limit (requests from this machine, not through a tunnel, are not limited); 500 (logged) when the page cannot be built. Every answer carries a Content-Security-Policy
 * with `frame-ancestors 'none'` (the page may not be framed). The page holds no secrets (no links,
 * no unrevealed seed). Read-only.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logging/index.js';
import type { DrawRecord } from '../giveaway/model.js';
import { LruCache } from '../shared/lru-cache.js';
import { pageProblem, renderVerifyPage } from '../web/verify-page.js';
import { RateLimiter, type RateLimitOptions } from './rate-limit.js';
import { overLimit } from './surfaces.js';

type HttpRoute = (req: IncomingMessage, res: ServerResponse) => boolean;

/** The page's own policy (inline script and style are the page's; nothing else, never framed). */
export const VERIFY_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const HEADERS = {
  'content-security-policy': VERIFY_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};
/** Per client: 4 pages at once, then one every 5 seconds (a viewer checking a draw needs one). */
const VERIFY_LIMIT: RateLimitOptions = { perSecond: 0.2, burst: 4 };
/** Page builds for all clients together: 8 at once, then one every 2 seconds. */
const BUILD_LIMIT: RateLimitOptions = { perSecond: 0.5, burst: 8 };
const PAGES_CACHED = 8;
const NOT_YET_MS = 5_000;

type Built = { status: 200; page: Buffer } | { status: 404 | 409 | 503; text: string };

export interface VerifyRoute extends HttpRoute {
  /** Drops a draw's cached page (its record changed: a reroll). */
  forget(id: string): void;
  /** Pages built so far (tests, benchmarks: a cached page is not built again). */
  readonly builds: number;
}

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), ...HEADERS });
  res.end(body);
}

/** The `/verify/<id>` route over a draw lookup. */
export function verifyRoute(
  draws: { getDraw(id: string): Promise<DrawRecord | undefined> },
  logger: Logger,
  o: { limit?: RateLimitOptions; buildLimit?: RateLimitOptions; now?: () => number; localHosts?: ReadonlySet<string> } = {},
): VerifyRoute {
  const log = logger.child({ module: 'verify-page' });
  const now = o.now ?? Date.now;
  const limiter = new RateLimiter({ ...(o.limit ?? VERIFY_LIMIT), now });
  const buildLimit = new RateLimiter({ ...(o.buildLimit ?? BUILD_LIMIT), now });
  const pages = new LruCache<string, Promise<Built>>({ maxEntries: PAGES_CACHED });
  const notYet = new LruCache<string, Promise<Built>>({ maxEntries: 1000, ttlMs: NOT_YET_MS, now });
  const localHosts = o.localHosts ?? new Set<string>();
  let builds = 0;

  const build = async (id: string): Promise<Built> => {
    const record = await draws.getDraw(id);
    if (!record) return { status: 404, text: 'no such draw\n' };
    const problem = pageProblem(record);
    if (problem) return { status: 409, text: `${problem}; check again once it is drawn\n` };
    if (!buildLimit.take('all').ok) return { status: 503, text: 'busy building pages; try again in a few seconds\n' };
    builds += 1;
    return { status: 200, page: Buffer.from(await renderVerifyPage(record)) };
  };

  const lookup = (id: string): Promise<Built> => {
    const cached = pages.get(id) ?? notYet.get(id);
    if (cached) return cached;
    const p = build(id);
    // Until it settles, later requests share this build; then a page stays, anything else is short-lived.
    pages.set(id, p);
    p.then(
      (b) => {
        if (b.status === 200) return;
        if (pages.get(id) === p) pages.forget(id);
        if (b.status === 409) notYet.set(id, p);
      },
      () => {
        if (pages.get(id) === p) pages.forget(id);
      },
    );
    return p;
  };

  const route = ((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const m = /^\/verify\/([^/]+)$/.exec(path);
    if (!m) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      text(res, 405, 'method not allowed\n');
      return true;
    }
    if (overLimit(limiter, req, res, localHosts)) return true;
    let id: string;
    try {
      id = decodeURIComponent(m[1]!);
    } catch {
      text(res, 400, 'bad draw id\n');
      return true;
    }
    if (!id || Buffer.byteLength(id) > 150) {
      text(res, 400, 'bad draw id\n');
      return true;
    }
    lookup(id).then(
      (b) => {
        if (b.status === 503) res.setHeader('retry-after', '5');
        if (b.status !== 200) return text(res, b.status, b.text);
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': b.page.length, ...HEADERS });
        res.end(req.method === 'HEAD' ? undefined : b.page);
      },
      (err: unknown) => {
        log.error({ err }, 'verify page failed');
        if (!res.headersSent) text(res, 500, 'internal error\n');
      },
    );
    return true;
  }) as VerifyRoute;
  route.forget = (id) => {
    pages.forget(id);
    notYet.forget(id);
  };
  Object.defineProperty(route, 'builds', { get: () => builds });
  return route;
}
