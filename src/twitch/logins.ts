/**
 * The bot's Twitch logins (COMMON decision "The broadcaster's and the bot's Twitch logins"): one
 * keeper per role, "bot" or "broadcaster", behind the token port code asks (account-tokens.ts
 * `TwitchTokenPort`: chat, Helix, whispers; EventSub, channel points and bits with the broadcaster's);
 * nothing reads a token from the config.
 *
 * Contract: each role has at most one keeper (token.ts ChatToken), built from, in this order (the
 * environment wins over the page): the environment (TWITCH_TOKEN with its refresh variables; for the
 * broadcaster, what the caller passes as `envBroadcaster`), else the login the setup page saved
 * (login-store.ts), renewed with its own client id (plus TWITCH_CLIENT_SECRET only when that is the
 * client it was issued to) and saved durably before use. `refused(role)` renews once (single-flight)
 * and resolves true when a new token is ready, false when the login is over; a login Twitch ended
 * (refresh refused: revoked, or unused too long) is said once through `onRevoked` (one line for the
 * log, the dashboard and /healthz) and never asked again. Holds no token outside the keepers.
 * Does not: run the device code flow (the setup page does, device-login.ts) or decide scopes.
 */
import type { Logger } from '../logging/index.js';
import type { Clock } from '../shared/clock.js';
import type { RefreshedTokens, TwitchAuthClient } from './auth.js';
import type { LoginStore, SavedLogin, TwitchRole } from './login-store.js';
import { CHAT_SCOPES } from './scopes.js';
import { ChatToken, type TokenWording } from './token.js';

export type { TwitchRole } from './login-store.js';

/** Where a role's login came from. */
export type LoginSource = 'env' | 'saved';

export interface TwitchLoginsOptions {
  auth: TwitchAuthClient;
  logger: Logger;
  clock: Clock;
  registerSecret: (value: string) => void;
  /** The bot from the environment (TWITCH_TOKEN...), when set: it wins over a saved login. */
  envBot?: {
    username: string;
    token: string;
    refresh?: { refreshToken: string; clientId: string; clientSecret: string };
  };
  /** The broadcaster from the environment (TWITCH_BROADCASTER_TOKEN...), when a caller reads one. */
  envBroadcaster?: {
    login: string;
    token: string;
    refresh?: { refreshToken: string; clientId: string; clientSecret: string };
  };
  /** The setup page's saved logins (absent: none). */
  store?: LoginStore;
  /** TWITCH_CLIENT_ID / TWITCH_CLIENT_SECRET: the secret is sent with a saved login issued to that client. */
  confidential?: { clientId?: string; clientSecret?: string };
  /** A login Twitch ended: one line naming the fix (the caller logs it once and shows it). */
  onRevoked?: (role: TwitchRole, line: string) => void;
  /** The scopes the bot's chat transport needs (default IRC's chat:read chat:edit). */
  botScopes?: readonly string[];
}

const ROLE_WORDS: Record<TwitchRole, string> = {
  bot: "the bot's Twitch login",
  broadcaster: "the broadcaster's Twitch login",
};

/** The fix for a saved login Twitch ended or refused. */
function savedLoginFix(role: TwitchRole): string {
  return `log in again with ${role === 'bot' ? 'the bot account' : "the broadcaster's account"} on the setup page (the dashboard's "Set up" link)`;
}

export class TwitchLogins {
  private readonly keepers = new Map<TwitchRole, { token: ChatToken; source: LoginSource; login: string }>();

  constructor(private readonly o: TwitchLoginsOptions) {
    if (o.envBot) {
      this.add(
        'bot',
        'env',
        o.envBot.username,
        new ChatToken({
          auth: o.auth,
          username: o.envBot.username,
          token: o.envBot.token,
          ...(o.envBot.refresh ? { refresh: o.envBot.refresh } : {}),
          ...(o.botScopes ? { requiredScopes: o.botScopes } : {}),
          ...this.common(),
        }),
      );
    } else this.fromStore('bot');
    if (o.envBroadcaster) {
      const b = o.envBroadcaster;
      const wording: TokenWording = {
        name: 'TWITCH_BROADCASTER_TOKEN',
        fix: 'put a new token of the broadcaster in TWITCH_BROADCASTER_TOKEN (or set TWITCH_BROADCASTER_REFRESH_TOKEN)',
      };
      this.add(
        'broadcaster',
        'env',
        b.login,
        new ChatToken({
          auth: o.auth,
          username: b.login,
          token: b.token,
          ...(b.refresh ? { refresh: b.refresh } : {}),
          requiredScopes: [],
          wording,
          ...this.common(),
        }),
      );
    } else this.fromStore('broadcaster');
  }

  /** The keeper of `role` (the chat client and the start-up check use the bot's directly). */
  keeper(role: TwitchRole): ChatToken | undefined {
    return this.keepers.get(role)?.token;
  }

  /** Where `role`'s login came from, and whose it is. */
  source(role: TwitchRole): { source: LoginSource; login: string } | undefined {
    const k = this.keepers.get(role);
    return k ? { source: k.source, login: k.login } : undefined;
  }

  has(role: TwitchRole): boolean {
    const k = this.keepers.get(role);
    return k !== undefined && !k.token.revoked();
  }

  current(role: TwitchRole): string | undefined {
    return this.has(role) ? this.keepers.get(role)!.token.current() : undefined;
  }

  clientId(role: TwitchRole): string | undefined {
    return this.keepers.get(role)?.token.clientId();
  }

  async refused(role: TwitchRole, reason: string): Promise<boolean> {
    const k = this.keepers.get(role);
    if (!k || !k.token.canRefresh()) return false;
    try {
      await k.token.refresh(reason);
      return true;
    } catch {
      return false;
    }
  }

  stop(): void {
    for (const k of this.keepers.values()) k.token.stop();
  }

  private common() {
    return { logger: this.o.logger, clock: this.o.clock, registerSecret: this.o.registerSecret };
  }

  private add(role: TwitchRole, source: LoginSource, login: string, token: ChatToken): void {
    this.keepers.set(role, { token, source, login });
    token.on('revoked', (err: Error) => {
      const line =
        source === 'saved'
          ? `Twitch ended ${ROLE_WORDS[role]} (${login}): ${savedLoginFix(role)}. (${err.message.split('. ')[0]})`
          : err.message;
      this.o.onRevoked?.(role, line);
    });
  }

  private fromStore(role: TwitchRole): void {
    const saved = this.o.store?.get(role);
    if (!saved) return;
    const store = this.o.store!;
    const conf = this.o.confidential;
    const secret = conf?.clientSecret && conf.clientId === saved.clientId ? conf.clientSecret : undefined;
    let current: SavedLogin = saved;
    const persist = async (t: RefreshedTokens): Promise<void> => {
      current = {
        ...current,
        accessToken: t.accessToken,
        refreshToken: t.refreshToken,
        ...(t.scopes ? { scopes: t.scopes } : {}),
        expiresAt: t.expiresIn ? this.o.clock.now() + t.expiresIn * 1000 : 0,
        savedAt: new Date(this.o.clock.now()).toISOString(),
      };
      await store.save(role, current);
    };
    const token = new ChatToken({
      auth: this.o.auth,
      username: saved.login,
      token: saved.accessToken,
      refresh: {
        refreshToken: saved.refreshToken,
        clientId: saved.clientId,
        ...(secret ? { clientSecret: secret } : {}),
      },
      persist,
      expiresAt: saved.expiresAt,
      requiredScopes: role === 'bot' ? (this.o.botScopes ?? CHAT_SCOPES.irc) : [],
      wording: { name: ROLE_WORDS[role], fix: savedLoginFix(role) },
      ...this.common(),
    });
    this.add(role, 'saved', saved.login, token);
  }
}
