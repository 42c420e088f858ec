/**
 * `GET /verify/<id>`: the public verification page of a finished draw (src/web/verify-page.ts).
 *
 * Contract: answers only GET/HEAD on `/verify/<id>` (id URL-decoded, 1-150 bytes) and returns
 * false for every other path so the server can route on. 200 with the page; 404 for an unknown
 * id; 409 with a short text while the draw's seed is not revealed yet; 500 (logged) when the page
 * cannot be built. The page holds no secrets (no links, no unrevealed seed). Read-only.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logging/index.js';
import type { DrawRecord } from '../giveaway/ports.js';
import { pageProblem, renderVerifyPage } from '../web/verify-page.js';

export type HttpRoute = (req: IncomingMessage, res: ServerResponse) => boolean;

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The `/verify/<id>` route over a draw lookup. */
export function verifyRoute(draws: { getDraw(id: string): Promise<DrawRecord | undefined> }, logger: Logger): HttpRoute {
  const log = logger.child({ module: 'verify-page' });
  return (req, res) => {
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
    void (async () => {
      const record = await draws.getDraw(id);
      if (!record) return text(res, 404, 'no such draw\n');
      const problem = pageProblem(record);
      if (problem) return text(res, 409, `${problem}; check again once it is drawn\n`);
      const page = await renderVerifyPage(record);
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-length': Buffer.byteLength(page),
        'x-content-type-options': 'nosniff',
      });
      res.end(req.method === 'HEAD' ? undefined : page);
    })().catch((err: unknown) => {
      log.error({ err }, 'verify page failed');
      if (!res.headersSent) text(res, 500, 'internal error\n');
    });
    return true;
  };
}
