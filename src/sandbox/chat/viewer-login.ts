/**
 * The sandbox's stand-in for Twitch's viewer login (the authorization code flow), beside the bot
 * token's endpoints in oauth.ts, on the chat server's port under `/oauth2`:
 * - `GET /oauth2/authorize?response_type=code&client_id&redirect_uri&state&scope` -> a small page
 *   to pick the viewer to log in as (a login field and buttons for recent chatters);
 * - `POST /oauth2/authorize` (form: login + the same parameters) -> 302 to
 *   `redirect_uri?code=..&scope=&state=..`; the code is single use and expires after 10 minutes;
 * - `POST /oauth2/token` with `grant_type=authorization_code` (client_id, client_secret, code,
 *   redirect_uri; oauth.ts hands it here) -> `{ access_token, refresh_token, expires_in, scope: [],
 *   token_type }`, or 400 "Invalid authorization code" (unknown, used, expired or another
 *   redirect_uri), 400 "invalid client", 403 "invalid client secret";
 * - `POST /oauth2/revoke` (client_id, token) -> 200 and the token stops working; 400 "Invalid token".
 * `userOf(token)` is how the Helix sandbox answers `GET /helix/users` for a viewer's token. A
 * viewer's id is the same as in chat (viewers.ts). Comparisons of secrets are constant-time.
 */
import { sameSecret } from '../../shared/constant-time.js';
import { escapeHtml } from '../../shared/html.js';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../shared/clock.js';

export interface SandboxViewerLoginOptions {
  clientId: () => string;
  clientSecret: () => string;
  /** The chat identity of a login (same id as in chat). Throws for an invalid login. */
  userFor(login: string): { id: string; login: string };
  /** Logins offered as buttons on the authorize page (e.g. recent chatters). */
  suggestions?: () => readonly string[];
  clock: Clock;
}

const CODE_TTL_MS = 10 * 60_000;
const TOKEN_TTL_MS = 4 * 3_600_000;
const fresh = (): string => randomBytes(15).toString('hex');

export class SandboxViewerLogin {
  private readonly codes = new Map<
    string,
    { user: { id: string; login: string }; redirectUri: string; expiresAt: number }
  >();
  private readonly tokens = new Map<string, { user: { id: string; login: string }; expiresAt: number }>();
  /** Counts of what happened, for tests: codes issued, exchanged, refused; tokens revoked. */
  readonly stats = { issued: 0, exchanged: 0, refused: 0, revoked: 0 };

  constructor(private readonly o: SandboxViewerLoginOptions) {}

  /** The viewer a live (unrevoked, unexpired) user token belongs to. */
  userOf(token: string): { id: string; login: string } | undefined {
    const t = this.tokens.get(token);
    return t && t.expiresAt > this.o.clock.now() ? t.user : undefined;
  }

  /** Tokens issued and not revoked (tests: every login's token is revoked). */
  liveTokens(): number {
    return this.tokens.size;
  }

  /** Serves `/oauth2/authorize` and `/oauth2/revoke`; false for other paths. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    if (url.pathname === '/oauth2/authorize' && req.method === 'GET') {
      this.page(res, url.searchParams);
      return true;
    }
    if (url.pathname === '/oauth2/authorize' && req.method === 'POST') {
      readForm(req, (form) => this.authorize(res, form));
      return true;
    }
    if (url.pathname === '/oauth2/revoke' && req.method === 'POST') {
      readForm(req, (form) => this.revoke(res, form));
      return true;
    }
    return false;
  }

  private checkClient(q: URLSearchParams): string | undefined {
    if (!sameSecret(q.get('client_id') ?? '', this.o.clientId())) return 'invalid client';
    const redirect = q.get('redirect_uri') ?? '';
    if (!/^https?:\/\//.test(redirect)) return 'Parameter redirect_uri does not match registered URI';
    if (q.get('response_type') !== 'code') return 'unsupported response_type';
    return undefined;
  }

  private page(res: ServerResponse, q: URLSearchParams): void {
    const problem = this.checkClient(q);
    if (problem) return json(res, 400, { status: 400, message: problem });
    const hidden = ['client_id', 'redirect_uri', 'response_type', 'state', 'scope']
      .map((k) => `<input type="hidden" name="${k}" value="${escapeHtml(q.get(k) ?? '')}">`)
      .join('');
    const buttons = (this.o.suggestions?.() ?? [])
      .slice(0, 30)
      .map((l) => `<button type="submit" name="login" value="${escapeHtml(l)}">${escapeHtml(l)}</button>`)
      .join(' ');
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Twitch (sandbox): log in</title></head>
<body><h1>Log in to Twitch (sandbox)</h1><p>Pick the viewer to log in as.</p>
<form method="post" action="/oauth2/authorize">${hidden}<p><input name="login" id="login" placeholder="viewer login" autocomplete="off"> <button type="submit" id="authorize">Authorize</button></p></form>
<form method="post" action="/oauth2/authorize">${hidden}<p>${buttons}</p></form></body></html>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(html);
  }

  private authorize(res: ServerResponse, form: URLSearchParams): void {
    const problem = this.checkClient(form);
    if (problem) return json(res, 400, { status: 400, message: problem });
    let user: { id: string; login: string };
    try {
      user = this.o.userFor((form.get('login') ?? '').trim());
    } catch {
      return json(res, 400, { status: 400, message: 'no such user' });
    }
    const code = fresh();
    const redirectUri = form.get('redirect_uri')!;
    this.codes.set(code, { user, redirectUri, expiresAt: this.o.clock.now() + CODE_TTL_MS });
    this.stats.issued++;
    const target = new URL(redirectUri);
    target.searchParams.set('code', code);
    target.searchParams.set('scope', '');
    const state = form.get('state');
    if (state) target.searchParams.set('state', state);
    res.writeHead(302, { location: target.toString(), 'content-length': '0' });
    res.end();
  }

  /** `grant_type=authorization_code` at `/oauth2/token` (called by oauth.ts). */
  exchange(form: URLSearchParams, res: ServerResponse): void {
    if (!sameSecret(form.get('client_id') ?? '', this.o.clientId())) return this.refuse(res, 400, 'invalid client');
    if (!sameSecret(form.get('client_secret') ?? '', this.o.clientSecret()))
      return this.refuse(res, 403, 'invalid client secret');
    const code = form.get('code') ?? '';
    const entry = this.codes.get(code);
    this.codes.delete(code);
    if (!entry || entry.expiresAt <= this.o.clock.now() || entry.redirectUri !== form.get('redirect_uri')) {
      return this.refuse(res, 400, 'Invalid authorization code');
    }
    const access = fresh();
    this.tokens.set(access, { user: entry.user, expiresAt: this.o.clock.now() + TOKEN_TTL_MS });
    this.stats.exchanged++;
    json(res, 200, {
      access_token: access,
      refresh_token: fresh(),
      expires_in: TOKEN_TTL_MS / 1000,
      scope: [],
      token_type: 'bearer',
    });
  }

  private refuse(res: ServerResponse, status: number, message: string): void {
    this.stats.refused++;
    json(res, status, { status, message });
  }

  private revoke(res: ServerResponse, form: URLSearchParams): void {
    if (!sameSecret(form.get('client_id') ?? '', this.o.clientId()))
      return json(res, 400, { status: 400, message: 'invalid client' });
    const token = form.get('token') ?? '';
    if (!this.tokens.delete(token)) return json(res, 400, { status: 400, message: 'Invalid token' });
    this.stats.revoked++;
    res.writeHead(200, { 'content-length': '0' });
    res.end();
  }
}

function readForm(req: IncomingMessage, then: (form: URLSearchParams) => void): void {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c: string) => {
    body += c;
    if (body.length > 64 * 1024) req.destroy();
  });
  req.on('end', () => then(new URLSearchParams(body)));
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
