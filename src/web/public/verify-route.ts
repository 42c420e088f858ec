/**
 * `GET /verify/<id>`: the public verification page of a finished draw (verify-page.ts).
 * Public (a tunnel carries it), so it is bounded by what each answer costs, never by a
 * per-client request count a viewer could share with an attacker (behind a tunnel that adds no
 * header every viewer is ONE client: a small per-client budget there let one visitor block the
 * page for everyone, issue 46):
 * - page bodies spend one budget for everyone together, in bytes (PAGE_BYTES: the streamer's
 *   upload carries the stream too): over it, 503 with Retry-After for everyone alike; a 304 (the
 *   browser has the page), a 404 or a 409 spends nothing;
 * - each draw's page is built once and kept, with its gzip and brotli forms (compressed off the
 *   event loop), in a cache bounded by bytes (PAGE_CACHE_BYTES), so a handful of draw ids cycled by
 *   a flood does not push out the page real viewers read; concurrent requests for a page being
 *   built wait for that one build; a reroll (`forget(id)`) drops the draw's page;
 * - builds (a 100,000-entrant page is megabytes and a fraction of a second of the event loop) have
 *   a budget per client (CLIENT_BUILD_LIMIT) and one for everyone together (BUILD_LIMIT): over
 *   either, 503 with Retry-After; a client that spent its own budget does not spend everyone's.
 *   What can be checked first is: an unknown id (404) or a draw not drawn yet (409) spends no
 *   build budget, and the page of a draw closed within RECENT_MS (the one chat just linked)
 *   spends none either: it is built once and kept, so a flood of old draw ids can never keep
 *   viewers from the draw they came for (its rebuilds are bounded by the budgeted builds that
 *   could push it out of the cache).
 * - "Not drawn yet" answers are cached for a few seconds, so a flood of them does not reload the
 *   draw from disk per request.
 *
 * Contract: answers only GET/HEAD on `/verify/<id>` (id URL-decoded, 1-150 bytes) and returns
 * false for every other path so the server can route on. 200 with the page, in the best encoding
 * the request accepts (br, gzip, identity; `Vary: Accept-Encoding`), a strong ETag per encoding and
 * `Cache-Control: public, max-age=3600`; 304 when `If-None-Match` names the page's ETag (any of
 * its encodings); 404 for an unknown id; 409 with a short text while the draw's seed is not revealed
 * yet; 503 (Retry-After) when a page would have to be built over a build budget or sent over the page-bytes budget; 500
 * (logged) when the page cannot be built. Every answer carries a Content-Security-Policy with
 * `frame-ancestors 'none'` (the page may not be framed). The page holds no secrets (no links, no
 * unrevealed seed). Read-only.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import type { Logger } from '../../logging/index.js';
import type { DrawRecord } from '../../giveaway/model.js';
import { LruCache } from '../../shared/lru-cache.js';
import { pageProblem, renderVerifyPage } from './verify-page.js';
import { RateLimiter, type RateLimitOptions } from '../../http/rate-limit.js';
import { clientOf } from '../../http/surfaces.js';

type HttpRoute = (req: IncomingMessage, res: ServerResponse) => boolean;

/** The page's own policy (inline script and style are the page's; nothing else, never framed). */
export const VERIFY_CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const HEADERS = {
  'content-security-policy': VERIFY_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};
/** Page bytes sent, everyone together: 32 MiB at once, then 2 MiB a second (a 304 is free). */
const PAGE_BYTES: RateLimitOptions = { perSecond: 2 * 1024 * 1024, burst: 32 * 1024 * 1024 };
/** A draw closed this recently builds its page without spending a build budget. */
const RECENT_MS = 24 * 3_600_000;
/** Page builds for all clients together: 8 at once, then one every 2 seconds. */
const BUILD_LIMIT: RateLimitOptions = { perSecond: 0.5, burst: 8 };
/**
 * Page builds one client may cause: 4 at once, then one every 10 seconds (a tunnel that adds no
 * header, ssh -R with GIFTDROP_TRUST_PROXY=none, makes every viewer one client).
 */
const CLIENT_BUILD_LIMIT: RateLimitOptions = { perSecond: 0.1, burst: 4 };
/** Bytes of pages kept (every encoding counted). */
const PAGE_CACHE_BYTES = 64 * 1024 * 1024;
const PAGES_CACHED = 256;
const NOT_YET_MS = 5_000;
/** A finished page may be reused this long by a browser or a cache before it revalidates (304). */
const CACHE_CONTROL = 'public, max-age=3600';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

type Encoding = 'br' | 'gzip' | 'identity';
interface Page {
  bodies: Record<Encoding, Buffer>;
  /** The strong ETag of each encoding (the page's hash, then the encoding). */
  etags: Record<Encoding, string>;
}
type Built = { status: 200; page: Page } | { status: 404 | 409 | 503; text: string };

export interface VerifyRoute extends HttpRoute {
  /** Drops a draw's cached page (its record changed: a reroll). */
  forget(id: string): void;
  /** Pages built so far (tests, benchmarks: a cached page is not built again). */
  readonly builds: number;
}

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...HEADERS,
  });
  res.end(body);
}

async function compressed(identity: Buffer): Promise<Page> {
  const [br, gz] = await Promise.all([
    brotli(identity, { params: { [zlib.BROTLI_PARAM_QUALITY]: 5, [zlib.BROTLI_PARAM_SIZE_HINT]: identity.length } }),
    gzipAsync(identity, { level: 6 }),
  ]);
  const hash = createHash('sha256').update(identity).digest('base64url').slice(0, 27);
  return {
    bodies: { identity, gzip: gz, br },
    etags: { identity: `"${hash}"`, gzip: `"${hash}-gz"`, br: `"${hash}-br"` },
  };
}

/** The best encoding the request accepts (an encoding with q=0 is refused). */
function pickEncoding(acceptEncoding: string | undefined): Encoding {
  const accepted = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').toLowerCase().split(',')) {
    const [name = '', ...params] = part.trim().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)).find(Boolean);
    if (name) accepted.set(name.trim(), q ? Number(q[1]) : 1);
  }
  const ok = (e: string) => (accepted.get(e) ?? accepted.get('*') ?? 0) > 0;
  if (ok('br')) return 'br';
  if (ok('gzip')) return 'gzip';
  return 'identity';
}

/** 200 with the page in the request's encoding (its bytes spend `bytes`), or 304 when it already holds it (If-None-Match). */
function servePage(req: IncomingMessage, res: ServerResponse, page: Page, bytes: RateLimiter): void {
  const encoding = pickEncoding(req.headers['accept-encoding']);
  const common = { ...HEADERS, etag: page.etags[encoding], 'cache-control': CACHE_CONTROL, vary: 'Accept-Encoding' };
  const tags = (req.headers['if-none-match'] ?? '').split(',').map((t) => t.trim().replace(/^W\//, ''));
  const all = Object.values(page.etags);
  if (tags.includes('*') || tags.some((t) => all.includes(t))) {
    res.writeHead(304, common);
    res.end();
    return;
  }
  const body = page.bodies[encoding];
  const spent = req.method === 'HEAD' ? ({ ok: true } as const) : bytes.take('all', body.length);
  if (!spent.ok) {
    res.setHeader('retry-after', String(spent.retryAfterSeconds));
    return text(res, 503, 'busy sending pages; try again in a few seconds\n');
  }
  res.writeHead(200, {
    ...common,
    'content-type': 'text/html; charset=utf-8',
    'content-length': body.length,
    ...(encoding === 'identity' ? {} : { 'content-encoding': encoding }),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** The `/verify/<id>` route over a draw lookup. */
export function verifyRoute(
  draws: { getDraw(id: string): Promise<DrawRecord | undefined> },
  logger: Logger,
  o: {
    pageBytes?: RateLimitOptions;
    buildLimit?: RateLimitOptions;
    clientBuildLimit?: RateLimitOptions;
    now?: () => number;
  } = {},
): VerifyRoute {
  const log = logger.child({ module: 'verify-page' });
  const now = o.now ?? Date.now;
  const bytes = new RateLimiter({ ...(o.pageBytes ?? PAGE_BYTES), now, maxClients: 1 });
  const buildLimit = new RateLimiter({ ...(o.buildLimit ?? BUILD_LIMIT), now });
  const clientBuilds = new RateLimiter({ ...(o.clientBuildLimit ?? CLIENT_BUILD_LIMIT), now });
  const pages = new LruCache<string, Page>({
    maxEntries: PAGES_CACHED,
    maxWeight: PAGE_CACHE_BYTES,
    weigh: (p) => p.bodies.identity.length + p.bodies.gzip.length + p.bodies.br.length,
  });
  const building = new Map<string, Promise<Built>>();
  const notYet = new LruCache<string, Built>({ maxEntries: 1000, ttlMs: NOT_YET_MS, now });
  let builds = 0;

  const build = async (id: string, client: string): Promise<Built> => {
    const record = await draws.getDraw(id);
    if (!record) return { status: 404, text: 'no such draw\n' };
    const problem = pageProblem(record);
    if (problem) return { status: 409, text: `${problem}; check again once it is drawn\n` };
    // The draw chat just linked is built without a budget (once, then kept); the others spend the
    // client's own budget first: a client over it does not spend everyone's.
    const closed = Date.parse(record.closedAt ?? '');
    const recent = Number.isFinite(closed) && now() - closed < RECENT_MS;
    if (!recent && (!clientBuilds.take(client).ok || !buildLimit.take('all').ok))
      return { status: 503, text: 'busy building pages; try again in a few seconds\n' };
    builds += 1;
    return { status: 200, page: await compressed(Buffer.from(await renderVerifyPage(record))) };
  };

  const lookup = (id: string, client: string): Promise<Built> => {
    const page = pages.get(id);
    if (page) return Promise.resolve({ status: 200, page });
    const known = notYet.get(id) ?? undefined;
    if (known) return Promise.resolve(known);
    const inFlight = building.get(id);
    if (inFlight) return inFlight;
    const p = build(id, client);
    // Until it settles, later requests share this build; then a page stays, "not drawn yet" a few seconds.
    building.set(id, p);
    p.then(
      (b) => {
        if (building.get(id) !== p) return; // forgotten meanwhile (a reroll): not kept
        building.delete(id);
        if (b.status === 200) pages.set(id, b.page);
        else if (b.status === 409) notYet.set(id, b);
      },
      () => {
        if (building.get(id) === p) building.delete(id);
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
    lookup(id, clientOf(req)).then(
      (b) => {
        if (b.status === 503) res.setHeader('retry-after', '5');
        if (b.status !== 200) return text(res, b.status, b.text);
        servePage(req, res, b.page, bytes);
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
    building.delete(id);
    notYet.forget(id);
  };
  Object.defineProperty(route, 'builds', { get: () => builds });
  return route;
}
