/**
 * Credentials for the Fourthwall Open API: HTTP Basic (the shop's API user), a static Bearer
 * token, and OAuth (platform apps) with code exchange and refresh against a configurable token
 * URL (default `<API root>/platform/token`; a Keycloak-style
 * `{auth_url}/auth/realms/<realm>/protocol/openid-connect/token` is just another token URL).
 *
 * Contract:
 * - `createAuthProvider` keeps every secret in closures: the returned object has no field that
 *   holds a password, token or client secret, so logging or inspecting it cannot leak one.
 * - `headerFor(requirement)` picks the scheme per operation: 'A' prefers OAuth/Bearer and falls
 *   back to Basic; 'B' prefers Basic and falls back to OAuth/Bearer (the server decides); 'none'
 *   sends nothing.
 * - OAuth access tokens are refreshed ahead of expiry (default 60 s before, at most half the
 *   lifetime) and once after a 401 (`onUnauthorized`). Concurrent callers share one refresh.
 * - Token endpoint failures raise FourthwallTokenError, which never carries a token or secret.
 * - Every token obtained at runtime (a refresh) is handed to `registerSecret` (the log scrubber)
 *   before it is used; the configured ones are in `secrets()`.
 * - `clientAuth(config)` maps the Config's Fourthwall credentials onto an AuthConfig.
 *
 * Deliberately not here: the authorization redirect UI (the setup CLI builds the URL with
 * `authorizeUrl`), token persistence (pass `onTokens`), retries of API calls (client.ts).
 */
import type { Dispatcher } from 'undici';
import { undici } from '../http-client/undici.js';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { Clock } from '../shared/clock.js';
import { jsonOrUndefined } from '../http-client/json.js';
import { FourthwallTokenError } from './errors.js';
import type { AuthRequirement } from './operations.js';
import { TokenResponseSchema } from './schemas.js';

/** OAuth client settings and (optionally) tokens obtained earlier. */
export interface OAuthConfig {
  clientId: string;
  clientSecret?: string;
  /** Token endpoint; default `<API root>/platform/token`. */
  tokenUrl?: string;
  accessToken?: string;
  refreshToken?: string;
  /** When `accessToken` expires (ms since epoch); unknown means "valid until a 401". */
  expiresAt?: number;
  /** Refresh this long before expiry (default 60 000 ms; at most half the token lifetime). */
  refreshAheadMs?: number;
  /** Called with every new token set (persist the rotated refresh token here). */
  onTokens?: (tokens: OAuthTokens) => void | Promise<void>;
}

/** Which credentials a client has. Any combination is allowed; at least one is usual. */
export interface AuthConfig {
  basic?: { username: string; password: string };
  /** A static Bearer token (no refresh). */
  bearerToken?: string;
  oauth?: OAuthConfig;
}

/** A token set as returned by the token endpoint. */
export interface OAuthTokens {
  accessToken: string;
  refreshToken?: string;
  /** ms since epoch, when the endpoint gave `expires_in`. */
  expiresAt?: number;
  tokenType?: string;
  scope?: string;
}

/** The Authorization header chosen for one request. */
export interface AuthHeader {
  value: string;
  scheme: 'basic' | 'bearer' | 'oauth';
  /** Opaque marker of the token used, for `onUnauthorized` (not the token itself). */
  generation: number;
}

/** Posts a form to a token endpoint; resolves with the status and parsed JSON body (or undefined). */
export type TokenTransport = (url: string, form: URLSearchParams) => Promise<{ status: number; body: unknown }>;

/** The credentials object the client uses. Holds no secret in any field. */
export interface AuthProvider {
  /** The header for an operation of this auth requirement, or undefined when none applies. */
  headerFor(requirement: AuthRequirement): Promise<AuthHeader | undefined>;
  /**
   * After a 401 with `used`: refreshes the OAuth token (once, shared by concurrent callers) if
   * `used` is still the current one. Resolves true when a retry with a fresh token makes sense.
   */
  onUnauthorized(used: AuthHeader): Promise<boolean>;
  /** Which credentials are configured (safe to log). */
  describe(): { basic: boolean; bearer: boolean; oauth: boolean; canRefresh: boolean };
  /** Secret values, for `createLogger({ secrets })`. Includes the base64 Basic form. */
  secrets(): string[];
}

export interface AuthProviderDeps {
  clock: Clock;
  /** Token endpoint transport (the client passes a rate-limited one). */
  transport: TokenTransport;
  /** Default token URL when `oauth.tokenUrl` is unset. */
  defaultTokenUrl: string;
  logger?: Logger;
  /** Told every token obtained at runtime (access and refresh), before it is used: the log scrubber. */
  registerSecret?: (value: string) => void;
}

/** Builds the form of a token request; `client_secret` / `code_verifier` only when given. */
function tokenForm(fields: Record<string, string | undefined>): URLSearchParams {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined && v !== '') form.set(k, v);
  return form;
}

/** Validates a token endpoint answer; errors name the status and OAuth `error` code only. */
function readTokenResponse(status: number, body: unknown, now: number): OAuthTokens {
  if (status < 200 || status >= 300) {
    const err =
      body && typeof body === 'object'
        ? ((body as Record<string, unknown>).error ?? (body as Record<string, unknown>).code)
        : undefined;
    const code = typeof err === 'string' ? err.slice(0, 100) : undefined;
    throw new FourthwallTokenError(`token endpoint answered ${status}${code ? ` ${code}` : ''}`, status, code);
  }
  const r = TokenResponseSchema.safeParse(body);
  if (!r.success) throw new FourthwallTokenError('token endpoint answer has no access_token', status);
  const t = r.data;
  return {
    accessToken: t.access_token,
    refreshToken: t.refresh_token ?? undefined,
    expiresAt: typeof t.expires_in === 'number' ? now + t.expires_in * 1000 : undefined,
    tokenType: t.token_type ?? undefined,
    scope: t.scope ?? undefined,
  };
}

/** A token transport over undici (used by the setup CLI; the client passes its own). */
export function undiciTokenTransport(
  options: { dispatcher?: Dispatcher; timeoutMs?: number; userAgent?: string } = {},
): TokenTransport {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return async (url, form) => {
    const { request } = await undici();
    const res = await request(url, {
      method: 'POST',
      dispatcher: options.dispatcher,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        'user-agent': options.userAgent ?? 'giftdrop',
      },
      body: form.toString(),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: res.statusCode, body: jsonOrUndefined(await res.body.text()) };
  };
}

/** Exchanges an authorization code (with optional PKCE verifier) for tokens. */
export async function exchangeAuthorizationCode(options: {
  tokenUrl: string;
  clientId: string;
  clientSecret?: string;
  redirectUri: string;
  code: string;
  codeVerifier?: string;
  clock: Clock;
  transport?: TokenTransport;
}): Promise<OAuthTokens> {
  const transport = options.transport ?? undiciTokenTransport();
  const form = tokenForm({
    grant_type: 'authorization_code',
    client_id: options.clientId,
    client_secret: options.clientSecret,
    redirect_uri: options.redirectUri,
    code: options.code,
    code_verifier: options.codeVerifier,
  });
  let res: { status: number; body: unknown };
  try {
    res = await transport(options.tokenUrl, form);
  } catch (e) {
    throw new FourthwallTokenError('token endpoint unreachable', undefined, undefined, { cause: e });
  }
  return readTokenResponse(res.status, res.body, options.clock.now());
}

/**
 * The URL to send the shop owner to for consent:
 * `<shopAdminUrl>/admin/platform-apps/<client_id>/connect?redirect_uri=<enc>&state=<opt>`.
 */
export function authorizeUrl(shopUrl: string, clientId: string, redirectUri: string, state?: string): string {
  const u = new URL(`/admin/platform-apps/${encodeURIComponent(clientId)}/connect`, shopUrl);
  u.searchParams.set('redirect_uri', redirectUri);
  if (state) u.searchParams.set('state', state);
  return u.toString();
}

/** Builds the credentials object (see the module header). */
/** The client's credentials from the Config (FOURTHWALL_* variables: Basic, OAuth or a static Bearer token). */
export function clientAuth(config: Config): AuthConfig {
  const a = config.fourthwall.auth;
  if (a.kind === 'basic') return { basic: { username: a.username, password: a.password } };
  if (a.kind === 'oauth') {
    if (a.clientId)
      return {
        oauth: {
          clientId: a.clientId,
          clientSecret: a.clientSecret,
          tokenUrl: config.fourthwall.tokenUrl,
          accessToken: a.accessToken,
          refreshToken: a.refreshToken,
        },
      };
    return { bearerToken: a.accessToken };
  }
  return {};
}

export function createAuthProvider(config: AuthConfig, deps: AuthProviderDeps): AuthProvider {
  const basicValue = config.basic
    ? `Basic ${Buffer.from(`${config.basic.username}:${config.basic.password}`, 'utf8').toString('base64')}`
    : undefined;
  const staticBearer = config.bearerToken ? `Bearer ${config.bearerToken}` : undefined;
  const oauth = config.oauth;
  const tokenUrl = oauth?.tokenUrl ?? deps.defaultTokenUrl;
  const refreshAheadMs = oauth?.refreshAheadMs ?? 60_000;
  let accessToken = oauth?.accessToken;
  let refreshToken = oauth?.refreshToken;
  let expiresAt = oauth?.expiresAt;
  let lifetimeMs: number | undefined;
  let generation = 1;
  let inflight: Promise<void> | undefined;

  const canRefresh = () => Boolean(oauth && refreshToken);

  const refresh = (): Promise<void> => {
    if (inflight) return inflight;
    inflight = (async () => {
      if (!oauth || !refreshToken)
        throw new FourthwallTokenError('no refresh token to refresh the access token with', 401, 'no_refresh_token');
      const form = tokenForm({
        grant_type: 'refresh_token',
        client_id: oauth.clientId,
        client_secret: oauth.clientSecret,
        refresh_token: refreshToken,
      });
      let res: { status: number; body: unknown };
      try {
        res = await deps.transport(tokenUrl, form);
      } catch (e) {
        throw new FourthwallTokenError('token endpoint unreachable', undefined, undefined, { cause: e });
      }
      const now = deps.clock.now();
      const t = readTokenResponse(res.status, res.body, now);
      deps.registerSecret?.(t.accessToken);
      if (t.refreshToken) deps.registerSecret?.(t.refreshToken);
      accessToken = t.accessToken;
      if (t.refreshToken) refreshToken = t.refreshToken;
      expiresAt = t.expiresAt;
      lifetimeMs = t.expiresAt !== undefined ? t.expiresAt - now : undefined;
      generation++;
      deps.logger?.debug(
        { expiresInMs: lifetimeMs ?? null, rotated: Boolean(t.refreshToken) },
        'fourthwall oauth token refreshed',
      );
      if (oauth.onTokens) await oauth.onTokens({ ...t, refreshToken });
    })().finally(() => {
      inflight = undefined;
    });
    return inflight;
  };

  const needsRefresh = (): boolean => {
    if (!accessToken) return true;
    if (expiresAt === undefined) return false;
    const ahead = lifetimeMs !== undefined ? Math.min(refreshAheadMs, lifetimeMs / 2) : refreshAheadMs;
    return deps.clock.now() >= expiresAt - ahead;
  };

  const oauthHeader = async (): Promise<AuthHeader | undefined> => {
    if (!oauth) return undefined;
    if (inflight) await inflight;
    else if (needsRefresh() && canRefresh()) await refresh();
    if (!accessToken) return undefined;
    return { value: `Bearer ${accessToken}`, scheme: 'oauth', generation };
  };

  const bearerFirst = async (): Promise<AuthHeader | undefined> => {
    const o = await oauthHeader();
    if (o) return o;
    if (staticBearer) return { value: staticBearer, scheme: 'bearer', generation: 0 };
    return basicValue ? { value: basicValue, scheme: 'basic', generation: 0 } : undefined;
  };

  return {
    async headerFor(requirement) {
      if (requirement === 'none') return undefined;
      if (requirement === 'B' && basicValue) return { value: basicValue, scheme: 'basic', generation: 0 };
      return bearerFirst();
    },
    async onUnauthorized(used) {
      if (used.scheme !== 'oauth' || !canRefresh()) return false;
      if (used.generation !== generation) return true;
      await refresh();
      return true;
    },
    describe() {
      return {
        basic: Boolean(basicValue),
        bearer: Boolean(staticBearer),
        oauth: Boolean(oauth),
        canRefresh: canRefresh(),
      };
    },
    secrets() {
      const out = [
        config.basic?.password,
        basicValue?.slice(6),
        config.bearerToken,
        oauth?.clientSecret,
        accessToken,
        refreshToken,
        oauth?.accessToken,
        oauth?.refreshToken,
      ];
      return out.filter((s): s is string => typeof s === 'string' && s.length > 0);
    },
  };
}
