/**
 * Twitch's OAuth endpoints (`TWITCH_AUTH_URL`, default https://id.twitch.tv/oauth2): token
 * validation (`GET /validate`), refresh (`POST /token`, grant_type=refresh_token) and the
 * application's app access token (`POST /token`, grant_type=client_credentials).
 *
 * Contract:
 * - every answer is checked with zod at the edge; a 401 from `/validate` is `{ valid: false }`,
 *   a refused refresh is TwitchTokenError (code TWITCH_TOKEN_REFRESH) naming the variable to fix,
 *   and a URL that is no OAuth root at all (404/405/426) is TwitchTokenError (TWITCH_AUTH_URL);
 * - a network failure, a timeout or a 5xx is TwitchAuthUnavailableError (retryable): the caller
 *   retries, it never concludes the token is bad from it;
 * - no token, refresh token or client secret is ever put in an error message or log line.
 * The HTTP plumbing (undici, timeouts, one Agent) is here so the Helix client can reuse it
 * (`TwitchAuthClient.dispatcher`); token policy (what to check, when to refresh) is in token.ts.
 */
import { LazyPool, undici } from '../http-client/undici.js';
import { z } from 'zod';
import { GiftdropError } from '../shared/errors.js';
import { jsonOrUndefined } from '../http-client/json.js';

/** A definitive token problem: start-up cannot go on with this token. */
export class TwitchTokenError extends GiftdropError {
  constructor(code: string, message: string) {
    super(code, message);
  }
}

/** Twitch's auth server could not be asked (network, timeout, 5xx): try again later. */
export class TwitchAuthUnavailableError extends GiftdropError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('TWITCH_AUTH_UNAVAILABLE', message, options);
  }
}

const ValidateSchema = z.object({
  client_id: z.string(),
  login: z.string(),
  scopes: z.array(z.string()).nullable().transform((s) => s ?? []),
  user_id: z.string(),
  expires_in: z.number().int().nonnegative(),
});

const TokenSchema = z.object({
  access_token: z.string().min(1),
  refresh_token: z.string().min(1),
  expires_in: z.number().int().nonnegative().optional(),
  scope: z.array(z.string()).optional(),
  token_type: z.string().optional(),
});

const AppTokenSchema = z.object({ access_token: z.string().min(1), expires_in: z.number().int().nonnegative().optional() });

const ErrorSchema = z.object({ status: z.number().optional(), message: z.string().optional() }).passthrough();

export interface TokenInfo {
  clientId: string;
  login: string;
  userId: string;
  scopes: string[];
  /** Seconds left (0: Twitch gives no expiry for this token). */
  expiresIn: number;
}

export type ValidateResult = ({ valid: true } & TokenInfo) | { valid: false; reason: string };

export interface RefreshedTokens {
  accessToken: string;
  refreshToken: string;
  /** Seconds, when Twitch said. */
  expiresIn?: number;
  scopes?: string[];
}

export interface TwitchAuthClientOptions {
  /** TWITCH_AUTH_URL, e.g. https://id.twitch.tv/oauth2 (no trailing slash needed). */
  authUrl: string;
  /** Per-request deadline (default 10 000 ms). */
  timeoutMs?: number;
}

export class TwitchAuthClient {
  readonly authUrl: string;
  /** Shared connection pool (the Helix client reuses it); undici loads on the first call. */
  readonly dispatcher: LazyPool;
  private readonly timeoutMs: number;

  constructor(options: TwitchAuthClientOptions) {
    this.authUrl = options.authUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.dispatcher = new LazyPool({ keepAliveTimeout: 4_000, connect: { timeout: Math.min(this.timeoutMs, 10_000) } });
  }

  /** `GET /validate`: who the token belongs to, its scopes and seconds left. */
  async validate(token: string): Promise<ValidateResult> {
    const bare = token.replace(/^oauth:/i, '');
    const { status, body } = await this.call('GET', '/validate', { authorization: `OAuth ${bare}` });
    if (status === 401) return { valid: false, reason: errorMessage(body) ?? 'invalid access token' };
    if (status === 404 || status === 405 || status === 426) {
      // Not an OAuth root at all (e.g. a local chat proxy without /oauth2): retrying cannot help.
      throw new TwitchTokenError(
        'TWITCH_AUTH_URL',
        `${this.authUrl}/validate answered HTTP ${status}: it is not Twitch's OAuth root. Set TWITCH_AUTH_URL to ` +
          'https://id.twitch.tv/oauth2 (or to a server that implements /validate and /token).',
      );
    }
    if (status !== 200) throw new TwitchAuthUnavailableError(`Twitch token validation answered HTTP ${status}`);
    const parsed = ValidateSchema.safeParse(body);
    if (!parsed.success) throw new TwitchAuthUnavailableError('Twitch token validation answered an unexpected body');
    const v = parsed.data;
    return { valid: true, clientId: v.client_id, login: v.login.toLowerCase(), userId: v.user_id, scopes: v.scopes, expiresIn: v.expires_in };
  }

  /** `POST /token` with grant_type=refresh_token. Twitch rotates the refresh token too. */
  async refresh(credentials: { refreshToken: string; clientId: string; clientSecret: string }): Promise<RefreshedTokens> {
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: credentials.refreshToken,
      client_id: credentials.clientId,
      client_secret: credentials.clientSecret,
    }).toString();
    const { status, body } = await this.call('POST', '/token', { 'content-type': 'application/x-www-form-urlencoded' }, form);
    if (status === 400 || status === 401 || status === 403) {
      throw new TwitchTokenError(
        'TWITCH_TOKEN_REFRESH',
        `Twitch refused to refresh the chat token (${errorMessage(body) ?? `HTTP ${status}`}). Check TWITCH_REFRESH_TOKEN, ` +
          'TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET, or put a fresh TWITCH_TOKEN in .env.',
      );
    }
    if (status !== 200) throw new TwitchAuthUnavailableError(`Twitch token refresh answered HTTP ${status}`);
    const parsed = TokenSchema.safeParse(body);
    if (!parsed.success) throw new TwitchAuthUnavailableError('Twitch token refresh answered an unexpected body');
    const t = parsed.data;
    return {
      accessToken: t.access_token,
      refreshToken: t.refresh_token,
      ...(t.expires_in !== undefined ? { expiresIn: t.expires_in } : {}),
      ...(t.scope ? { scopes: t.scope } : {}),
    };
  }

  /**
   * `POST /token` with grant_type=client_credentials: an app access token of the application
   * (TWITCH_CLIENT_ID with TWITCH_CLIENT_SECRET). A refusal is TwitchTokenError naming both.
   */
  async clientCredentials(credentials: { clientId: string; clientSecret: string }): Promise<{ accessToken: string; expiresIn?: number }> {
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: credentials.clientId, client_secret: credentials.clientSecret }).toString();
    const { status, body } = await this.call('POST', '/token', { 'content-type': 'application/x-www-form-urlencoded' }, form);
    if (status === 400 || status === 401 || status === 403) {
      throw new TwitchTokenError(
        'TWITCH_APP_TOKEN',
        `Twitch refused an app access token (${errorMessage(body) ?? `HTTP ${status}`}). Check TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET (the application's client secret).`,
      );
    }
    if (status !== 200) throw new TwitchAuthUnavailableError(`Twitch app token request answered HTTP ${status}`);
    const parsed = AppTokenSchema.safeParse(body);
    if (!parsed.success) throw new TwitchAuthUnavailableError('Twitch app token request answered an unexpected body');
    return { accessToken: parsed.data.access_token, ...(parsed.data.expires_in !== undefined ? { expiresIn: parsed.data.expires_in } : {}) };
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  private async call(method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: unknown }> {
    try {
      const { request } = await undici();
      const res = await request(`${this.authUrl}${path}`, {
        method,
        headers: { accept: 'application/json', ...headers },
        ...(body !== undefined ? { body } : {}),
        dispatcher: await this.dispatcher.get(),
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const json = jsonOrUndefined(await res.body.text());
      if (res.statusCode >= 500) throw new TwitchAuthUnavailableError(`Twitch auth server answered HTTP ${res.statusCode}`);
      return { status: res.statusCode, body: json };
    } catch (err) {
      if (err instanceof GiftdropError) throw err;
      const code = (err as { code?: string }).code;
      throw new TwitchAuthUnavailableError(
        `could not reach the Twitch auth server at ${this.authUrl} (${code ?? (err as Error).name ?? 'error'})`,
        { cause: err },
      );
    }
  }
}

function errorMessage(body: unknown): string | undefined {
  const e = ErrorSchema.safeParse(body);
  return e.success ? e.data.message : undefined;
}
