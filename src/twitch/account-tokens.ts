/**
 * The narrow token port of the team decision "the broadcaster's and the bot's Twitch logins": code
 * that needs a Twitch user token (Helix for channel points and bits, EventSub) asks it for the
 * current token of the "bot" or the "broadcaster" account and reports a refusal to it (`refresh`).
 *
 * Contract: `tokenOf('bot')` is the chat token keeper (token.ts ChatToken: TWITCH_TOKEN, refreshed
 * with TWITCH_REFRESH_TOKEN); `tokenOf('broadcaster')` is a `UserToken` over
 * TWITCH_BROADCASTER_TOKEN (refreshed with TWITCH_BROADCASTER_REFRESH_TOKEN, TWITCH_CLIENT_ID and
 * TWITCH_CLIENT_SECRET), or undefined when none is configured. `UserToken.identify()` asks Twitch
 * (`GET /validate`) whose token it is and with which scopes, once (again after a refresh); an
 * invalid token is TwitchTokenError naming the variable. New tokens go to the log redactor before
 * use. Until the setup page's saved logins (issue 44) exist, the env vars are the only source;
 * that store plugs in here, behind the same port. Tokens live in memory only.
 */
import type { Logger } from '../logging/index.js';
import { TwitchTokenError, type TokenInfo, type TwitchAuthClient } from './auth.js';
import type { HelixTokenSource } from './helix.js';

export type TwitchAccount = 'bot' | 'broadcaster';

/** A token the port hands out: the Helix token source, the variable it comes from, who it is. */
export interface AccountToken extends HelixTokenSource {
  /** The variable (or saved login) it comes from, for messages: "TWITCH_BROADCASTER_TOKEN". */
  readonly name: string;
  /** Who the token belongs to and its scopes (`GET /validate`); throws TwitchTokenError when Twitch refuses it. */
  identify(): Promise<TokenInfo>;
}

export interface TwitchTokenPort {
  /** The current token of that account, or undefined when none is configured. */
  tokenOf(account: TwitchAccount): AccountToken | undefined;
}

interface UserTokenOptions {
  auth: TwitchAuthClient;
  /** The variable holding it (messages name it). */
  name: string;
  token: string;
  /** Refresh: the refresh token with the application's client id and secret (all three, or none). */
  refresh?: { refreshToken: string; clientId: string; clientSecret: string; name: string };
  logger: Logger;
  registerSecret?: (value: string) => void;
}

/** A user token other than the chat token: validated on demand, refreshed when refused. */
class UserToken implements AccountToken {
  readonly name: string;
  private token: string;
  private creds: UserTokenOptions['refresh'];
  private info: Promise<TokenInfo> | undefined;
  private inflight: Promise<void> | undefined;
  private readonly log: Logger;
  private readonly registerSecret: (value: string) => void;

  constructor(private readonly o: UserTokenOptions) {
    this.name = o.name;
    this.token = o.token.replace(/^oauth:/i, '');
    this.creds = o.refresh;
    this.log = o.logger.child({ module: 'twitch.token', account: o.name });
    this.registerSecret = o.registerSecret ?? (() => undefined);
    this.registerSecret(this.token);
    if (this.creds) this.registerSecret(this.creds.refreshToken);
  }

  current(): string {
    return this.token;
  }

  canRefresh(): boolean {
    return this.creds !== undefined;
  }

  identify(): Promise<TokenInfo> {
    this.info ??= this.validate();
    this.info.catch(() => (this.info = undefined));
    return this.info;
  }

  private async validate(): Promise<TokenInfo> {
    let v = await this.o.auth.validate(this.token);
    if (!v.valid && this.creds) {
      await this.refresh('invalid');
      v = await this.o.auth.validate(this.token);
    }
    if (!v.valid)
      throw new TwitchTokenError(
        'TWITCH_TOKEN_INVALID',
        `${this.name} is expired or invalid (Twitch says: ${v.reason}). Log the broadcaster in again on the setup page, or put a new token in ${this.name}.`,
      );
    return { clientId: v.clientId, login: v.login, userId: v.userId, scopes: [...v.scopes], expiresIn: v.expiresIn };
  }

  refresh(reason: string): Promise<void> {
    const creds = this.creds;
    if (!creds)
      return Promise.reject(
        new TwitchTokenError(
          'TWITCH_TOKEN_INVALID',
          `Twitch refused ${this.name} and no refresh is configured: put a new token in ${this.name}, or set its refresh token.`,
        ),
      );
    this.inflight ??= (async () => {
      const t = await this.o.auth.refresh(creds);
      this.registerSecret(t.accessToken);
      this.registerSecret(t.refreshToken);
      this.token = t.accessToken;
      this.creds = { ...creds, refreshToken: t.refreshToken };
      this.info = undefined;
      this.log.info({ reason }, `${this.name} refreshed (${reason})`);
    })().finally(() => (this.inflight = undefined));
    return this.inflight;
  }
}

/** The chat token (token.ts) as an AccountToken: what its start-up check learnt, or a validate now. */
export function chatAccountToken(
  chat: HelixTokenSource & { validated(): TokenInfo | undefined },
  auth: TwitchAuthClient,
): AccountToken {
  return {
    name: 'TWITCH_TOKEN',
    current: () => chat.current(),
    canRefresh: () => chat.canRefresh(),
    refresh: (reason) => chat.refresh(reason),
    async identify() {
      const known = chat.validated();
      if (known) return known;
      const v = await auth.validate(chat.current());
      if (!v.valid)
        throw new TwitchTokenError(
          'TWITCH_TOKEN_INVALID',
          `TWITCH_TOKEN is expired or invalid (Twitch says: ${v.reason}).`,
        );
      return { clientId: v.clientId, login: v.login, userId: v.userId, scopes: [...v.scopes], expiresIn: v.expiresIn };
    },
  };
}

/**
 * A login the setup page saved (twitch/logins.ts keeps and renews it, saving each renewal before
 * use) as an AccountToken: what its start-up check learnt, or a validate now.
 */
export function savedAccountToken(
  keeper: HelixTokenSource & { validated(): TokenInfo | undefined },
  auth: TwitchAuthClient,
  name: string,
): AccountToken {
  return { ...chatAccountToken(keeper, auth), name };
}

/** The port over the env vars, or the setup page's saved broadcaster login (see the module header). */
export function envTokenPort(o: {
  bot: AccountToken;
  broadcaster?: { token: string; refreshToken?: string; clientId?: string; clientSecret?: string };
  /** The broadcaster's login saved by the setup page (used when `broadcaster` is not set). */
  savedBroadcaster?: AccountToken;
  auth: TwitchAuthClient;
  logger: Logger;
  registerSecret?: (value: string) => void;
}): TwitchTokenPort {
  const b = o.broadcaster;
  if (b?.refreshToken && !(b.clientId && b.clientSecret))
    o.logger.warn(
      'TWITCH_BROADCASTER_REFRESH_TOKEN needs TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET to refresh TWITCH_BROADCASTER_TOKEN; it is not refreshed',
    );
  const broadcaster = b
    ? new UserToken({
        auth: o.auth,
        name: 'TWITCH_BROADCASTER_TOKEN',
        token: b.token,
        ...(b.refreshToken && b.clientId && b.clientSecret
          ? {
              refresh: {
                refreshToken: b.refreshToken,
                clientId: b.clientId,
                clientSecret: b.clientSecret,
                name: 'TWITCH_BROADCASTER_REFRESH_TOKEN',
              },
            }
          : {}),
        logger: o.logger,
        ...(o.registerSecret ? { registerSecret: o.registerSecret } : {}),
      })
    : undefined;
  return { tokenOf: (account) => (account === 'bot' ? o.bot : (broadcaster ?? o.savedBroadcaster)) };
}
