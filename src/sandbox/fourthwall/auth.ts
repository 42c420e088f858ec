/**
 * Authentication of the Fourthwall sandbox: HTTP Basic with the sandbox's API user, Bearer with
 * an access token issued by the OAuth token endpoint (authorization_code from a control call,
 * refresh_token), token lifetimes on the injected Clock. Every secret comparison is constant
 * time (sameSecret, shared/constant-time.ts; tokens are stored by digest only).
 * It decides who is calling; which operations a scheme may use is the router's business.
 */
import { sameSecret } from '../../shared/constant-time.js';
import { createHash } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { IdFactory } from './ids.js';

export type Principal = { scheme: 'basic' } | { scheme: 'bearer'; clientId: string };

export type AuthResult = { ok: true; principal: Principal } | { ok: false; reason: 'missing' | 'invalid' | 'expired' };

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  refresh_expires_in: number;
  scope: string;
}

export type TokenResult =
  { ok: true; body: TokenResponse } | { ok: false; status: number; error: string; description: string };

export interface AuthOptions {
  username: string;
  password: string;
  clientId: string;
  clientSecret: string;
  tokenLifetimeSeconds: number;
  refreshLifetimeSeconds: number;
  authCodeLifetimeSeconds: number;
}

const SCOPES =
  'shop_read offer_read offer_write order_read giveaway_read giveaway_write webhook_read webhook_write donation_read thankyou_read promotions_read promotions_write fulfillment_write';

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

function key(token: string): string {
  return digest(token).toString('hex');
}

interface CodeRecord {
  expiresAt: number;
  redirectUri?: string;
}

interface TokenRecord {
  clientId: string;
  expiresAt: number;
}

/** Credential checks and the OAuth token store. */
export class SandboxAuth {
  private readonly codes = new Map<string, CodeRecord>();
  private readonly accessTokens = new Map<string, TokenRecord>();
  private readonly refreshTokens = new Map<string, TokenRecord>();

  constructor(
    private readonly options: AuthOptions,
    private readonly clock: Clock,
    private readonly ids: IdFactory,
  ) {}

  /** Checks an `Authorization` header. */
  authenticate(header: string | undefined): AuthResult {
    if (!header) return { ok: false, reason: 'missing' };
    const space = header.indexOf(' ');
    const scheme = space > 0 ? header.slice(0, space).toLowerCase() : '';
    const value = space > 0 ? header.slice(space + 1).trim() : '';
    if (scheme === 'basic') {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) return { ok: false, reason: 'invalid' };
      const userOk = sameSecret(decoded.slice(0, colon), this.options.username);
      const passOk = sameSecret(decoded.slice(colon + 1), this.options.password);
      return userOk && passOk ? { ok: true, principal: { scheme: 'basic' } } : { ok: false, reason: 'invalid' };
    }
    if (scheme === 'bearer' && value) {
      const rec = this.accessTokens.get(key(value));
      if (!rec) return { ok: false, reason: 'invalid' };
      if (this.clock.now() >= rec.expiresAt) return { ok: false, reason: 'expired' };
      return { ok: true, principal: { scheme: 'bearer', clientId: rec.clientId } };
    }
    return { ok: false, reason: 'invalid' };
  }

  /** True when the header carries the sandbox's Basic credentials (control routes). */
  isBasic(header: string | undefined): boolean {
    const r = this.authenticate(header);
    return r.ok && r.principal.scheme === 'basic';
  }

  /** Issues a single-use authorization code, as the connect page would after consent. */
  issueAuthCode(redirectUri?: string): string {
    const code = this.ids.secret();
    this.codes.set(key(code), {
      expiresAt: this.clock.now() + this.options.authCodeLifetimeSeconds * 1000,
      ...(redirectUri !== undefined ? { redirectUri } : {}),
    });
    return code;
  }

  /** The token endpoint: `authorization_code` and `refresh_token` grants. */
  exchange(form: Record<string, string>): TokenResult {
    const clientId = form['client_id'] ?? '';
    const clientSecret = form['client_secret'] ?? '';
    const clientOk = sameSecret(clientId, this.options.clientId);
    const secretOk = sameSecret(clientSecret, this.options.clientSecret);
    if (!clientOk || !secretOk) {
      return { ok: false, status: 401, error: 'invalid_client', description: 'unknown client or wrong client secret' };
    }
    const grant = form['grant_type'];
    if (grant === 'authorization_code') {
      const code = form['code'];
      if (!code) return { ok: false, status: 400, error: 'invalid_request', description: 'code is required' };
      const k = key(code);
      const rec = this.codes.get(k);
      this.codes.delete(k);
      if (!rec || this.clock.now() >= rec.expiresAt) {
        return {
          ok: false,
          status: 400,
          error: 'invalid_grant',
          description: 'authorization code is invalid, used or expired',
        };
      }
      if (rec.redirectUri !== undefined && form['redirect_uri'] !== rec.redirectUri) {
        return { ok: false, status: 400, error: 'invalid_grant', description: 'redirect_uri does not match' };
      }
      return { ok: true, body: this.issueTokens(clientId, this.ids.secret()) };
    }
    if (grant === 'refresh_token') {
      const refresh = form['refresh_token'];
      if (!refresh)
        return { ok: false, status: 400, error: 'invalid_request', description: 'refresh_token is required' };
      const rec = this.refreshTokens.get(key(refresh));
      if (!rec || rec.clientId !== clientId || this.clock.now() >= rec.expiresAt) {
        return { ok: false, status: 400, error: 'invalid_grant', description: 'refresh token is invalid or expired' };
      }
      return { ok: true, body: this.issueTokens(clientId, refresh) };
    }
    return {
      ok: false,
      status: 400,
      error: 'unsupported_grant_type',
      description: 'grant_type must be authorization_code or refresh_token',
    };
  }

  private issueTokens(clientId: string, refreshToken: string): TokenResponse {
    const now = this.clock.now();
    const access = this.ids.secret();
    this.accessTokens.set(key(access), { clientId, expiresAt: now + this.options.tokenLifetimeSeconds * 1000 });
    const rk = key(refreshToken);
    if (!this.refreshTokens.has(rk)) {
      this.refreshTokens.set(rk, { clientId, expiresAt: now + this.options.refreshLifetimeSeconds * 1000 });
    }
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: this.options.tokenLifetimeSeconds,
      refresh_token: refreshToken,
      refresh_expires_in: this.options.refreshLifetimeSeconds,
      scope: SCOPES,
    };
  }

  /** Makes every issued access token expired now (tests of refresh-on-401). */
  expireAccessTokens(): void {
    for (const rec of this.accessTokens.values()) rec.expiresAt = Math.min(rec.expiresAt, this.clock.now());
  }
}
