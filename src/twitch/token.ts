/**
 * ChatToken: one Twitch user token over the bot's life (the bot's TWITCH_TOKEN, or a login the
 * setup page saved: the bot's or the broadcaster's): checked at start, refreshed before it expires
 * and after Twitch refuses it, when refresh credentials are known (TWITCH_REFRESH_TOKEN,
 * TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET; or a saved login's refresh token and client id,
 * without a secret for a Public application).
 *
 * Contract:
 * - `current()` is the token to use on the next chat login (the chat client asks for it on every
 *   connect, so a refreshed token is used from the next reconnect on);
 * - `check()` validates the token (`GET /validate`): expired/invalid (after one refresh when
 *   possible), another account than TWITCH_USERNAME, or missing chat:read / chat:edit each throw
 *   TwitchTokenError with one plain sentence naming TWITCH_TOKEN; the auth server being
 *   unreachable throws TwitchAuthUnavailableError (the caller retries);
 * - with refresh credentials, a refresh is scheduled at the later of "5 minutes before expiry"
 *   and "half the lifetime"; `refresh()` is single-flight; every new access and refresh token is
 *   handed to `registerSecret` (the log redactor) before it is used;
 * - with `persist` (a saved login), a renewed pair is handed to it as soon as Twitch answered and
 *   used only once it resolved (the store saves it durably first: a Public application's refresh
 *   token is single use, so the new one must be on disk before the old one is dropped); a save
 *   that fails is logged and the new pair is used from memory (the old one is spent anyway);
 * - a refresh Twitch refuses ends the login: one error line, the 'revoked' event (the caller shows
 *   it on the dashboard and /healthz), and no refresh is tried again (no retry storm); a refresh
 *   Twitch could not be asked (network) is retried on the clock.
 * `wording` names the token and its fix in messages (default: TWITCH_TOKEN and the .env variables).
 * Nothing here writes a token anywhere but through `persist`.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from '../logging/index.js';
import { systemClock, type Clock, type TimerHandle } from '../shared/clock.js';
import { CHAT_SCOPES } from './scopes.js';
import {
  TwitchAuthUnavailableError,
  TwitchTokenError,
  type RefreshedTokens,
  type TwitchAuthClient,
  type TokenInfo,
} from './auth.js';

/** The bot's chat over IRC (the default transport); scopes.ts is their one home. */
const REQUIRED_CHAT_SCOPES = CHAT_SCOPES.irc;

export interface RefreshCredentials {
  refreshToken: string;
  clientId: string;
  /** Absent for a Public application (device code logins). */
  clientSecret?: string;
}

/** How messages name the token and what fixes it. */
export interface TokenWording {
  /** e.g. `TWITCH_TOKEN`, or `the bot's Twitch login`. */
  name: string;
  /** What to do when it is expired, refused or revoked. */
  fix: string;
}

const ENV_WORDING: TokenWording = {
  name: 'TWITCH_TOKEN',
  fix: 'put a new token in TWITCH_TOKEN, or set TWITCH_REFRESH_TOKEN, TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET so the bot refreshes it.',
};

export interface ChatTokenOptions {
  auth: TwitchAuthClient;
  /** TWITCH_USERNAME (the token must belong to it). */
  username: string;
  /** TWITCH_TOKEN, with or without `oauth:`. */
  token: string;
  /** All three refresh variables, or undefined (no refresh). */
  refresh?: RefreshCredentials;
  logger: Logger;
  clock?: Clock;
  /** Registers a new secret value with the log redactor. */
  registerSecret?: (value: string) => void;
  /** Retry delay after a scheduled refresh could not reach Twitch (default 30 000 ms). */
  retryMs?: number;
  /** Saves a renewed pair durably before it is used (a saved login). */
  persist?: (tokens: RefreshedTokens) => Promise<void>;
  /** Scopes the token must have (default chat:read chat:edit: the bot's chat over IRC; over EventSub user:read:chat user:write:chat). */
  requiredScopes?: readonly string[];
  /** How messages name the token (default TWITCH_TOKEN). */
  wording?: TokenWording;
  /** When the access token expires, if known (ms since the epoch): a token already expired is refreshed before the first validation. */
  expiresAt?: number;
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** Events: 'refreshed' (info: { reason: string; expiresIn?: number }), 'revoked' (err: TwitchTokenError: a refresh was refused; the login is over). */
export class ChatToken extends EventEmitter {
  private token: string;
  private credentials: RefreshCredentials | undefined;
  private readonly auth: TwitchAuthClient;
  private readonly username: string;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly registerSecret: (value: string) => void;
  private readonly retryMs: number;
  private timer: TimerHandle | undefined;
  private inflight: Promise<void> | undefined;
  private stopped = false;
  private refreshes = 0;
  private revokedBy: TwitchTokenError | undefined;
  private readonly persist: ((tokens: RefreshedTokens) => Promise<void>) | undefined;
  private readonly requiredScopes: readonly string[];
  private readonly wording: TokenWording;
  private readonly expiresAt: number | undefined;

  private info: TokenInfo | undefined;

  constructor(options: ChatTokenOptions) {
    super();
    this.auth = options.auth;
    this.username = options.username.toLowerCase();
    this.token = options.token.replace(/^oauth:/i, '');
    this.credentials = options.refresh;
    this.log = options.logger.child({ module: 'twitch.token' });
    this.clock = options.clock ?? systemClock;
    this.registerSecret = options.registerSecret ?? (() => undefined);
    this.retryMs = options.retryMs ?? 30_000;
    this.persist = options.persist;
    this.requiredScopes = options.requiredScopes ?? REQUIRED_CHAT_SCOPES;
    this.wording = options.wording ?? ENV_WORDING;
    this.expiresAt = options.expiresAt;
    this.registerSecret(this.token);
    if (this.credentials) this.registerSecret(this.credentials.refreshToken);
  }

  /** The access token for the next login (without `oauth:`). */
  current(): string {
    return this.token;
  }

  canRefresh(): boolean {
    return this.credentials !== undefined && !this.revokedBy;
  }

  /** Why the login is over (a refresh Twitch refused), or undefined while it lives. */
  revoked(): TwitchTokenError | undefined {
    return this.revokedBy;
  }

  /** The client id the token is refreshed with (the application it was issued to), when known. */
  clientId(): string | undefined {
    return this.credentials?.clientId ?? this.info?.clientId;
  }

  /** What Twitch said about the token at the start-up check (user id, scopes), once it passed. */
  validated(): TokenInfo | undefined {
    return this.info;
  }

  /** Successful refreshes so far. */
  refreshCount(): number {
    return this.refreshes;
  }

  /** Start-up validation (see the module header). Resolves with what Twitch says about the token. */
  async check(): Promise<TokenInfo> {
    const name = this.wording.name;
    // A saved token known to be expired is renewed first (one call instead of a refused validation).
    if (this.credentials && this.expiresAt !== undefined && this.expiresAt > 0 && this.expiresAt <= this.clock.now()) {
      await this.refreshOrRevoke('expired at start');
    }
    let v = await this.auth.validate(this.token);
    if (!v.valid && this.canRefresh()) {
      this.log.warn(`${name} is expired or invalid; refreshing it`);
      await this.refreshOrRevoke('invalid at start');
      v = await this.auth.validate(this.token);
    }
    if (!v.valid) {
      throw new TwitchTokenError(
        'TWITCH_TOKEN_INVALID',
        this.wording === ENV_WORDING
          ? `TWITCH_TOKEN is expired or invalid (Twitch says: ${v.reason}). Generate a new user token for ${this.username} ` +
              `with ${(this.requiredScopes.length ? this.requiredScopes : REQUIRED_CHAT_SCOPES).join(' ')} and put it in TWITCH_TOKEN (or set TWITCH_REFRESH_TOKEN, TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET to refresh it).`
          : `${name} is expired or invalid (Twitch says: ${v.reason}): ${this.wording.fix}`,
      );
    }
    if (v.login !== this.username) {
      throw new TwitchTokenError(
        'TWITCH_TOKEN_LOGIN',
        this.wording === ENV_WORDING
          ? `TWITCH_TOKEN belongs to the Twitch account "${v.login}", not to TWITCH_USERNAME "${this.username}". ` +
              `Use a token of ${this.username}, or set TWITCH_USERNAME=${v.login}.`
          : `${name} belongs to the Twitch account "${v.login}", not to "${this.username}": ${this.wording.fix}`,
      );
    }
    const missing = this.requiredScopes.filter((s) => !v.scopes.includes(s));
    if (missing.length > 0) {
      throw new TwitchTokenError(
        'TWITCH_TOKEN_SCOPES',
        `${name} lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(' ')} (it has: ${v.scopes.join(' ') || 'none'}). ` +
          (this.wording === ENV_WORDING
            ? `Generate a new token with ${this.requiredScopes.join(' ')}.`
            : this.wording.fix),
      );
    }
    this.log.info(
      { login: v.login, scopes: v.scopes, expiresIn: v.expiresIn, refresh: this.canRefresh() },
      `${name} is valid for ${v.login}${v.expiresIn > 0 ? `, expires in ${formatDuration(v.expiresIn)}` : ''}`,
    );
    if (v.expiresIn > 0 && !this.canRefresh()) {
      this.log.warn(
        `${name} expires in ${formatDuration(v.expiresIn)}; without TWITCH_REFRESH_TOKEN, TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET ` +
          'the bot cannot log in to chat again after that (a reconnect would fail)',
      );
    }
    this.schedule(v.expiresIn);
    this.info = {
      clientId: v.clientId,
      login: v.login,
      userId: v.userId,
      scopes: [...v.scopes],
      expiresIn: v.expiresIn,
    };
    return v;
  }

  /**
   * Gets a new token now (single-flight). Throws TwitchTokenError when refresh is not configured
   * or Twitch refuses it, TwitchAuthUnavailableError when Twitch cannot be reached.
   */
  refresh(reason: string): Promise<void> {
    if (this.revokedBy) return Promise.reject(this.revokedBy);
    if (!this.credentials) {
      return Promise.reject(
        new TwitchTokenError(
          'TWITCH_TOKEN_INVALID',
          this.wording === ENV_WORDING
            ? 'Twitch refused TWITCH_TOKEN (expired or revoked) and no refresh is configured: put a new token in TWITCH_TOKEN, ' +
                'or set TWITCH_REFRESH_TOKEN, TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET so the bot refreshes it.'
            : `Twitch refused ${this.wording.name} and it cannot be renewed: ${this.wording.fix}`,
        ),
      );
    }
    this.inflight ??= this.doRefresh(this.credentials, reason).finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  /** `refresh`, where a refusal ends the login (said once, 'revoked'). */
  private async refreshOrRevoke(reason: string): Promise<void> {
    try {
      await this.refresh(reason);
    } catch (err) {
      if (err instanceof TwitchTokenError && err.code === 'TWITCH_TOKEN_REFRESH') this.revoke(err);
      throw err;
    }
  }

  /** Twitch refused the refresh: the login is over. One error line and one 'revoked' event, ever. */
  private revoke(err: TwitchTokenError): void {
    if (this.revokedBy) return;
    this.revokedBy = err;
    this.timer?.cancel();
    this.timer = undefined;
    this.log.error({ code: err.code }, err.message);
    this.emit('revoked', err);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private async doRefresh(credentials: RefreshCredentials, reason: string): Promise<void> {
    let t: RefreshedTokens;
    try {
      t = await this.auth.refresh(credentials, this.wording === ENV_WORDING ? undefined : this.wording.fix);
    } catch (err) {
      if (err instanceof TwitchTokenError && err.code === 'TWITCH_TOKEN_REFRESH') this.revoke(err);
      throw err;
    }
    this.registerSecret(t.accessToken);
    this.registerSecret(t.refreshToken);
    if (this.persist) {
      // Saved before it is used: the old refresh token is spent from this answer on.
      await this.persist(t).catch((err: unknown) =>
        this.log.error(
          { err },
          `could not save the renewed ${this.wording.name} (${(err as Error).message}): it is used from memory; if the bot stops before the next renewal is saved, log in again on the setup page`,
        ),
      );
    }
    this.token = t.accessToken;
    this.credentials = { ...credentials, refreshToken: t.refreshToken };
    this.refreshes++;
    this.log.info(
      { reason, expiresIn: t.expiresIn },
      `TWITCH_TOKEN refreshed (${reason}); the new token is used from the next chat login`,
    );
    this.emit('refreshed', { reason, ...(t.expiresIn !== undefined ? { expiresIn: t.expiresIn } : {}) });
    if (t.expiresIn !== undefined) this.schedule(t.expiresIn);
  }

  private schedule(expiresInSeconds: number): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (this.stopped || !this.canRefresh() || expiresInSeconds <= 0) return;
    const lifetimeMs = expiresInSeconds * 1000;
    this.refreshIn(Math.min(MAX_TIMER_MS, Math.max(lifetimeMs - 300_000, lifetimeMs / 2)));
  }

  /** A scheduled refresh; Twitch unreachable -> tried again after `retryMs`, refused -> logged. */
  private refreshIn(delayMs: number): void {
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.refresh('before expiry').catch((err: unknown) => {
        if (this.stopped) return;
        if (err instanceof TwitchAuthUnavailableError) {
          this.log.warn(
            { code: err.code },
            `could not refresh ${this.wording.name} before expiry (${err.message}); trying again in ${Math.round(this.retryMs / 1000)} s`,
          );
          this.refreshIn(this.retryMs);
        } else if (!this.revokedBy) {
          this.log.error({ code: (err as { code?: string }).code }, (err as Error).message);
        }
      });
    }, delayMs);
  }
}

function formatDuration(seconds: number): string {
  if (seconds >= 7200) return `${Math.round(seconds / 3600)} h`;
  if (seconds >= 120) return `${Math.round(seconds / 60)} min`;
  return `${seconds} s`;
}
