/**
 * The claim page (`GET <GIFTDROP_PUBLIC_URL>/claim`), part of the public surface: a winner logs
 * in with Twitch and sees their own prizes (product, draw, link, how to redeem); anyone else sees
 * that nothing waits for them. One route function (`handle`) that the HTTP server mounts.
 *
 *   GET  /claim            the page: the session's prizes, or the "Log in with Twitch" button
 *   GET  /claim/login      new OAuth `state` (random, single use, 10 min), bound to this browser
 *                          by an HttpOnly SameSite=Lax cookie; 302 to Twitch's authorize page.
 *                          Pending states are kept per client (MAX_STATES_PER_CLIENT, that
 *                          client's oldest dropped), so a flood from one client never expires
 *                          another's login
 *   GET  /claim/callback   `state` must equal the cookie's AND be pending (then it is spent);
 *                          nothing reaches Twitch otherwise, nor over the client's exchange budget
 *                          (EXCHANGE_LIMIT, 429); the code is exchanged once (Twitch's codes are single use), the viewer
 *                          identified and their token revoked (src/twitch/viewer-login.ts); a
 *                          session cookie (HttpOnly, SameSite=Lax, Path=/claim, 1 h; Secure on
 *                          https) is set and the browser sent back to /claim (303)
 *   POST /claim/logout     ends the session; only from the claim page itself (a cross-site
 *                          Origin or Sec-Fetch-Site is refused with 403: no logout by another site)
 *   GET  /claim/style.css  the stylesheet (the CSP allows no inline style or script)
 *
 * Contract: links appear only in the body of the winner's own page (never in a URL, a log line
 * or a redirect); every answer is `no-store`, `no-referrer`, not frameable, under a strict CSP;
 * a forged or replayed `state`, a refused code or a missing session shows no link. Each public
 * client (src/http/surfaces.ts `clientOf`, through the shared per-client RateLimiter) gets 60
 * requests at once and one more a second (429 beyond), and the state and session tables are
 * bounded. Refused logins are logged coalesced (src/http/rejections.ts). Viewer and shop
 * strings are HTML-escaped. Does not: know Fourthwall or Twitch shapes (ports), or write state
 * other than through the delivery tracker's `opened`.
 */
import { randomBytes } from 'node:crypto';
import { cookieValue } from '../../shared/cookies.js';
import { sameSecret } from '../../shared/constant-time.js';
import { escapeHtml } from '../../shared/html.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PrizeView } from '../../delivery/tracker.js';
import { prizeState } from '../../delivery/state.js';
import type { Logger } from '../../logging/index.js';
import type { Clock } from '../../shared/clock.js';
import type { TwitchViewer } from '../../twitch/viewer-login.js';
import { RateLimiter, type RateLimitOptions } from '../../http/rate-limit.js';
import { RejectionLog } from '../../http/rejections.js';
import { clientOf, overLimit } from '../../http/surfaces.js';

interface ClaimLoginPort {
  authorizeUrl(state: string, redirectUri: string): string;
  identify(code: string, redirectUri: string): Promise<TwitchViewer>;
}

export interface ClaimPrizesPort {
  prizesFor(userId: string): Promise<PrizeView[]>;
  opened(userId: string, prizes: readonly PrizeView[]): Promise<void>;
}

export interface ClaimPageOptions {
  /** GIFTDROP_PUBLIC_URL without a trailing slash. */
  publicUrl: string;
  login: ClaimLoginPort;
  prizes: ClaimPrizesPort;
  /** The channel's name, shown on the page. */
  channel: string;
  clock: Clock;
  logger: Logger;
  /** The per-client budget on /claim... (default 60 a minute, 60 at once: a whole login is about 6). */
  limit?: RateLimitOptions;
  /** The per-client budget of code exchanges with Twitch (default EXCHANGE_LIMIT). */
  exchangeLimit?: RateLimitOptions;
}

const CLAIM_LIMIT: RateLimitOptions = { perSecond: 1, burst: 60 };
/**
 * Code exchanges one client may cause: 20 at once, then one every 10 s (a winner needs one; a
 * tunnel that adds no header, `ssh -R` with GIFTDROP_TRUST_PROXY=none, makes every winner one client).
 */
const EXCHANGE_LIMIT: RateLimitOptions = { perSecond: 1 / 10, burst: 20 };
/** Code exchanges for everyone together: 60 at once, then one a second. */
const ALL_EXCHANGES_LIMIT: RateLimitOptions = { perSecond: 1, burst: 60 };
/** Logins one client may have pending (its oldest is dropped beyond). */
const MAX_STATES_PER_CLIENT = 5;

type Refusal = 'state' | 'exchange-budget' | 'exchange-failed' | 'logout-origin';
const REFUSALS: Record<Refusal, string> = {
  state: 'claim login refused: the state does not match this browser or was used before',
  'exchange-budget': "claim login refused: too many logins from this client (Twitch's token endpoint not called)",
  'exchange-failed': 'claim login failed: Twitch did not confirm the code',
  'logout-origin': 'claim logout refused: it came from another site',
};

const STATE_COOKIE = 'giftdrop_claim_state';
const SESSION_COOKIE = 'giftdrop_claim';
const STATE_TTL_MS = 10 * 60_000;
const SESSION_TTL_MS = 60 * 60_000;
/** Bounds of the in-memory tables (oldest entries go first). */
const MAX_STATES = 10_000;
const MAX_SESSIONS = 10_000;

const CSS = `*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;background:#f4f1fb;color:#1d1630;overflow-wrap:break-word;word-break:normal;hyphens:manual}
main{max-width:640px;margin:0 auto;padding:24px 16px}h1{font-size:1.6rem;margin:0 0 4px}p{margin:8px 0}
.muted{color:#6b6280}.card{background:#fff;border-radius:14px;padding:16px 18px;margin:14px 0;box-shadow:0 1px 4px rgba(0,0,0,.08)}
.prize{font-weight:700;font-size:1.15rem}.btn{display:inline-block;background:#9146ff;color:#fff;text-decoration:none;border:0;border-radius:10px;padding:12px 18px;font-size:1rem;font-weight:600;cursor:pointer;width:100%;text-align:center}
.btn.ghost{background:transparent;color:#9146ff;border:1px solid #9146ff;width:auto;padding:6px 12px;font-size:.9rem}
.link{overflow-wrap:anywhere;font-family:ui-monospace,monospace;font-size:.85rem;background:#f4f1fb;border-radius:8px;padding:8px;margin:8px 0}
.done{color:#1b7f3b;font-weight:600}ol{padding-left:20px;margin:6px 0}header{display:flex;justify-content:space-between;align-items:center;gap:8px;flex-wrap:wrap}
@media (min-width:600px){.btn{width:auto}}`;

const token = () => randomBytes(32).toString('base64url');

/** Drops the oldest entries of a Map (insertion order) beyond `max`. */
function bound<K, V>(m: Map<K, V>, max: number): void {
  while (m.size > max) m.delete(m.keys().next().value as K);
}

/**
 * Pending logins (OAuth states) with their expiry, bounded per client and in all: a client's
 * new state beyond MAX_STATES_PER_CLIENT drops that client's oldest, never anyone else's.
 */
class PendingLogins {
  private readonly states = new Map<string, { expiresAt: number; client: string }>();
  private readonly byClient = new Map<string, string[]>();

  add(state: string, client: string, expiresAt: number): void {
    this.states.set(state, { expiresAt, client });
    const mine = this.byClient.get(client) ?? [];
    mine.push(state);
    this.byClient.set(client, mine);
    while (mine.length > MAX_STATES_PER_CLIENT) this.take(mine[0]!);
    // Many clients at once: the oldest state of all goes (each client holds at most a few).
    while (this.states.size > MAX_STATES) this.take(this.states.keys().next().value as string);
  }

  /** Removes `state`, returning its expiry when it was pending. */
  take(state: string): number | undefined {
    const entry = this.states.get(state);
    if (!entry) return undefined;
    this.states.delete(state);
    const mine = this.byClient.get(entry.client) ?? [];
    const i = mine.indexOf(state);
    if (i >= 0) mine.splice(i, 1);
    if (mine.length === 0) this.byClient.delete(entry.client);
    return entry.expiresAt;
  }
}

export class ClaimPage {
  private readonly log: Logger;
  private readonly states = new PendingLogins();
  private readonly sessions = new Map<string, { viewer: TwitchViewer; expiresAt: number }>();
  private readonly limiter: RateLimiter;
  private readonly exchanges: RateLimiter;
  private readonly allExchanges: RateLimiter;
  private readonly refusals: RejectionLog<Refusal>;
  private readonly origin: string;
  private readonly redirectUri: string;
  private readonly secure: boolean;

  constructor(private readonly o: ClaimPageOptions) {
    this.log = o.logger.child({ module: 'claim-page' });
    this.redirectUri = `${o.publicUrl}/claim/callback`;
    this.secure = o.publicUrl.startsWith('https://');
    const now = () => o.clock.now();
    this.limiter = new RateLimiter({ ...(o.limit ?? CLAIM_LIMIT), now });
    this.exchanges = new RateLimiter({ ...(o.exchangeLimit ?? EXCHANGE_LIMIT), now });
    this.allExchanges = new RateLimiter({ ...ALL_EXCHANGES_LIMIT, now });
    this.refusals = new RejectionLog(this.log, 60_000, { messages: REFUSALS, what: 'claim request(s)' });
    this.origin = new URL(o.publicUrl).origin;
  }


  /** The claim page's address (`<public>/claim`), named in chat and whispers. */
  get url(): string {
    return `${this.o.publicUrl}/claim`;
  }

  /** Serves `/claim...`; false for other paths. */
  handle = (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = new URL(req.url ?? '/', 'http://claim.invalid');
    const path = url.pathname;
    if (path !== '/claim' && !path.startsWith('/claim/')) return false;
    if (overLimit(this.limiter, req, res)) return true;
    const get = req.method === 'GET' || req.method === 'HEAD';
    const fail = (err: unknown) => {
      this.log.error({ reason: (err as Error).message }, 'claim page request failed');
      if (!res.headersSent) this.page(res, 500, 'Something went wrong', '<p>Please try again in a moment.</p>');
    };
    if (path === '/claim/style.css' && get) {
      this.send(res, 200, 'text/css; charset=utf-8', CSS, { 'cache-control': 'public, max-age=3600' });
    } else if ((path === '/claim' || path === '/claim/') && get) {
      this.home(req, res).catch(fail);
    } else if (path === '/claim/login' && get) {
      this.start(req, res);
    } else if (path === '/claim/callback' && get) {
      this.callback(req, res, url.searchParams).catch(fail);
    } else if (path === '/claim/logout' && req.method === 'POST') {
      if (!this.sameSite(req)) {
        this.refusals.note('logout-origin', { origin: String(req.headers.origin ?? '').slice(0, 100) });
        this.send(res, 403, 'text/plain; charset=utf-8', 'log out from the claim page itself\n');
        return true;
      }
      const sid = cookieValue(req, SESSION_COOKIE);
      if (sid) this.sessions.delete(sid);
      this.redirect(res, '/claim', [this.cookie(SESSION_COOKIE, '', 0)]);
    } else {
      this.send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
    }
    return true;
  };

  /**
   * True unless the browser says the request came from another site: Sec-Fetch-Site other than
   * same-origin/none, or, from a browser that does not send it, an Origin other than the public
   * URL's (or "null"). Sec-Fetch-Site decides when present: the claim page's `no-referrer` policy
   * makes a browser send `Origin: null` on the page's own logout form (Chromium does), which is
   * not another site. A browser always sends one of them on a POST; a request with neither is not
   * a browser's and cannot be forged by a page.
   */
  private sameSite(req: IncomingMessage): boolean {
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined) return site === 'same-origin' || site === 'none';
    const origin = req.headers.origin;
    return origin === undefined || origin === this.origin;
  }

  private session(req: IncomingMessage): TwitchViewer | undefined {
    const sid = cookieValue(req, SESSION_COOKIE);
    if (!sid) return undefined;
    const s = this.sessions.get(sid);
    if (!s) return undefined;
    if (s.expiresAt <= this.o.clock.now()) {
      this.sessions.delete(sid);
      return undefined;
    }
    return s.viewer;
  }

  private async home(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const viewer = this.session(req);
    const channel = escapeHtml(this.o.channel);
    if (!viewer) {
      this.page(res, 200, 'Claim your prize',
        `<p>Won something in <strong>${channel}</strong>'s giveaway? Log in with your Twitch account to see your prize and how to redeem it.</p>
<p><a class="btn" id="login" href="/claim/login">Log in with Twitch</a></p>
<p class="muted">We only learn your Twitch name. This browser stays logged in for ${SESSION_TTL_MS / 60_000} minutes, or until you log out; then the login is forgotten.</p>`);
      return;
    }
    const prizes = await this.o.prizes.prizesFor(viewer.id);
    const who = `<header><p>Logged in as <strong id="viewer">${escapeHtml(viewer.displayName)}</strong></p><form method="post" action="/claim/logout"><button class="btn ghost" type="submit">Log out</button></form></header>`;
    if (prizes.length === 0) {
      this.page(res, 200, 'Nothing waiting', `${who}<div class="card" id="none"><p>You have no prize waiting in <strong>${channel}</strong>'s giveaways.</p><p class="muted">Won just now? The page shows your prize once the draw is finished.</p></div>`);
      return;
    }
    await this.o.prizes.opened(viewer.id, prizes);
    this.log.info({ userId: viewer.id, login: viewer.login, prizes: prizes.length }, 'a winner opened the claim page');
    const cards = prizes.map((p) => prizeCard(p)).join('\n');
    this.page(res, 200, 'Your prizes', `${who}${cards}`);
  }

  private start(req: IncomingMessage, res: ServerResponse): void {
    const state = token();
    this.states.add(state, clientOf(req), this.o.clock.now() + STATE_TTL_MS);
    this.redirect(res, this.o.login.authorizeUrl(state, this.redirectUri), [this.cookie(STATE_COOKIE, state, STATE_TTL_MS / 1000)], 302);
  }

  private async callback(req: IncomingMessage, res: ServerResponse, q: URLSearchParams): Promise<void> {
    const clearState = this.cookie(STATE_COOKIE, '', 0);
    const state = q.get('state') ?? '';
    const cookieState = cookieValue(req, STATE_COOKIE) ?? '';
    // Only the browser the state was issued to can spend it (its cookie), and then only once.
    const mine = state !== '' && cookieState !== '' && sameSecret(state, cookieState);
    const expiresAt = mine ? this.states.take(state) : undefined;
    const valid = expiresAt !== undefined && expiresAt > this.o.clock.now();
    if (!valid) {
      this.refusals.note('state', { client: clientOf(req) });
      this.page(res, 400, 'Login expired', '<p>This login link is not valid any more. Please log in again.</p><p><a class="btn" href="/claim/login">Log in with Twitch</a></p>', [clearState]);
      return;
    }
    const code = q.get('code');
    if (!code) {
      this.page(res, 400, 'Login cancelled', '<p>The login was cancelled.</p><p><a class="btn" href="/claim/login">Log in with Twitch</a></p>', [clearState]);
      return;
    }
    const client = clientOf(req);
    if (!this.exchanges.take(client).ok || !this.allExchanges.take('all').ok) {
      this.refusals.note('exchange-budget', { client });
      this.page(res, 429, 'Too many logins', '<p>Too many logins from here just now. Please wait a minute and log in again.</p>', [clearState]);
      return;
    }
    let viewer: TwitchViewer;
    try {
      viewer = await this.o.login.identify(code, this.redirectUri);
    } catch (err) {
      this.refusals.note('exchange-failed', { reason: (err as Error).message });
      this.page(res, 502, 'Login failed', '<p>Twitch did not confirm the login. Please try again.</p><p><a class="btn" href="/claim/login">Log in with Twitch</a></p>', [clearState]);
      return;
    }
    const sid = token();
    this.sessions.set(sid, { viewer, expiresAt: this.o.clock.now() + SESSION_TTL_MS });
    bound(this.sessions, MAX_SESSIONS);
    this.redirect(res, '/claim', [clearState, this.cookie(SESSION_COOKIE, sid, SESSION_TTL_MS / 1000)]);
  }

  private cookie(name: string, value: string, maxAgeSeconds: number): string {
    return `${name}=${value}; Path=/claim; HttpOnly; SameSite=Lax; Max-Age=${Math.floor(maxAgeSeconds)}${this.secure ? '; Secure' : ''}`;
  }

  private headers(extra: Record<string, string | string[]> = {}): Record<string, string | string[]> {
    return {
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      ...extra,
    };
  }

  private send(res: ServerResponse, status: number, type: string, body: string, extra: Record<string, string | string[]> = {}): void {
    res.writeHead(status, this.headers({ 'content-type': type, 'content-length': String(Buffer.byteLength(body)), ...extra }));
    res.end(body);
  }

  private redirect(res: ServerResponse, location: string, setCookies: string[], status = 303): void {
    res.writeHead(status, this.headers({ location, 'set-cookie': setCookies, 'content-length': '0' }));
    res.end();
  }

  private page(res: ServerResponse, status: number, title: string, body: string, setCookies: string[] = []): void {
    const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><link rel="stylesheet" href="/claim/style.css"></head>
<body><main><h1>${escapeHtml(title)}</h1>
${body}
</main></body></html>`;
    this.send(res, status, 'text/html; charset=utf-8', html, setCookies.length ? { 'set-cookie': setCookies } : {});
  }
}

/** One prize: the product, the draw, and the link with how to redeem it (no link once redeemed or closed by the shop). */
function prizeCard(p: PrizeView): string {
  const head = `<div class="prize">${escapeHtml(p.product)}</div><p class="muted">from draw ${escapeHtml(p.drawId)}${p.closedAt ? `, ${escapeHtml(p.closedAt.slice(0, 10))}` : ''}</p>`;
  const state = prizeState(p.delivery);
  if (p.delivery.redeemedAt) {
    return `<div class="card" data-draw="${escapeHtml(p.drawId)}">${head}<p class="done">${escapeHtml(state.text)}</p></div>`;
  }
  if (p.delivery.closedAt) {
    return `<div class="card" data-draw="${escapeHtml(p.drawId)}">${head}<p>${escapeHtml(state.text)}. Ask the streamer if you have a question.</p></div>`;
  }
  if (!p.link || !/^https?:\/\//i.test(p.link)) return `<div class="card">${head}<p>Your link is on its way: check back in a minute.</p></div>`;
  const steps =
    p.kind === 'link-giveaway'
      ? '<ol><li>Open your link below.</li><li>Pick your size or variant and enter your shipping address.</li><li>Place the order: it is free.</li></ol><p class="muted">The link works once, for whoever opens it first: do not share it.</p>'
      : '<ol><li>Open your link below.</li><li>Log in with the same Twitch account on the shop\'s page.</li><li>Pick your size or variant and enter your shipping address: it is free.</li></ol>';
  const link = escapeHtml(p.link);
  return `<div class="card" data-draw="${escapeHtml(p.drawId)}">${head}${steps}<div class="link">${link}</div><p><a class="btn redeem" href="${link}" rel="noreferrer noopener" target="_blank">Redeem my prize</a></p></div>`;
}
