/**
 * ChatToken: the bot's Twitch user token (TWITCH_TOKEN) over the bot's life: checked at start,
 * refreshed before it expires and after Twitch refuses it, when TWITCH_REFRESH_TOKEN,
 * TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET are set.
 *
 * Contract:
 * - `current()` is the token to use on the next chat login (the chat client asks for it on every
 *   connect, so a refreshed token is used from the next reconnect on);
 * - `check()` validates the token (`GET /validate`): expired/invalid (after one refresh when
 *   possible), another account than TWITCH_USERNAME, or missing a required scope (chat:read and
 *   chat:edit for IRC; `requiredScopes` for chat over EventSub) each throw
 *   TwitchTokenError with one plain sentence naming TWITCH_TOKEN; the auth server being
 *   unreachable throws TwitchAuthUnavailableError (the caller retries);
 * - with refresh credentials, a refresh is scheduled at the later of "5 minutes before expiry"
 *   and "half the lifetime"; `refresh()` is single-flight; every new access and refresh token is
 *   handed to `registerSecret` (the log redactor) before it is used;
 * - a failed scheduled refresh is logged and retried (network) or left to the next refusal.
 * Tokens live in this object only; nothing here writes them anywhere.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from '../logging/index.js';
import { systemClock, type Clock, type TimerHandle } from '../shared/clock.js';
import { TwitchAuthUnavailableError, TwitchTokenError, type TwitchAuthClient, type TokenInfo } from './auth.js';

const IRC_CHAT_SCOPES = ['chat:read', 'chat:edit'] as const;

export interface RefreshCredentials {
  refreshToken: string;
  clientId: string;
  clientSecret: string;
}

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
  /** The scopes the chat transport needs (default chat:read chat:edit, IRC's). */
  requiredScopes?: readonly string[];
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** Events: 'refreshed' (info: { reason: string; expiresIn?: number }). */
export class ChatToken extends EventEmitter {
  private token: string;
  private credentials: RefreshCredentials | undefined;
  private readonly auth: TwitchAuthClient;
  private readonly username: string;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly registerSecret: (value: string) => void;
  private readonly retryMs: number;
  private readonly required: readonly string[];
  private timer: TimerHandle | undefined;
  private inflight: Promise<void> | undefined;
  private stopped = false;
  private refreshes = 0;

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
    this.required = options.requiredScopes ?? IRC_CHAT_SCOPES;
    this.registerSecret(this.token);
    if (this.credentials) this.registerSecret(this.credentials.refreshToken);
  }

  /** The access token for the next login (without `oauth:`). */
  current(): string {
    return this.token;
  }

  canRefresh(): boolean {
    return this.credentials !== undefined;
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
    let v = await this.auth.validate(this.token);
    if (!v.valid && this.credentials) {
      this.log.warn('TWITCH_TOKEN is expired or invalid; refreshing it with TWITCH_REFRESH_TOKEN');
      await this.refresh('invalid at start');
      v = await this.auth.validate(this.token);
    }
    if (!v.valid) {
      throw new TwitchTokenError(
        'TWITCH_TOKEN_INVALID',
        `TWITCH_TOKEN is expired or invalid (Twitch says: ${v.reason}). Generate a new user token for ${this.username} ` +
          `with ${this.required.join(' ')} and put it in TWITCH_TOKEN (or set TWITCH_REFRESH_TOKEN, TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET to refresh it).`,
      );
    }
    if (v.login !== this.username) {
      throw new TwitchTokenError(
        'TWITCH_TOKEN_LOGIN',
        `TWITCH_TOKEN belongs to the Twitch account "${v.login}", not to TWITCH_USERNAME "${this.username}". ` +
          `Use a token of ${this.username}, or set TWITCH_USERNAME=${v.login}.`,
      );
    }
    const missing = this.required.filter((s) => !v.scopes.includes(s));
    if (missing.length > 0) {
      throw new TwitchTokenError(
        'TWITCH_TOKEN_SCOPES',
        `TWITCH_TOKEN lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(' ')} (it has: ${v.scopes.join(' ') || 'none'}). ` +
          `Generate a new token with ${this.required.join(' ')}.`,
      );
    }
    this.log.info(
      { login: v.login, scopes: v.scopes, expiresIn: v.expiresIn, refresh: this.canRefresh() },
      `TWITCH_TOKEN is valid for ${v.login}${v.expiresIn > 0 ? `, expires in ${formatDuration(v.expiresIn)}` : ''}`,
    );
    if (v.expiresIn > 0 && !this.canRefresh()) {
      this.log.warn(
        `TWITCH_TOKEN expires in ${formatDuration(v.expiresIn)}; without TWITCH_REFRESH_TOKEN, TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET ` +
          'the bot cannot log in to chat again after that (a reconnect would fail)',
      );
    }
    this.schedule(v.expiresIn);
    this.info = { clientId: v.clientId, login: v.login, userId: v.userId, scopes: [...v.scopes], expiresIn: v.expiresIn };
    return v;
  }

  /**
   * Gets a new token now (single-flight). Throws TwitchTokenError when refresh is not configured
   * or Twitch refuses it, TwitchAuthUnavailableError when Twitch cannot be reached.
   */
  refresh(reason: string): Promise<void> {
    if (!this.credentials) {
      return Promise.reject(
        new TwitchTokenError(
          'TWITCH_TOKEN_INVALID',
          'Twitch refused TWITCH_TOKEN (expired or revoked) and no refresh is configured: put a new token in TWITCH_TOKEN, ' +
            'or set TWITCH_REFRESH_TOKEN, TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET so the bot refreshes it.',
        ),
      );
    }
    this.inflight ??= this.doRefresh(this.credentials, reason).finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private async doRefresh(credentials: RefreshCredentials, reason: string): Promise<void> {
    const t = await this.auth.refresh(credentials);
    this.registerSecret(t.accessToken);
    this.registerSecret(t.refreshToken);
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
    if (this.stopped || !this.credentials || expiresInSeconds <= 0) return;
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
          this.log.warn({ code: err.code }, `could not refresh TWITCH_TOKEN before expiry (${err.message}); trying again in ${Math.round(this.retryMs / 1000)} s`);
          this.refreshIn(this.retryMs);
        } else {
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
