/**
 * The operator pages on the bot's HTTP server: `/overlay` (OBS browser source, no token) and
 * `/dashboard` (control page, dashboard token), with their assets and APIs. bot.ts builds one
 * with `startOperatorPages` and hands `handle` to the HTTP server.
 *
 * Contract: `handle` answers every request under /overlay and /dashboard (true) and leaves other
 * paths alone (false). Every answer carries a strict Content-Security-Policy (same-origin script,
 * style, images and connections only; no inline code; no framing of the dashboard). The
 * dashboard's shell (`/dashboard`: HTML naming where the token is, its script, style and
 * `client.js`) holds no data and loads without credentials; every `/dashboard/api/...` answers
 * 401 without `Authorization: Bearer <token>` (dashboard-auth.ts: no cookie, no query token, no
 * session); changes are JSON POSTs. The page keeps the token in its own origin's sessionStorage
 * (pages/client.ts, also served as `/overlay/client.js` for the overlay's event stream). The page
 * scripts are TypeScript modules bundled by page-scripts.ts; the prize images are served by an
 * opaque key (overlay-view.ts overlayKey), never by product id. `/` on this port leads to the
 * dashboard.
 * Does not own the HTTP server or change the engine other than through its public methods.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../config/index.js';
import type { ShopPort } from '../../giveaway/ports.js';
import type { GiveawayEngine } from '../../giveaway/engine.js';
import type { GiveawaySettings } from '../../giveaway/settings.js';
import type { Logger } from '../../logging/index.js';
import type { Clock } from '../../shared/clock.js';
import type { StreamingService } from '../../streaming/service.js';
import { DASHBOARD_CSS, dashboardHtml } from './assets/dashboard-page.js';
import { OVERLAY_CSS, OVERLAY_HTML } from './assets/overlay-page.js';
import { pageScript, type PageScriptName } from './page-scripts.js';
import { overlayKey, overlayWording } from './overlay-view.js';
import { faviconRoute } from '../favicon.js';
import { ChatLog } from './chat-log.js';
import { DashboardApi, type DashboardApiDeps } from './dashboard-api.js';
import { hasDashboardToken, loadDashboardToken, sameOriginJsonPost, type DashboardToken } from './dashboard-auth.js';
import { OverlayHub } from './overlay-hub.js';
import { PrizeImages } from './prize-images.js';

const BASE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'";
const OVERLAY_HEADERS = {
  'content-security-policy': BASE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};
const DASHBOARD_HEADERS = {
  'content-security-policy': `${BASE_CSP}; frame-ancestors 'none'`,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/** The dashboard's shell: what loads without the token (`body` undefined: the HTML page; `script`: a bundled page script). */
const SHELL: Record<string, { type: string; body?: string; script?: PageScriptName }> = {
  '/dashboard': { type: 'text/html' },
  '/dashboard/': { type: 'text/html' },
  '/dashboard/app.js': { type: 'text/javascript', script: 'dashboard' },
  '/dashboard/app.css': { type: 'text/css', body: DASHBOARD_CSS },
  '/dashboard/client.js': { type: 'text/javascript', script: 'client' },
};

export interface OperatorPagesDeps {
  config: Pick<Config, 'dataDir' | 'dashboardToken' | 'mode' | 'settings'>;
  engine: GiveawayEngine;
  streaming: StreamingService;
  shop: Pick<ShopPort, 'listProducts' | 'getProduct'>;
  repo: DashboardApiDeps['repo'];
  chat: DashboardApiDeps['chat'] & Pick<import('node:events').EventEmitter, 'on' | 'off'>;
  settings: GiveawaySettings;
  clock: Clock;
  logger: Logger;
  /** The account rules the close applies, when any (the dashboard describes them). */
  accountRules?: DashboardApiDeps['accountRules'];
  /** The prizes waiting list (src/delivery). */
  delivery?: DashboardApiDeps['delivery'];
  /** Problems the streamer must fix (credentials refused), shown in the dashboard's status. */
  problems?: DashboardApiDeps['problems'];
  /** The shop's supporter alerts (`alert` events, already safe views: shop/alerts.ts), for the overlay. */
  alerts?: Pick<import('node:events').EventEmitter, 'on' | 'off'>;
  /** The EventSub state and channel points / bits (app/twitch-events.ts), shown beside chat's. */
  twitchEvents?: DashboardApiDeps['twitchEvents'];
  /** The claim page and the whispers, on or off and what turns each on (src/delivery). */
  reach?: DashboardApiDeps['reach'];
}

export interface OperatorPages {
  readonly overlay: OverlayHub;
  readonly chatLog: ChatLog;
  readonly token: DashboardToken;
  /** Answers requests under /overlay and /dashboard, and /favicon.ico; false for any other path. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  close(): void;
}

function asset(res: ServerResponse, type: string, body: string, headers: Record<string, string>): void {
  res.writeHead(200, {
    'content-type': `${type}; charset=utf-8`,
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

function plain(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  res.end(`${text}\n`);
}

export async function startOperatorPages(deps: OperatorPagesDeps): Promise<OperatorPages> {
  const log = deps.logger.child({ module: 'web' });
  const token = await loadDashboardToken(deps.config.dataDir, deps.config.dashboardToken);
  // Where the sign-in form says the token is (the path, never the token).
  const shell = dashboardHtml(
    token.source === 'env' ? 'the GIFTDROP_DASHBOARD_TOKEN setting' : (token.file ?? 'DATA_DIR/dashboard.token'),
  );
  const overlaySettings = deps.config.settings.overlay;
  const catchSeconds = overlaySettings.winnerChatSeconds;
  let overlay: OverlayHub | undefined;
  const chatLog = new ChatLog({
    chat: deps.chat,
    engine: deps.engine,
    clock: deps.clock,
    catchSeconds,
    onWinnerLine: () => (overlaySettings.winnerChat ? overlay?.markDirty() : undefined),
  });
  const wording = overlayWording(overlaySettings.text);
  if (wording.unknown.length)
    log.warn(
      `overlay.text: ${wording.unknown.join(', ')} ${wording.unknown.length === 1 ? 'is not an overlay text' : 'are not overlay texts'} (ignored); the texts are listed in docs/settings.md`,
    );
  const hub = (overlay = new OverlayHub({
    engine: deps.engine,
    clock: deps.clock,
    enter: deps.settings.commands.enter,
    claim: deps.settings.commands.claim,
    text: wording.text,
    ...(deps.alerts ? { alerts: deps.alerts } : {}),
    showAlerts: overlaySettings.alerts,
    alertSeconds: overlaySettings.alertSeconds,
    revealSeconds: overlaySettings.revealSeconds,
    badge: overlaySettings.badge,
    winnersSeconds: overlaySettings.winnersSeconds,
    maxResults: overlaySettings.maxResults,
    ...(overlaySettings.winnerChat ? { winnerChat: (id: string) => chatLog.overlayLines(id) } : {}),
    headers: OVERLAY_HEADERS,
  }));
  const images = new PrizeImages(deps.shop, log);
  // The products the dashboard's picker listed, by their image key (its images come from the same route).
  const listed = new Map<string, string>();
  const shop: typeof deps.shop = {
    getProduct: (id) => deps.shop.getProduct(id),
    listProducts: async () => {
      const products = await deps.shop.listProducts();
      listed.clear();
      for (const p of products) listed.set(overlayKey(p.id, 'p'), p.id);
      return products;
    },
  };
  // The page scripts are bundled once, now, so the first page load does not wait for it.
  void pageScript('client').catch((err: unknown) =>
    log.error({ err }, 'the operator page scripts could not be bundled'),
  );
  const script = (res: ServerResponse, name: PageScriptName, headers: Record<string, string>): void => {
    pageScript(name).then(
      (js) => asset(res, 'text/javascript', js, headers),
      (err: unknown) => {
        log.error({ err, script: name }, 'operator page script not available');
        plain(res, 500, 'page script not available', headers);
      },
    );
  };
  const api = new DashboardApi({ ...deps, shop, chatLog, mode: deps.config.mode, logger: log });

  const overlayRoute = (req: IncomingMessage, res: ServerResponse, path: string): void => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'method not allowed', OVERLAY_HEADERS);
    if (path === '/overlay' || path === '/overlay/') return asset(res, 'text/html', OVERLAY_HTML, OVERLAY_HEADERS);
    if (path === '/overlay/overlay.js') return script(res, 'overlay', OVERLAY_HEADERS);
    if (path === '/overlay/overlay.css') return asset(res, 'text/css', OVERLAY_CSS, OVERLAY_HEADERS);
    if (path === '/overlay/client.js') return script(res, 'client', OVERLAY_HEADERS);
    if (path === '/overlay/events') return hub.handleEvents(req, res);
    if (path === '/overlay/state') return hub.handleState(res, OVERLAY_HEADERS);
    const prize = /^\/overlay\/prize\/([^/]{1,200})$/.exec(path);
    if (prize) {
      // By image key (overlay-view.ts overlayKey: no product id on the page), only the prizes of
      // draws in memory and the products the dashboard listed: a URL must not turn random ids into
      // calls to Fourthwall (and its rate limit).
      const wanted = prize[1]!;
      const id =
        listed.get(wanted) ??
        deps.engine.drawViews().find((v) => overlayKey(v.record.offer.id, 'p') === wanted)?.record.offer.id;
      if (!id) return plain(res, 404, 'no image', OVERLAY_HEADERS);
      void images.handle(res, id).catch(() => plain(res, 404, 'no image'));
      return;
    }
    plain(res, 404, 'not found', OVERLAY_HEADERS);
  };

  const dashboardRoute = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const path = url.pathname;
    // The shell: no data, no credential needed (its script asks for the token and sends it).
    const shellAsset = Object.hasOwn(SHELL, path) ? SHELL[path] : undefined;
    if (shellAsset) {
      if (req.method !== 'GET' && req.method !== 'HEAD')
        return plain(res, 405, 'method not allowed', DASHBOARD_HEADERS);
      if (shellAsset.script) return script(res, shellAsset.script, DASHBOARD_HEADERS);
      return asset(res, shellAsset.type, shellAsset.body ?? shell, DASHBOARD_HEADERS);
    }
    if (!hasDashboardToken(req, token.token)) {
      return plain(
        res,
        401,
        'giftdrop dashboard: token required. Send it as "Authorization: Bearer <token>" (GIFTDROP_DASHBOARD_TOKEN, or the token in DATA_DIR/dashboard.token); the page /dashboard asks for it.',
        {
          ...DASHBOARD_HEADERS,
          'www-authenticate': 'Bearer realm="giftdrop dashboard"',
        },
      );
    }
    const m = /^\/dashboard\/api\/([a-z.]+)$/.exec(path);
    if (m) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        const refused = sameOriginJsonPost(req);
        if (refused) return plain(res, req.method === 'POST' ? 403 : 405, refused, DASHBOARD_HEADERS);
      }
      for (const [k, v] of Object.entries(DASHBOARD_HEADERS)) res.setHeader(k, v);
      if (await api.handle(req, res, m[1]!, url.searchParams)) return;
    }
    plain(res, 404, 'not found', DASHBOARD_HEADERS);
  };

  return {
    overlay: hub,
    chatLog,
    token,
    handle(req, res) {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const path = url.pathname;
      if (faviconRoute(req, res)) return true;
      // The streamer's own port: its front door is the dashboard.
      if (path === '/' && (req.method === 'GET' || req.method === 'HEAD')) {
        res.writeHead(303, { location: '/dashboard', 'cache-control': 'no-store', 'content-length': '0' });
        res.end();
        return true;
      }
      if (path === '/overlay' || path.startsWith('/overlay/')) {
        try {
          overlayRoute(req, res, path);
        } catch (err) {
          log.warn({ reason: (err as Error).message }, 'overlay request failed');
          if (!res.headersSent) plain(res, 400, 'bad request', OVERLAY_HEADERS);
          else res.end();
        }
        return true;
      }
      if (path === '/dashboard' || path.startsWith('/dashboard/')) {
        dashboardRoute(req, res, url).catch((err: unknown) => {
          log.error({ err }, 'dashboard request failed');
          if (!res.headersSent) plain(res, 500, `failed: ${(err as Error).message}`, DASHBOARD_HEADERS);
          else res.end();
        });
        return true;
      }
      return false;
    },
    close() {
      hub.close();
      chatLog.close();
    },
  };
}
