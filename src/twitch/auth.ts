/**
 * Twitch's OAuth endpoints (`TWITCH_AUTH_URL`, default https://id.twitch.tv/oauth2): token
 * validation (`GET /validate`), refresh (`POST /token`, grant_type=refresh_token; without a
 * client secret for a Public application), the device code flow (`POST /device`, then
 * `POST /token` with the device-code grant: `deviceStart`, `devicePoll`), and the application's app
 * access token (`POST /token`, grant_type=client_credentials).
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
  scopes: z
    .array(z.string())
    .nullable()
    .transform((s) => s ?? []),
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

const AppTokenSchema = z.object({
  access_token: z.string().min(1),
  expires_in: z.number().int().nonnegative().optional(),
});

const ErrorSchema = z.object({ status: z.number().optional(), message: z.string().optional() }).passthrough();

const DeviceSchema = z.object({
  device_code: z.string().min(1),
  user_code: z.string().min(1),
  verification_uri: z.string().min(1),
  interval: z.number().int().nonnegative(),
  expires_in: z.number().int().positive(),
});

/** The device-code poll's grant type (RFC 8628). */
const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/** A started device login: what the user opens and types, and how to poll. */
export interface DeviceStart {
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  /** Seconds between polls. */
  interval: number;
  /** Seconds the code can be authorized. */
  expiresIn: number;
}

/**
 * One poll's answer: the tokens, still waiting (`pending`), poll slower (`slow-down`), or over:
 * `denied` (the user cancelled), `expired` (the code is dead: expired or already used; Twitch
 * answers "invalid device code" for both), `refused` (anything else Twitch said: the message).
 */
export type DevicePoll =
  | { kind: 'tokens'; tokens: RefreshedTokens }
  | { kind: 'pending' }
  | { kind: 'slow-down' }
  | { kind: 'denied' }
  | { kind: 'expired' }
  | { kind: 'refused'; message: string };

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
    return {
      valid: true,
      clientId: v.client_id,
      login: v.login.toLowerCase(),
      userId: v.user_id,
      scopes: v.scopes,
      expiresIn: v.expires_in,
    };
  }

  /**
   * `POST /token` with grant_type=refresh_token. Twitch rotates the refresh token too (and a Public
   * application's is single use). `clientSecret` is absent for a Public application. `fix` is the
   * sentence a refusal ends with (what to do; default: the .env variables).
   */
  async refresh(
    credentials: { refreshToken: string; clientId: string; clientSecret?: string },
    fix?: string,
  ): Promise<RefreshedTokens> {
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: credentials.refreshToken,
      client_id: credentials.clientId,
      ...(credentials.clientSecret ? { client_secret: credentials.clientSecret } : {}),
    }).toString();
    const { status, body } = await this.call(
      'POST',
      '/token',
      { 'content-type': 'application/x-www-form-urlencoded' },
      form,
    );
    if (status === 400 || status === 401 || status === 403) {
      throw new TwitchTokenError(
        'TWITCH_TOKEN_REFRESH',
        `Twitch refused to refresh the chat token (${errorMessage(body) ?? `HTTP ${status}`}). ` +
          (fix ??
            'Check TWITCH_REFRESH_TOKEN, TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET, or put a fresh TWITCH_TOKEN in .env.'),
      );
    }
    if (status !== 200) throw new TwitchAuthUnavailableError(`Twitch token refresh answered HTTP ${status}`);
    return tokensFrom(body, 'Twitch token refresh');
  }

  /**
   * `POST /device` (client_id, scopes): starts a device login. A client id Twitch does not know (or
   * that is not allowed the device flow) is TwitchTokenError TWITCH_CLIENT_ID.
   */
  async deviceStart(clientId: string, scopes: readonly string[]): Promise<DeviceStart> {
    const form = new URLSearchParams({ client_id: clientId, scopes: scopes.join(' ') }).toString();
    const { status, body } = await this.call(
      'POST',
      '/device',
      { 'content-type': 'application/x-www-form-urlencoded' },
      form,
    );
    if (status >= 400 && status < 500) {
      throw new TwitchTokenError(
        'TWITCH_CLIENT_ID',
        `Twitch refused to start a login for client id ${clientId} (${errorMessage(body) ?? `HTTP ${status}`}): it must be the client id of a Twitch application (dev.twitch.tv/console/apps) whose client type is Public.`,
      );
    }
    if (status !== 200) throw new TwitchAuthUnavailableError(`Twitch device login answered HTTP ${status}`);
    const parsed = DeviceSchema.safeParse(body);
    if (!parsed.success) throw new TwitchAuthUnavailableError('Twitch device login answered an unexpected body');
    const d = parsed.data;
    return {
      deviceCode: d.device_code,
      userCode: d.user_code,
      verificationUri: d.verification_uri,
      interval: d.interval,
      expiresIn: d.expires_in,
    };
  }

  /** One poll of a device login (`POST /token` with the device-code grant). */
  async devicePoll(
    clientId: string,
    deviceCode: string,
    scopes: readonly string[],
    clientSecret?: string,
  ): Promise<DevicePoll> {
    const form = new URLSearchParams({
      client_id: clientId,
      scopes: scopes.join(' '),
      device_code: deviceCode,
      grant_type: DEVICE_GRANT_TYPE,
      ...(clientSecret ? { client_secret: clientSecret } : {}),
    }).toString();
    const { status, body } = await this.call(
      'POST',
      '/token',
      { 'content-type': 'application/x-www-form-urlencoded' },
      form,
    );
    if (status === 200) return { kind: 'tokens', tokens: tokensFrom(body, 'Twitch device login') };
    if (status >= 500 || status === 429)
      throw new TwitchAuthUnavailableError(`Twitch device login answered HTTP ${status}`);
    // Twitch's envelope `{status, message}`; RFC 8628's `{error}` read the same way.
    const e = body as { message?: unknown; error?: unknown } | undefined;
    const said = typeof e?.message === 'string' ? e.message : typeof e?.error === 'string' ? e.error : undefined;
    const message = said ?? `HTTP ${status}`;
    const word = message.toLowerCase();
    if (word === 'authorization_pending') return { kind: 'pending' };
    if (word === 'slow_down') return { kind: 'slow-down' };
    if (word === 'access_denied') return { kind: 'denied' };
    if (word === 'expired_token' || word === 'invalid device code') return { kind: 'expired' };
    return { kind: 'refused', message };
  }

  /**
   * `POST /token` with grant_type=client_credentials: an app access token of the application
   * (TWITCH_CLIENT_ID with TWITCH_CLIENT_SECRET). A refusal is TwitchTokenError naming both.
   */
  async clientCredentials(credentials: {
    clientId: string;
    clientSecret: string;
  }): Promise<{ accessToken: string; expiresIn?: number }> {
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: credentials.clientId,
      client_secret: credentials.clientSecret,
    }).toString();
    const { status, body } = await this.call(
      'POST',
      '/token',
      { 'content-type': 'application/x-www-form-urlencoded' },
      form,
    );
    if (status === 400 || status === 401 || status === 403) {
      throw new TwitchTokenError(
        'TWITCH_APP_TOKEN',
        `Twitch refused an app access token (${errorMessage(body) ?? `HTTP ${status}`}). Check TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET (the application's client secret).`,
      );
    }
    if (status !== 200) throw new TwitchAuthUnavailableError(`Twitch app token request answered HTTP ${status}`);
    const parsed = AppTokenSchema.safeParse(body);
    if (!parsed.success) throw new TwitchAuthUnavailableError('Twitch app token request answered an unexpected body');
    return {
      accessToken: parsed.data.access_token,
      ...(parsed.data.expires_in !== undefined ? { expiresIn: parsed.data.expires_in } : {}),
    };
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  private async call(
    method: 'GET' | 'POST',
    path: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<{ status: number; body: unknown }> {
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
      if (res.statusCode >= 500)
        throw new TwitchAuthUnavailableError(`Twitch auth server answered HTTP ${res.statusCode}`);
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

/** A token answer's body, checked; an unexpected one is TwitchAuthUnavailableError naming `what`. */
function tokensFrom(body: unknown, what: string): RefreshedTokens {
  const parsed = TokenSchema.safeParse(body);
  if (!parsed.success) throw new TwitchAuthUnavailableError(`${what} answered an unexpected body`);
  const t = parsed.data;
  return {
    accessToken: t.access_token,
    refreshToken: t.refresh_token,
    ...(t.expires_in !== undefined ? { expiresIn: t.expires_in } : {}),
    ...(t.scope ? { scopes: t.scope } : {}),
  };
}

function errorMessage(body: unknown): string | undefined {
  const e = ErrorSchema.safeParse(body);
  return e.success ? e.data.message : undefined;
}
