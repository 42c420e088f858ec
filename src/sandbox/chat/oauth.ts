/**
 * The sandbox chat server's stand-in for Twitch's OAuth root (`id.twitch.tv/oauth2`), served on
 * the chat server's own HTTP port under `/oauth2`:
 * - `GET /oauth2/validate` (`Authorization: OAuth <token>` or `Bearer <token>`) -> 200
 *   `{ client_id, login, scopes, user_id, expires_in }`, or 401
 *   `{ status: 401, message: "invalid access token" | "missing authorization token" }`;
 * - `POST /oauth2/token` (form: grant_type=refresh_token, refresh_token, client_id,
 *   client_secret) -> 200 `{ access_token, refresh_token, expires_in, scope, token_type: "bearer" }`
 *   with BOTH tokens rotated (the old access token stops working at once), or Twitch's errors:
 *   400 "invalid client", 403 "invalid client secret", 400 "Invalid refresh token",
 *   400 "unsupported grant type".
 * - `/oauth2/authorize`, `/oauth2/revoke` and `grant_type=authorization_code`: the viewer login
 *   (viewer-login.ts), when one is attached.
 * Exactly one access token is valid at a time, until its expiry on the injected clock; the chat
 * login accepts only that one. Comparisons are constant-time. Nothing here reads process.env.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { sameSecret } from '../../shared/constant-time.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../shared/clock.js';
import type { SandboxViewerLogin } from './viewer-login.js';

/** More user logins than the bot's (sandbox/helix/accounts.ts: the broadcaster's), asked for tokens this one does not know. */
export interface SandboxExtraLogins {
  validate(token: string): Record<string, unknown> | undefined;
  refresh(form: URLSearchParams): { status: number; body: Record<string, unknown> } | undefined;
}

export interface SandboxOAuthOptions {
  token: string;
  login: string;
  userId: string;
  clock: Clock;
  refreshToken?: string;
  clientId?: string;
  clientSecret?: string;
  scopes?: readonly string[];
  tokenLifetimeSeconds?: number;
}

export interface OAuthEvent {
  endpoint: 'validate' | 'token';
  status: number;
  /** Twitch's error message, on refusals. */
  message?: string;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();
const same = (a: string, b: Buffer): boolean => timingSafeEqual(digest(a), b);
const fresh = (): string => randomBytes(15).toString('hex');

export class SandboxOAuth {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scopes: readonly string[];
  private access: string;
  private refresh: string;
  private accessDigest: Buffer;
  private expiresAt: number;
  private readonly lifetimeMs: number;
  private readonly o: SandboxOAuthOptions;

  constructor(o: SandboxOAuthOptions) {
    this.o = o;
    this.access = o.token;
    this.accessDigest = digest(o.token);
    this.refresh = o.refreshToken ?? fresh();
    this.clientId = o.clientId ?? 'giftdropsandboxclient';
    this.clientSecret = o.clientSecret ?? fresh();
    this.scopes = [...(o.scopes ?? ['chat:read', 'chat:edit'])];
    this.lifetimeMs = (o.tokenLifetimeSeconds ?? 14_400) * 1000;
    this.expiresAt = o.clock.now() + this.lifetimeMs;
  }

  get accessToken(): string {
    return this.access;
  }

  /** The bot account's user id (the token's owner). */
  get userId(): string {
    return this.o.userId;
  }

  get refreshToken(): string {
    return this.refresh;
  }

  /** True for the current, unexpired access token. */
  accepts(token: string): boolean {
    return same(token, this.accessDigest) && this.o.clock.now() < this.expiresAt;
  }

  /** The current access token expires now (validate says 401, the chat login is refused). */
  expire(): void {
    this.expiresAt = this.o.clock.now();
  }

  /** The viewer login (authorization code flow, viewer-login.ts), when the server has one. */
  viewerLogin: SandboxViewerLogin | undefined;

  /** Other accounts' logins (the broadcaster's), when attached. */
  accounts: SandboxExtraLogins | undefined;

  /** The viewer a user token (from the viewer login) belongs to. */
  userOf(token: string): { id: string; login: string } | undefined {
    return this.viewerLogin?.userOf(token);
  }

  /** Serves `/oauth2/*`; returns false for other paths. */
  handle(req: IncomingMessage, res: ServerResponse, onEvent: (e: OAuthEvent) => void): boolean {
    if (this.viewerLogin?.handle(req, res)) return true;
    const path = (req.url ?? '').split('?')[0];
    if (path === '/oauth2/validate' && req.method === 'GET') {
      this.validate(req, res, onEvent);
      return true;
    }
    if (path === '/oauth2/token' && req.method === 'POST') {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => {
        body += c;
        if (body.length > 64 * 1024) req.destroy();
      });
      req.on('end', () => this.token(new URLSearchParams(body), res, onEvent));
      return true;
    }
    if (path?.startsWith('/oauth2/')) {
      json(res, 404, { status: 404, message: 'not found' });
      return true;
    }
    return false;
  }

  private validate(req: IncomingMessage, res: ServerResponse, onEvent: (e: OAuthEvent) => void): void {
    const m = /^(?:OAuth|Bearer)\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!m) return refuse(res, onEvent, 'validate', 401, 'missing authorization token');
    const other = this.accepts(m[1]!) ? undefined : this.accounts?.validate(m[1]!);
    if (other) {
      onEvent({ endpoint: 'validate', status: 200 });
      return json(res, 200, other);
    }
    if (!this.accepts(m[1]!)) return refuse(res, onEvent, 'validate', 401, 'invalid access token');
    onEvent({ endpoint: 'validate', status: 200 });
    json(res, 200, {
      client_id: this.clientId,
      login: this.o.login,
      scopes: [...this.scopes],
      user_id: this.o.userId,
      expires_in: Math.max(0, Math.floor((this.expiresAt - this.o.clock.now()) / 1000)),
    });
  }

  private token(form: URLSearchParams, res: ServerResponse, onEvent: (e: OAuthEvent) => void): void {
    if (form.get('grant_type') === 'authorization_code' && this.viewerLogin) return this.viewerLogin.exchange(form, res);
    if (form.get('grant_type') !== 'refresh_token') return refuse(res, onEvent, 'token', 400, 'unsupported grant type');
    const other = this.accounts?.refresh(form);
    if (other) {
      onEvent({ endpoint: 'token', status: other.status });
      return json(res, other.status, other.body);
    }
    if (!sameSecret(form.get('client_id') ?? '', this.clientId)) return refuse(res, onEvent, 'token', 400, 'invalid client');
    if (!sameSecret(form.get('client_secret') ?? '', this.clientSecret)) return refuse(res, onEvent, 'token', 403, 'invalid client secret');
    if (!sameSecret(form.get('refresh_token') ?? '', this.refresh)) return refuse(res, onEvent, 'token', 400, 'Invalid refresh token');
    this.access = fresh();
    this.accessDigest = digest(this.access);
    this.refresh = fresh();
    this.expiresAt = this.o.clock.now() + this.lifetimeMs;
    onEvent({ endpoint: 'token', status: 200 });
    json(res, 200, {
      access_token: this.access,
      refresh_token: this.refresh,
      expires_in: Math.floor(this.lifetimeMs / 1000),
      scope: [...this.scopes],
      token_type: 'bearer',
    });
  }
}

function refuse(res: ServerResponse, onEvent: (e: OAuthEvent) => void, endpoint: OAuthEvent['endpoint'], status: number, message: string): void {
  onEvent({ endpoint, status, message });
  json(res, status, { status, message });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
