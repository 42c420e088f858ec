/**
 * The setup page on the streamer's own listener (loopback): `GET /setup` (an HTML shell holding
 * no data, loaded without credentials), `GET /setup/setup.js` (setup-client.ts, bundled with
 * esbuild on first use and cached; the single executable carries it prebuilt as
 * `GIFTDROP_SETUP_CLIENT`, defined by scripts/package.mjs), and its API under `/setup/api/`:
 * `GET state`, and JSON POSTs `fourthwall`, `secret`, `client-id`, `channel`, `login` (role),
 * `public-url`, `apply`. Every API call needs `Authorization: Bearer <dashboard token>` (401
 * otherwise; COMMON "Operator auth"); a POST must be JSON from the page's own origin. `apply` in
 * sandbox mode answers the live dashboard token (the live bot's pages use DATA_DIR/dashboard.token),
 * so the page keeps working across the switch. Strict CSP; no framing. Bodies over 16 KiB: 413.
 * Does not: check or save anything itself (setup-service.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { hasDashboardToken, loadDashboardToken, sameOriginJsonPost } from '../web/operator/dashboard-auth.js';
import { escapeHtml } from '../shared/html.js';
import { bundleScript, prebuiltOrBundled } from '../shared/bundle-script.js';
import type { SetupService } from './setup-service.js';

declare const GIFTDROP_SETUP_CLIENT: string | undefined;

const HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};
const MAX_BODY = 16 * 1024;

/**
 * Bundles the setup page's script for browsers.
 * @public scripts/package.mjs calls it (from dist/) to prebuild the script for the executable.
 */
export function bundleSetupClient(): Promise<string> {
  return bundleScript(import.meta.url, 'setup-client', 'browser');
}

const setupScript = prebuiltOrBundled(
  typeof GIFTDROP_SETUP_CLIENT === 'string' ? GIFTDROP_SETUP_CLIENT : undefined,
  bundleSetupClient,
);

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1b1b1f}
.row{border:1px solid #ccd;border-radius:.5rem;padding:.6rem 1rem;margin:.8rem 0}.row h2{font-size:1.05rem;display:inline;margin-right:.6rem}
.badge{font-size:.8rem;padding:.1rem .5rem;border-radius:1rem;background:#eee}.ok .badge{background:#d9f2df}.error .badge,.todo .badge{background:#fbe4e6}.pending .badge{background:#fff3cd}
.detail{margin:.4rem 0}.note{color:#555;font-size:.9rem}.code{font:700 1.8rem ui-monospace,monospace;letter-spacing:.2rem}
h2.group{font-size:1.15rem;margin:2rem 0 .2rem}input{padding:.3rem;margin:.2rem .4rem .2rem 0;min-width:14rem}button{padding:.35rem .9rem}.banner{padding:.5rem .8rem;border-radius:.4rem}.problem{background:#fbe4e6}.ok.banner{background:#d9f2df}`;

function shell(tokenFile: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>giftdrop: set up for your channel</title><style>${STYLE}</style></head>
<body data-token-file="${escapeHtml(tokenFile)}"><h1>Set up for your channel</h1>
<div id="setup"><p>This page needs JavaScript.</p></div>
<script src="/setup/setup.js"></script></body></html>
`;
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': `${type}; charset=utf-8`,
    'content-length': Buffer.byteLength(body),
    ...HEADERS,
    ...extra,
  });
  res.end(body);
}

function readJson(req: IncomingMessage): Promise<Record<string, unknown> | 'too-large' | undefined> {
  return new Promise((resolve) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        resolve('too-large');
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      try {
        const v = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
        resolve(v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
      } catch {
        resolve(undefined);
      }
    });
    req.on('error', () => resolve(undefined));
  });
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export interface SetupRoutesOptions {
  /** This stack's DATA_DIR (its pages' token file) and GIFTDROP_DASHBOARD_TOKEN. */
  dataDir: string;
  dashboardToken?: string;
  /** The live DATA_DIR: `apply` from sandbox mode answers its dashboard token. */
  liveDataDir: string;
}

/**
 * The `/setup` route for one running stack's local listener; its pages' dashboard token (read on
 * the first request, once the stack made it) authenticates.
 */
export function setupRoute(
  service: SetupService,
  o: SetupRoutesOptions,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  let loaded: Promise<{ token: string; tokenFile: string }> | undefined;
  const pages = (): Promise<{ token: string; tokenFile: string }> => {
    const next =
      loaded ??
      loadDashboardToken(o.dataDir, o.dashboardToken).then((t) => ({
        token: t.token,
        tokenFile: t.source === 'env' ? 'GIFTDROP_DASHBOARD_TOKEN' : (t.file ?? 'DATA_DIR/dashboard.token'),
      }));
    loaded = next;
    next.catch(() => (loaded = undefined));
    return next;
  };

  const api = async (req: IncomingMessage, res: ServerResponse, action: string): Promise<void> => {
    const { token } = await pages();
    if (!hasDashboardToken(req, token))
      return send(res, 401, 'application/json', '{"error":"sign in with the dashboard token"}', {
        'www-authenticate': 'Bearer realm="giftdrop setup"',
      });
    if (action === 'state' && (req.method === 'GET' || req.method === 'HEAD'))
      return send(res, 200, 'application/json', JSON.stringify(service.state()));
    const refused = sameOriginJsonPost(req);
    if (refused)
      return send(res, req.method === 'POST' ? 403 : 405, 'application/json', JSON.stringify({ error: refused }));
    const body = await readJson(req);
    if (body === 'too-large') return send(res, 413, 'application/json', '{"error":"body too large"}');
    // Settles once this answer has left (or the client went away).
    const sent = new Promise<void>((resolve) => {
      res.once('finish', resolve);
      res.once('close', resolve);
    });
    if (!body) return send(res, 400, 'application/json', '{"error":"send a JSON object"}');
    const answer = async (): Promise<unknown> => {
      switch (action) {
        case 'fourthwall':
          return service.setFourthwall(str(body['username']), str(body['password']));
        case 'secret':
          return service.setSecret(str(body['secret']));
        case 'client-id':
          return service.setClientId(str(body['clientId']));
        case 'channel':
          return service.setChannel(str(body['channel']));
        case 'public-url':
          return service.setPublicUrl(str(body['url']));
        case 'login': {
          const role = str(body['role']);
          if (role !== 'bot' && role !== 'broadcaster') return undefined;
          return service.startLogin(role);
        }
        case 'apply': {
          // The answer is ready before the restart begins, and the restart waits until it is sent:
          // the demo's (or the live bot's) listener closes as it stops.
          const mode = service.state().mode;
          const live =
            mode === 'sandbox' && service.state().ready
              ? await loadDashboardToken(o.liveDataDir, o.dashboardToken)
              : undefined;
          const r = await service.apply(sent);
          return r.ok && live ? { ...r, token: live.token } : r;
        }
        default:
          return undefined;
      }
    };
    const out = await answer();
    if (out === undefined) return send(res, 404, 'application/json', '{"error":"unknown setup action"}');
    send(res, 200, 'application/json', JSON.stringify(out));
  };

  return (req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== '/setup' && !path.startsWith('/setup/')) return false;
    const fail = (err: unknown): void => {
      if (!res.headersSent) send(res, 500, 'application/json', JSON.stringify({ error: (err as Error).message }));
      else res.end();
    };
    if (path === '/setup' || path === '/setup/') {
      if (req.method !== 'GET' && req.method !== 'HEAD') send(res, 405, 'text/plain', 'method not allowed\n');
      else pages().then((p) => send(res, 200, 'text/html', shell(p.tokenFile)), fail);
      return true;
    }
    if (path === '/setup/setup.js') {
      setupScript().then((js) => send(res, 200, 'text/javascript', js), fail);
      return true;
    }
    const m = /^\/setup\/api\/([a-z-]+)$/.exec(path);
    if (m) api(req, res, m[1]!).catch(fail);
    else send(res, 404, 'text/plain', 'not found\n');
    return true;
  };
}
