/**
 * The claim page (`GET <GIFTDROP_PUBLIC_URL>/claim`), part of the public surface: a winner logs
 * in with Twitch and sees their own prizes (product, draw, link, how to redeem); anyone else sees
 * that nothing waits for them. One route function (`handle`) that the HTTP server mounts.
 *
 *   GET  /claim            the page: the session's prizes, or the "Log in with Twitch" button
 *   GET  /claim/login      a new OAuth `state` (single use, 10 min), signed with a key of this run
 *                          and bound to this browser by a cookie; 302 to Twitch's authorize page
 *   GET  /claim/callback   cheap checks first, then one code exchange through the fair queue, the
 *                          viewer identified, their token revoked, a session cookie; 303 to /claim
 *   POST /claim/logout     ends the session; refused (403) when the browser says another site sent it
 *   GET  /claim/style.css  the stylesheet (the CSP allows no inline style or script)
 *
 * Contract: links appear only in the body of the winner's own page (never in a URL, a log line
 * or a redirect); every answer is `no-store`, `no-referrer`, not frameable, under a strict CSP;
 * a forged or replayed `state`, a refused code or a missing session shows no link. Winners are
 * never refused for someone else's traffic (issue 46): no per-client request budget stands in a
 * winner's way (behind a tunnel that adds no header every visitor is ONE client). What each route
 * costs is bounded instead: the page, the stylesheet, a login's start and a logout are constant
 * work with nothing stored per login (the state is signed, so no flood can push a winner's pending
 * login out); a callback's one costly step, the exchange, is bounded by the fair queue; a
 * logged-in page is limited per session (SESSION_LIMIT). The session and spent-state tables are
 * bounded; refused logins are logged coalesced (http/rejections.ts); viewer and shop strings are
 * HTML-escaped. Does not: know Fourthwall or Twitch shapes (ports), or write state other than
 * through the delivery tracker's `opened`.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { cookieValue } from '../../shared/cookies.js';
import { sameSecret } from '../../shared/constant-time.js';
import { escapeHtml } from '../../shared/html.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PrizeView } from '../../delivery/tracker.js';
import { prizeState } from '../../delivery/state.js';
import type { Logger } from '../../logging/index.js';
import type { Clock } from '../../shared/clock.js';
import type { TwitchViewer } from '../../twitch/viewer-login.js';
import { FairQueue, type FairQueueOptions } from '../../http/fair-queue.js';
import { answer429, RateLimiter, type RateLimitOptions } from '../../http/rate-limit.js';
import { RejectionLog } from '../../http/rejections.js';
import { clientOf } from '../../http/surfaces.js';

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
  /** The fair exchange queue's bounds (tests); default EXCHANGE_QUEUE. */
  exchanges?: Partial<Pick<FairQueueOptions, 'maxInFlight' | 'maxWaitingPerKey' | 'maxWaiting' | 'maxWaitMs'>>;
}

/**
 * Code exchanges with Twitch: 4 at once (each takes Twitch a fraction of a second, so this also
 * bounds how fast junk can reach Twitch's token endpoint); the others wait in their client's
 * lane (at most 32 per client, 512 in all) for at most 15 s.
 */
const EXCHANGE_QUEUE = { maxInFlight: 4, maxWaitingPerKey: 32, maxWaiting: 512, maxWaitMs: 15_000 } as const;
/** A logged-in page, per session: 10 at once, then 2 a second (a winner reloads now and then). */
const SESSION_LIMIT: RateLimitOptions = { perSecond: 2, burst: 10 };
/** What a code from Twitch looks like (URL-safe characters, bounded length): anything else never reaches Twitch. */
const CODE_SHAPE = /^[A-Za-z0-9._~-]{8,512}$/;

type Refusal = 'state' | 'code-shape' | 'exchange-busy' | 'exchange-failed' | 'logout-origin';
const REFUSALS: Record<Refusal, string> = {
  state: 'claim login refused: the state does not match this browser, is not ours, expired or was used before',
  'code-shape': "claim login refused: the code does not look like Twitch's (Twitch's token endpoint not called)",
  'exchange-busy': 'claim login delayed: too many logins waiting for Twitch (asked to try again)',
  'exchange-failed': 'claim login failed: Twitch did not confirm the code',
  'logout-origin': 'claim logout refused: it came from another site',
};

const STATE_COOKIE = 'giftdrop_claim_state';
const SESSION_COOKIE = 'giftdrop_claim';
const STATE_TTL_MS = 10 * 60_000;
const SESSION_TTL_MS = 60 * 60_000;
/** Bounds of the in-memory tables (oldest entries go first). */
const MAX_SPENT_STATES = 100_000;
const MAX_SESSIONS = 10_000;

const CSS = `*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;background:#f4f1fb;color:#1d1630;overflow-wrap:break-word;word-break:normal;hyphens:manual}
main{max-width:640px;margin:0 auto;padding:24px 16px}h1{font-size:1.6rem;margin:0 0 4px}p{margin:8px 0}
.muted{color:#6b6280}.card{background:#fff;border-radius:14px;padding:16px 18px;margin:14px 0;box-shadow:0 1px 4px rgba(0,0,0,.08)}
.prize{font-weight:700;font-size:1.15rem}.btn{display:inline-block;background:#9146ff;color:#fff;text-decoration:none;border:0;border-radius:10px;padding:12px 18px;font-size:1rem;font-weight:600;cursor:pointer;width:100%;text-align:center}
.btn.ghost{background:transparent;color:#9146ff;border:1px solid #9146ff;width:auto;padding:6px 12px;font-size:.9rem}
.link{overflow-wrap:anywhere;font-family:ui-monospace,monospace;font-size:.85rem;background:#f4f1fb;border-radius:8px;padding:8px;margin:8px 0}
.done{color:#1b7f3b;font-weight:600}ol{padding-left:20px;margin:6px 0}header{display:flex;justify-content:space-between;align-items:center;gap:8px;flex-wrap:wrap}
@media (min-width:600px){.btn{width:auto}}`;

/** Drops the oldest entries of a Map (insertion order) beyond `max`. */
function bound<K, V>(m: Map<K, V>, max: number): void {
  while (m.size > max) m.delete(m.keys().next().value as K);
}

/**
 * Login states that need no table: `<expiry, base 36>.<random>.<HMAC of both, this run's key>`.
 * A state is valid when its signature is this run's and it has not expired; the browser binding
 * is the cookie (checked by the caller) and single use is the `spent` table, which holds only
 * states that passed every check (each one a login that reached the code step), until they expire.
 */
class LoginStates {
  private readonly key = randomBytes(32);
  private readonly spent = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  issue(): string {
    const body = `${(this.now() + STATE_TTL_MS).toString(36)}.${randomBytes(16).toString('base64url')}`;
    return `${body}.${this.mac(body)}`;
  }

  /** True (and the state is spent) when `state` is this run's, unexpired and unused. */
  spend(state: string): boolean {
    const m = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/.exec(state);
    if (!m || !sameSecret(m[3]!, this.mac(`${m[1]}.${m[2]}`))) return false;
    const expiresAt = parseInt(m[1]!, 36);
    const now = this.now();
    if (!(expiresAt > now) || this.spent.has(state)) return false;
    for (const [s, at] of this.spent) {
      if (at > now && this.spent.size < MAX_SPENT_STATES) break;
      this.spent.delete(s); // expired, or the oldest beyond the bound (its code is single use anyway)
    }
    this.spent.set(state, expiresAt);
    return true;
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}

export class ClaimPage {
  private readonly log: Logger;
  private readonly states: LoginStates;
  private readonly sessions = new Map<string, { viewer: TwitchViewer; expiresAt: number }>();
  private readonly sessionLimit: RateLimiter;
  private readonly exchanges: FairQueue;
  private readonly refusals: RejectionLog<Refusal>;
  private readonly origin: string;
  private readonly redirectUri: string;
  private readonly secure: boolean;

  constructor(private readonly o: ClaimPageOptions) {
    this.log = o.logger.child({ module: 'claim-page' });
    this.redirectUri = `${o.publicUrl}/claim/callback`;
    this.secure = o.publicUrl.startsWith('https://');
    const now = () => o.clock.now();
    this.states = new LoginStates(now);
    this.sessionLimit = new RateLimiter({ ...SESSION_LIMIT, now });
    this.exchanges = new FairQueue({ ...EXCHANGE_QUEUE, ...o.exchanges, clock: o.clock });
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
      this.start(res);
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
    // A logged-in page reads the history: limited per session (never shared with anyone else).
    if (viewer) {
      const verdict = this.sessionLimit.take(cookieValue(req, SESSION_COOKIE)!);
      if (!verdict.ok) return answer429(res, verdict.retryAfterSeconds);
    }
    const channel = escapeHtml(this.o.channel);
    if (!viewer) {
      this.page(
        res,
        200,
        'Claim your prize',
        `<p>Won something in <strong>${channel}</strong>'s giveaway? Log in with your Twitch account to see your prize and how to redeem it.</p>
<p><a class="btn" id="login" href="/claim/login">Log in with Twitch</a></p>
<p class="muted">We only learn your Twitch name. This browser stays logged in for ${SESSION_TTL_MS / 60_000} minutes, or until you log out; then the login is forgotten.</p>`,
      );
      return;
    }
    const prizes = await this.o.prizes.prizesFor(viewer.id);
    const who = `<header><p>Logged in as <strong id="viewer">${escapeHtml(viewer.displayName)}</strong></p><form method="post" action="/claim/logout"><button class="btn ghost" type="submit">Log out</button></form></header>`;
    if (prizes.length === 0) {
      this.page(
        res,
        200,
        'Nothing waiting',
        `${who}<div class="card" id="none"><p>You have no prize waiting in <strong>${channel}</strong>'s giveaways.</p><p class="muted">Won just now? The page shows your prize once the draw is finished.</p></div>`,
      );
      return;
    }
    await this.o.prizes.opened(viewer.id, prizes);
    this.log.info({ userId: viewer.id, login: viewer.login, prizes: prizes.length }, 'a winner opened the claim page');
    const cards = prizes.map((p) => prizeCard(p)).join('\n');
    this.page(res, 200, 'Your prizes', `${who}${cards}`);
  }

  private start(res: ServerResponse): void {
    const state = this.states.issue();
    this.redirect(
      res,
      this.o.login.authorizeUrl(state, this.redirectUri),
      [this.cookie(STATE_COOKIE, state, STATE_TTL_MS / 1000)],
      302,
    );
  }

  /**
   * Checked before anything is spent: the `state` equals this browser's cookie, carries this run's
   * signature, has not expired and was not used before (then it is spent), and the code has the
   * shape of a code. Only then is the code exchanged with Twitch, once (its codes are single use),
   * through the FAIR exchange queue (http/fair-queue.ts: EXCHANGES_IN_FLIGHT at once, one lane per
   * client in turn, so a client's junk waits behind its own junk, never another client's; a full
   * lane or a wait past EXCHANGE_WAIT_MS: 503 "busy, try again"); the viewer is identified and their
   * token revoked (twitch/viewer-login.ts); a session cookie (HttpOnly, SameSite=Lax, Path=/claim,
   * 1 h; Secure on https) is set and the browser sent back to /claim (303).
   */
  private async callback(req: IncomingMessage, res: ServerResponse, q: URLSearchParams): Promise<void> {
    const clearState = this.cookie(STATE_COOKIE, '', 0);
    const state = q.get('state') ?? '';
    const cookieState = cookieValue(req, STATE_COOKIE) ?? '';
    // Only the browser the state was issued to can spend it (its cookie), and then only once.
    const mine = state !== '' && cookieState !== '' && sameSecret(state, cookieState);
    if (!mine || !this.states.spend(state)) {
      this.refusals.note('state', { client: clientOf(req) });
      this.page(
        res,
        400,
        'Login expired',
        '<p>This login link is not valid any more. Please log in again.</p><p><a class="btn" href="/claim/login">Log in with Twitch</a></p>',
        [clearState],
      );
      return;
    }
    const code = q.get('code');
    if (!code) {
      this.page(
        res,
        400,
        'Login cancelled',
        '<p>The login was cancelled.</p><p><a class="btn" href="/claim/login">Log in with Twitch</a></p>',
        [clearState],
      );
      return;
    }
    if (!CODE_SHAPE.test(code)) {
      this.refusals.note('code-shape', { client: clientOf(req) });
      this.page(
        res,
        400,
        'Login failed',
        '<p>Twitch did not confirm the login. Please try again.</p><p><a class="btn" href="/claim/login">Log in with Twitch</a></p>',
        [clearState],
      );
      return;
    }
    const client = clientOf(req);
    let viewer: TwitchViewer | 'busy';
    try {
      viewer = await this.exchanges.run(client, () => this.o.login.identify(code, this.redirectUri));
    } catch (err) {
      this.refusals.note('exchange-failed', { reason: (err as Error).message });
      this.page(
        res,
        502,
        'Login failed',
        '<p>Twitch did not confirm the login. Please try again.</p><p><a class="btn" href="/claim/login">Log in with Twitch</a></p>',
        [clearState],
      );
      return;
    }
    if (viewer === 'busy') {
      this.refusals.note('exchange-busy', { client, ...this.exchanges.load });
      res.setHeader('retry-after', '5');
      this.page(
        res,
        503,
        'Busy',
        '<p>Many logins are waiting for Twitch just now. Please log in again in a few seconds.</p><p><a class="btn" href="/claim/login">Log in with Twitch</a></p>',
        [clearState],
      );
      return;
    }
    const sid = randomBytes(32).toString('base64url');
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
      'content-security-policy':
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      ...extra,
    };
  }

  private send(
    res: ServerResponse,
    status: number,
    type: string,
    body: string,
    extra: Record<string, string | string[]> = {},
  ): void {
    res.writeHead(
      status,
      this.headers({ 'content-type': type, 'content-length': String(Buffer.byteLength(body)), ...extra }),
    );
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
  if (!p.link || !/^https?:\/\//i.test(p.link))
    return `<div class="card">${head}<p>Your link is on its way: check back in a minute.</p></div>`;
  const steps =
    p.kind === 'link-giveaway'
      ? '<ol><li>Open your link below.</li><li>Pick your size or variant and enter your shipping address.</li><li>Place the order: it is free.</li></ol><p class="muted">The link works once, for whoever opens it first: do not share it.</p>'
      : "<ol><li>Open your link below.</li><li>Log in with the same Twitch account on the shop's page.</li><li>Pick your size or variant and enter your shipping address: it is free.</li></ol>";
  const link = escapeHtml(p.link);
  return `<div class="card" data-draw="${escapeHtml(p.drawId)}">${head}${steps}<div class="link">${link}</div><p><a class="btn redeem" href="${link}" rel="noreferrer noopener" target="_blank">Redeem my prize</a></p></div>`;
}
