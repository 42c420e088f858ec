/**
 * "Log in with Twitch" for viewers (the claim page): Twitch's OAuth authorization code flow,
 * asking for no scope at all, only to learn who the viewer is.
 *
 * Contract:
 * - `authorizeUrl(state, redirectUri)`: `TWITCH_AUTH_URL/authorize?response_type=code&client_id&
 *   redirect_uri&scope=&state` (the browser goes there);
 * - `identify(code, redirectUri)`: exchanges the single-use code at `TWITCH_AUTH_URL/token`
 *   (grant_type=authorization_code with TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET), reads the
 *   viewer with `GET <TWITCH_API_URL>/users` and their token, then revokes the token at
 *   `TWITCH_AUTH_URL/revoke` (always, also when the lookup failed); the token never leaves this
 *   function. Rejects with a ViewerLoginError naming the step (never the code or a token).
 * One request per step, 10 s each; no retries (the viewer can press the button again).
 */
import { undici } from '../http-client/undici.js';
import { GiftdropError } from '../shared/errors.js';
import { jsonOrUndefined } from '../http-client/json.js';
import type { Logger } from '../logging/index.js';

class ViewerLoginError extends GiftdropError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('TWITCH_VIEWER_LOGIN', message, options);
  }
}

export interface TwitchViewer {
  id: string;
  login: string;
  displayName: string;
}

export interface ViewerLoginOptions {
  authUrl: string;
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  logger: Logger;
  timeoutMs?: number;
}

export class TwitchViewerLogin {
  private readonly authUrl: string;
  private readonly apiUrl: string;
  private readonly log: Logger;

  constructor(private readonly o: ViewerLoginOptions) {
    this.authUrl = o.authUrl.replace(/\/+$/, '');
    this.apiUrl = o.apiUrl.replace(/\/+$/, '');
    this.log = o.logger.child({ module: 'twitch.viewer-login' });
  }

  authorizeUrl(state: string, redirectUri: string): string {
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: this.o.clientId,
      redirect_uri: redirectUri,
      scope: '',
      state,
    });
    return `${this.authUrl}/authorize?${q.toString()}`;
  }

  async identify(code: string, redirectUri: string): Promise<TwitchViewer> {
    const token = await this.exchange(code, redirectUri);
    try {
      return await this.user(token);
    } finally {
      await this.revoke(token);
    }
  }

  private async call(
    url: string,
    init: { method: string; headers: Record<string, string>; body?: string },
    step: string,
  ) {
    const { request } = await undici();
    const timeout = this.o.timeoutMs ?? 10_000;
    try {
      const res = await request(url, { ...init, headersTimeout: timeout, bodyTimeout: timeout });
      return {
        status: res.statusCode,
        body: jsonOrUndefined(await res.body.text()) as Record<string, unknown> | undefined,
      };
    } catch (err) {
      throw new ViewerLoginError(
        `could not reach Twitch (${step}): ${(err as { code?: string }).code ?? (err as Error).name}`,
        { cause: err },
      );
    }
  }

  private async exchange(code: string, redirectUri: string): Promise<string> {
    const form = new URLSearchParams({
      client_id: this.o.clientId,
      client_secret: this.o.clientSecret,
      code,
      grant_type: 'authorization_code',
      redirect_uri: redirectUri,
    });
    const { status, body } = await this.call(
      `${this.authUrl}/token`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
      },
      'token',
    );
    const token = body?.['access_token'];
    if (status !== 200 || typeof token !== 'string' || !token)
      throw new ViewerLoginError(
        `Twitch refused the login code (HTTP ${status}${typeof body?.['message'] === 'string' ? `: ${body['message']}` : ''})`,
      );
    return token;
  }

  private async user(token: string): Promise<TwitchViewer> {
    const { status, body } = await this.call(
      `${this.apiUrl}/users`,
      {
        method: 'GET',
        headers: { authorization: `Bearer ${token}`, 'client-id': this.o.clientId, accept: 'application/json' },
      },
      'users',
    );
    const u = Array.isArray(body?.['data']) ? (body['data'][0] as Record<string, unknown> | undefined) : undefined;
    if (status !== 200 || !u || typeof u['id'] !== 'string' || typeof u['login'] !== 'string')
      throw new ViewerLoginError(`Twitch did not say who logged in (GET /users: HTTP ${status})`);
    return {
      id: u['id'],
      login: u['login'],
      displayName: typeof u['display_name'] === 'string' && u['display_name'] ? u['display_name'] : u['login'],
    };
  }

  private async revoke(token: string): Promise<void> {
    try {
      const form = new URLSearchParams({ client_id: this.o.clientId, token });
      const { status } = await this.call(
        `${this.authUrl}/revoke`,
        { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() },
        'revoke',
      );
      if (status !== 200) this.log.warn({ status }, 'Twitch did not revoke a viewer login token');
    } catch (err) {
      this.log.warn({ reason: (err as Error).message }, 'could not revoke a viewer login token');
    }
  }
}
