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
 *   (viewer-login.ts), when one is attached; `grant_type=client_credentials` and the validation of
 *   app tokens: app-tokens.ts, when attached;
 * - `/oauth2/device`, `/activate`, `grant_type=urn:ietf:params:oauth:grant-type:device_code` and the
 *   public client's refresh (no secret, single-use refresh tokens): the device login
 *   (device-code.ts), when one is attached. A device login of the bot account installs its grant
 *   here (`install`): it becomes the bot's token, issued to the public application.
 * Exactly one bot access token is valid at a time, until its expiry on the injected clock; the chat
 * login accepts only that one. `revoke()` ends the bot's grant (access and refresh token), as
 * disconnecting the application in Twitch's settings does. Comparisons are constant-time.
 * Nothing here reads process.env.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { sameSecret } from '../../shared/constant-time.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../shared/clock.js';
import type { SandboxViewerLogin } from './viewer-login.js';
import type { SandboxAppTokens } from './app-tokens.js';
import { DEVICE_GRANT_TYPE, type SandboxDeviceLogin, type SandboxGrant } from './device-code.js';

/** Whose a user token other than the bot's is: a device login's carries its scopes and application. */
export interface TokenUser {
  id: string;
  login: string;
  scopes?: readonly string[];
  clientId?: string;
}

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
  /** The confidential application (client id + secret): the bot's first token and the viewer login. */
  readonly appClientId: string;
  readonly clientSecret: string;
  /** The client the bot's current token was issued to (the app, or the public one after a device login). */
  private botClientId: string;
  private botScopes: readonly string[];
  /** The bot's token came from the public application: its refresh needs no secret. */
  private botPublic = false;
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
    this.appClientId = o.clientId ?? 'giftdropsandboxclient';
    this.botClientId = this.appClientId;
    this.clientSecret = o.clientSecret ?? fresh();
    this.botScopes = [...(o.scopes ?? ['chat:read', 'chat:edit'])];
    this.lifetimeMs = (o.tokenLifetimeSeconds ?? 14_400) * 1000;
    this.expiresAt = o.clock.now() + this.lifetimeMs;
  }

  get accessToken(): string {
    return this.access;
  }

  /** The client id the bot's current token belongs to (Helix checks `Client-Id` against it). */
  get clientId(): string {
    return this.botClientId;
  }

  /** The bot token's scopes. */
  get scopes(): readonly string[] {
    return this.botScopes;
  }

  /** A device login of the bot account: its grant becomes the bot's one token (the old one stops). */
  install(grant: SandboxGrant): void {
    this.access = grant.access;
    this.accessDigest = digest(grant.access);
    this.refresh = grant.refresh;
    this.botClientId = grant.clientId;
    this.botScopes = [...grant.scopes];
    this.botPublic = true;
    this.expiresAt = grant.expiresAt;
  }

  /** The bot disconnects the application: its access and refresh tokens stop working. */
  revoke(): void {
    this.expiresAt = this.o.clock.now();
    this.refresh = fresh();
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

  /** The application's app tokens (client credentials grant, app-tokens.ts), when attached. */
  appTokens: SandboxAppTokens | undefined;
  /** The device login (device code flow, device-code.ts), when the server has one. */
  deviceLogin: SandboxDeviceLogin | undefined;

  /** Other accounts' logins (the broadcaster's, sandbox/helix/accounts.ts), when attached. */
  accounts: SandboxExtraLogins | undefined;

  /**
   * The account a user token (from the viewer login or a device login other than the bot's) belongs
   * to; a device login's with the scopes it was granted and its application, as Twitch's Helix knows them.
   */
  userOf(token: string): TokenUser | undefined {
    const viewer = this.viewerLogin?.userOf(token);
    if (viewer) return viewer;
    const grant = this.deviceLogin?.grantOf(token);
    return grant ? { ...grant.user, scopes: [...grant.scopes], clientId: grant.clientId } : undefined;
  }

  /** Serves `/oauth2/*` (and the device login's `/activate`); returns false for other paths. */
  handle(req: IncomingMessage, res: ServerResponse, onEvent: (e: OAuthEvent) => void): boolean {
    if (this.viewerLogin?.handle(req, res)) return true;
    if (this.deviceLogin?.handle(req, res)) return true;
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
    const known = this.accepts(m[1]!) ? undefined : this.accounts?.validate(m[1]!);
    const app = known || this.accepts(m[1]!) ? undefined : this.appTokens?.validate(m[1]!);
    if (app) {
      onEvent({ endpoint: 'validate', status: 200 });
      return json(res, 200, app);
    }
    if (known) {
      onEvent({ endpoint: 'validate', status: 200 });
      return json(res, 200, known);
    }
    const other = this.accepts(m[1]!) ? undefined : this.deviceLogin?.grantOf(m[1]!);
    if (other) {
      onEvent({ endpoint: 'validate', status: 200 });
      return json(res, 200, {
        client_id: other.clientId,
        login: other.user.login,
        scopes: [...other.scopes],
        user_id: other.user.id,
        expires_in: Math.max(0, Math.floor((other.expiresAt - this.o.clock.now()) / 1000)),
      });
    }
    if (!this.accepts(m[1]!)) return refuse(res, onEvent, 'validate', 401, 'invalid access token');
    onEvent({ endpoint: 'validate', status: 200 });
    json(res, 200, {
      client_id: this.botClientId,
      login: this.o.login,
      scopes: [...this.botScopes],
      user_id: this.o.userId,
      expires_in: Math.max(0, Math.floor((this.expiresAt - this.o.clock.now()) / 1000)),
    });
  }

  private token(form: URLSearchParams, res: ServerResponse, onEvent: (e: OAuthEvent) => void): void {
    const grant = form.get('grant_type');
    if (grant === 'authorization_code' && this.viewerLogin) return this.viewerLogin.exchange(form, res);
    if (grant === DEVICE_GRANT_TYPE && this.deviceLogin) {
      this.deviceLogin.exchange(form, res);
      return onEvent({ endpoint: 'token', status: res.statusCode });
    }
    if (grant === 'client_credentials' && this.appTokens) {
      const r = this.appTokens.grant(form);
      onEvent({
        endpoint: 'token',
        status: r.status,
        ...(r.status === 200 ? {} : { message: String(r.body.message) }),
      });
      return json(res, r.status, r.body);
    }
    if (grant !== 'refresh_token') return refuse(res, onEvent, 'token', 400, 'unsupported grant type');
    const known = this.accounts?.refresh(form);
    if (known) {
      onEvent({ endpoint: 'token', status: known.status });
      return json(res, known.status, known.body);
    }
    const refreshToken = form.get('refresh_token') ?? '';
    const bots = sameSecret(refreshToken, this.refresh);
    if (!bots && this.deviceLogin) {
      if (this.deviceLogin.refreshOther(form, res)) return onEvent({ endpoint: 'token', status: res.statusCode });
      if (form.get('client_id') === this.deviceLogin.publicClientId) {
        // A public client's refresh token is single use: a spent (or unknown) one is refused.
        this.deviceLogin.refusedRefresh();
        return refuse(res, onEvent, 'token', 400, 'Invalid refresh token');
      }
    }
    if (!sameSecret(form.get('client_id') ?? '', this.botClientId))
      return refuse(res, onEvent, 'token', 400, 'invalid client');
    // A public client has no secret (Twitch asks none); the confidential app's refresh needs it.
    if (!this.botPublic && !sameSecret(form.get('client_secret') ?? '', this.clientSecret))
      return refuse(res, onEvent, 'token', 403, 'invalid client secret');
    if (!bots) return refuse(res, onEvent, 'token', 400, 'Invalid refresh token');
    this.access = fresh();
    this.accessDigest = digest(this.access);
    this.refresh = fresh();
    this.expiresAt = this.o.clock.now() + this.lifetimeMs;
    onEvent({ endpoint: 'token', status: 200 });
    json(res, 200, {
      access_token: this.access,
      refresh_token: this.refresh,
      expires_in: Math.floor(this.lifetimeMs / 1000),
      scope: [...this.botScopes],
      token_type: 'bearer',
    });
  }
}

function refuse(
  res: ServerResponse,
  onEvent: (e: OAuthEvent) => void,
  endpoint: OAuthEvent['endpoint'],
  status: number,
  message: string,
): void {
  onEvent({ endpoint, status, message });
  json(res, status, { status, message });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
