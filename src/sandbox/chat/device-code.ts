/**
 * The sandbox's stand-in for Twitch's Device Code Grant flow (a Public application: a client id,
 * no secret, no redirect URL), beside the bot token's endpoints in oauth.ts, on the chat server's
 * port:
 * - `POST /oauth2/device` (form: client_id, scopes) -> 200 `{ device_code, expires_in, interval,
 *   user_code, verification_uri }` (verification_uri is this server's `/activate?public=true&device-code=<user_code>`),
 *   400 `{ status, message: "invalid client" }` for a client id that is not the public application's;
 * - `GET /activate[?device-code=XXXXXXXX]`: the page the user opens (a real HTML form, so a browser
 *   can do it): the code, the account to log in as, what the application asks for, Authorize / Cancel;
 *   `POST /activate` (form: device-code, login, decision=authorize|deny) records the answer;
 * - `POST /oauth2/token` with `grant_type=urn:ietf:params:oauth:grant-type:device_code` (client_id,
 *   device_code; oauth.ts hands it here) answers in Twitch's envelope `{ status: 400, message }`:
 *   `authorization_pending` until the user answers, `slow_down` to a poll sooner than `interval`
 *   seconds after the previous one (and the interval grows by 5 s, RFC 8628), `access_denied` after
 *   Cancel (Twitch does not document its denial; RFC 8628's code in Twitch's envelope), and
 *   `invalid device code` for a code that expired, was already redeemed or never existed (what
 *   Twitch answers for all three); once authorized, 200 `{ access_token, refresh_token, expires_in,
 *   scope, token_type }` exactly once;
 * - `grant_type=refresh_token` for a public client's token (client_id, refresh_token, no secret):
 *   the refresh token is single use: the answer carries a new pair and a reused one is refused
 *   400 "Invalid refresh token", as Twitch refuses it.
 * A grant for the bot account becomes the chat login's token (oauth.ts `install`: one bot token at a
 * time, the old one stops); grants for other accounts (the broadcaster) are kept here and answer
 * `/oauth2/validate` and the Helix sandbox (`userOf`). `revoke(login)` ends a login's grant (both
 * tokens), as disconnecting the application in Twitch's settings does. Every time is the injected
 * clock. Secrets are kept by their SHA-256 digest and compared through it.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../shared/clock.js';
import { escapeHtml } from '../../shared/html.js';

/** Twitch's grant type for the device code poll. */
export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

interface SandboxUser {
  id: string;
  login: string;
}

/** Tokens issued to one account by the device flow (or refreshed since). */
export interface SandboxGrant {
  user: SandboxUser;
  clientId: string;
  scopes: string[];
  access: string;
  refresh: string;
  expiresAt: number;
}

export interface SandboxDeviceLoginOptions {
  clock: Clock;
  /** The public application's client id. */
  publicClientId: string;
  /** Seconds a poll must wait after the previous one (Twitch: 5). */
  intervalSeconds: number;
  /** Seconds a device code can be authorized (Twitch: 1800). */
  codeLifetimeSeconds: number;
  /** Lifetime of an access token (Twitch: about 4 h). */
  tokenLifetimeSeconds: number;
  /** `http://host:port` of this server (known once it listens). */
  baseUrl: () => string;
  /** The chat identity of a login; throws for an invalid one. */
  userFor(login: string): SandboxUser;
  /** Accounts named on the page as a hint (the bot, the broadcaster). */
  knownLogins: () => readonly string[];
  /** The bot account's login: its grant is installed as the chat login's token. */
  botLogin: string;
  installBotGrant(grant: SandboxGrant): void;
}

type CodeState = 'pending' | 'authorized' | 'denied';

interface DeviceCode {
  deviceDigest: string;
  userCode: string;
  clientId: string;
  scopes: string[];
  expiresAt: number;
  intervalMs: number;
  lastPollAt?: number;
  state: CodeState;
  user?: SandboxUser;
}

const digest = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
const fresh = (bytes = 15): string => randomBytes(bytes).toString('hex');
/** Twitch's user codes: 8 capital letters. */
const USER_CODE_LETTERS = 'ABCDEFGHJKLMNPQRSTUVWXYZ';

/** Plain words for the scopes the page lists (what a real consent page says, shortened). */
const SCOPE_WORDS: Record<string, string> = {
  'chat:read': 'read chat',
  'chat:edit': 'send chat messages',
  'user:read:chat': 'read chat',
  'user:write:chat': 'send chat messages',
  'user:bot': 'appear in chat as a bot',
  'channel:bot': 'let a bot appear in your chat',
  'user:manage:whispers': 'send whispers',
  'moderator:read:followers': "see your channel's followers",
  'channel:read:redemptions': 'see channel point redemptions',
  'channel:manage:redemptions': 'manage channel point rewards',
  'bits:read': 'see Bits information',
  'channel:read:subscriptions': "see your channel's subscribers",
  'moderation:read': "see your channel's moderators",
};

export class SandboxDeviceLogin {
  private readonly codes = new Map<string, DeviceCode>();
  private readonly byUserCode = new Map<string, DeviceCode>();
  /** Grants of accounts other than the bot, by access-token digest and by refresh-token digest. */
  private readonly grantsByAccess = new Map<string, SandboxGrant>();
  private readonly grantsByRefresh = new Map<string, SandboxGrant>();
  /** What happened, for tests: codes issued, polls answered by message, tokens issued, refreshes, refusals. */
  readonly stats = { issued: 0, polls: {} as Record<string, number>, granted: 0, refreshed: 0, refusedRefresh: 0 };

  constructor(private readonly o: SandboxDeviceLoginOptions) {}

  get publicClientId(): string {
    return this.o.publicClientId;
  }

  /** A live grant of an account other than the bot, by its access token. */
  grantOf(token: string): SandboxGrant | undefined {
    const g = this.grantsByAccess.get(digest(token));
    return g && g.expiresAt > this.o.clock.now() ? g : undefined;
  }

  /** The pending or authorized device code a user code names (tests, the demo). */
  codeFor(userCode: string): { state: CodeState; scopes: string[] } | undefined {
    const c = this.byUserCode.get(userCode.toUpperCase());
    return c && c.expiresAt > this.o.clock.now() ? { state: c.state, scopes: [...c.scopes] } : undefined;
  }

  /** Answers the verification page without a browser (tests): true when the code was pending. */
  answer(userCode: string, login: string, decision: 'authorize' | 'deny'): boolean {
    const c = this.byUserCode.get(userCode.toUpperCase());
    if (!c || c.state !== 'pending' || c.expiresAt <= this.o.clock.now()) return false;
    if (decision === 'deny') c.state = 'denied';
    else {
      c.user = this.o.userFor(login);
      c.state = 'authorized';
    }
    return true;
  }

  /** The login disconnects the application: its tokens stop working (the bot's: oauth.ts). */
  revoke(login: string): number {
    let n = 0;
    for (const [key, g] of this.grantsByAccess) {
      if (g.user.login !== login.toLowerCase()) continue;
      this.grantsByAccess.delete(key);
      this.grantsByRefresh.delete(digest(g.refresh));
      n++;
    }
    return n;
  }

  /** Serves `/oauth2/device` and `/activate`; false for other paths. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    if (url.pathname === '/oauth2/device' && req.method === 'POST') {
      readForm(req, (form) => this.device(res, form));
      return true;
    }
    if (url.pathname === '/activate' && (req.method === 'GET' || req.method === 'HEAD')) {
      this.page(res, url.searchParams.get('device-code') ?? '');
      return true;
    }
    if (url.pathname === '/activate' && req.method === 'POST') {
      readForm(req, (form) => this.decide(res, form));
      return true;
    }
    return false;
  }

  /** `grant_type=refresh_token` for a token issued here (not the bot's): single use. False when the token is not one of ours. */
  refreshOther(form: URLSearchParams, res: ServerResponse): boolean {
    const g = this.grantsByRefresh.get(digest(form.get('refresh_token') ?? ''));
    if (!g) return false;
    if (form.get('client_id') !== g.clientId) {
      json(res, 400, { status: 400, message: 'invalid client' });
      return true;
    }
    this.grantsByRefresh.delete(digest(g.refresh));
    this.grantsByAccess.delete(digest(g.access));
    const next: SandboxGrant = {
      ...g,
      access: fresh(),
      refresh: fresh(),
      expiresAt: this.o.clock.now() + this.o.tokenLifetimeSeconds * 1000,
    };
    this.keep(next);
    this.stats.refreshed++;
    json(res, 200, tokenBody(next, this.o.tokenLifetimeSeconds));
    return true;
  }

  /** Counts a refused refresh (oauth.ts answers it). */
  refusedRefresh(): void {
    this.stats.refusedRefresh++;
  }

  /** `grant_type=urn:ietf:params:oauth:grant-type:device_code` at `/oauth2/token` (called by oauth.ts). */
  exchange(form: URLSearchParams, res: ServerResponse): void {
    const now = this.o.clock.now();
    const c = this.codes.get(digest(form.get('device_code') ?? ''));
    const say = (message: string): void => {
      this.stats.polls[message] = (this.stats.polls[message] ?? 0) + 1;
      json(res, 400, { status: 400, message });
    };
    if (!c || c.expiresAt <= now) return say('invalid device code');
    if (form.get('client_id') !== c.clientId) return say('invalid client');
    if (c.state === 'pending') {
      const early = c.lastPollAt !== undefined && now - c.lastPollAt < c.intervalMs;
      c.lastPollAt = now;
      if (early) {
        c.intervalMs += 5000;
        return say('slow_down');
      }
      return say('authorization_pending');
    }
    this.forget(c);
    if (c.state === 'denied') return say('access_denied');
    const grant: SandboxGrant = {
      user: c.user!,
      clientId: c.clientId,
      scopes: [...c.scopes],
      access: fresh(),
      refresh: fresh(),
      expiresAt: now + this.o.tokenLifetimeSeconds * 1000,
    };
    if (grant.user.login === this.o.botLogin) this.o.installBotGrant(grant);
    else this.keep(grant);
    this.stats.granted++;
    json(res, 200, tokenBody(grant, this.o.tokenLifetimeSeconds));
  }

  private keep(g: SandboxGrant): void {
    this.grantsByAccess.set(digest(g.access), g);
    this.grantsByRefresh.set(digest(g.refresh), g);
  }

  private forget(c: DeviceCode): void {
    this.codes.delete(c.deviceDigest);
    this.byUserCode.delete(c.userCode);
  }

  private device(res: ServerResponse, form: URLSearchParams): void {
    if (form.get('client_id') !== this.o.publicClientId)
      return json(res, 400, { status: 400, message: 'invalid client' });
    const scopes = (form.get('scopes') ?? '').split(/\s+/).filter(Boolean);
    const now = this.o.clock.now();
    for (const c of [...this.codes.values()]) if (c.expiresAt <= now) this.forget(c);
    let userCode: string;
    do userCode = Array.from({ length: 8 }, () => USER_CODE_LETTERS[randomInt(USER_CODE_LETTERS.length)]).join('');
    while (this.byUserCode.has(userCode));
    const deviceCode = fresh(20);
    const code: DeviceCode = {
      deviceDigest: digest(deviceCode),
      userCode,
      clientId: this.o.publicClientId,
      scopes,
      expiresAt: now + this.o.codeLifetimeSeconds * 1000,
      intervalMs: this.o.intervalSeconds * 1000,
      state: 'pending',
    };
    this.codes.set(code.deviceDigest, code);
    this.byUserCode.set(userCode, code);
    this.stats.issued++;
    json(res, 200, {
      device_code: deviceCode,
      expires_in: this.o.codeLifetimeSeconds,
      interval: this.o.intervalSeconds,
      user_code: userCode,
      verification_uri: `${this.o.baseUrl()}/activate?public=true&device-code=${userCode}`,
    });
  }

  private page(res: ServerResponse, userCode: string, note = ''): void {
    const c = this.byUserCode.get(userCode.toUpperCase());
    const live = c && c.state === 'pending' && c.expiresAt > this.o.clock.now();
    const asks = live
      ? `<p>The application (client id <code>${escapeHtml(c.clientId)}</code>) asks to:</p><ul id="scopes">${c.scopes
          .map((s) => `<li>${escapeHtml(SCOPE_WORDS[s] ?? s)} <small>(${escapeHtml(s)})</small></li>`)
          .join('')}</ul>`
      : '';
    const known = this.o
      .knownLogins()
      .map((l) => `<code>${escapeHtml(l)}</code>`)
      .join(', ');
    send(
      res,
      200,
      `<h1>Activate your device</h1>${note}<form method="post" action="/activate">
<p><label>Code <input name="device-code" id="code" value="${escapeHtml(userCode.toUpperCase())}" autocomplete="off"></label></p>
<p><label>Log in as <input name="login" id="login" autocomplete="off"></label> <small>accounts here: ${known}, or any viewer</small></p>
${asks}<p><button type="submit" name="decision" value="authorize" id="authorize">Authorize</button> <button type="submit" name="decision" value="deny" id="deny">Cancel</button></p></form>`,
    );
  }

  private decide(res: ServerResponse, form: URLSearchParams): void {
    const userCode = (form.get('device-code') ?? '').trim().toUpperCase();
    const decision = form.get('decision') === 'deny' ? 'deny' : 'authorize';
    const c = this.byUserCode.get(userCode);
    if (!c || c.state !== 'pending' || c.expiresAt <= this.o.clock.now()) {
      return send(
        res,
        400,
        '<h1>Activate your device</h1><p id="result">That code is not valid: it expired or was already used. Start the login again on your device.</p>',
      );
    }
    if (decision === 'authorize') {
      try {
        this.o.userFor(form.get('login') ?? '');
      } catch {
        return this.page(res, userCode, '<p id="result">Type the account to log in as.</p>');
      }
    }
    this.answer(userCode, form.get('login') ?? '', decision);
    send(
      res,
      200,
      decision === 'deny'
        ? '<h1>Activate your device</h1><p id="result">Cancelled: the device was not connected.</p>'
        : `<h1>Success!</h1><p id="result">${escapeHtml(c.user!.login)} is connected. Return to your device to continue.</p>`,
    );
  }
}

function tokenBody(g: SandboxGrant, lifetimeSeconds: number): Record<string, unknown> {
  return {
    access_token: g.access,
    refresh_token: g.refresh,
    expires_in: lifetimeSeconds,
    scope: [...g.scopes],
    token_type: 'bearer',
  };
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Twitch (sandbox): activate</title></head><body>${body}</body></html>`,
  );
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
