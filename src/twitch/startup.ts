/**
 * The bot's Twitch start-up from its Config, in one place so bot.ts only wires it: the auth
 * client (TWITCH_AUTH_URL, or the default derived from TWITCH_IRC_URL), the logins behind the
 * token port (logins.ts: the environment's TWITCH_TOKEN, else the login the setup page saved;
 * renewed automatically; new tokens registered with the log redactor) and the retried start-up
 * connection.
 */
import type { Config } from '../config/index.js';
import { defaultTwitchAuthUrl } from '../config/index.js';
import { registerSecret, type Logger } from '../logging/index.js';
import type { Clock } from '../shared/clock.js';
import { TwitchAuthClient } from './auth.js';
import { connectChat, type ConnectChatOptions } from './connector.js';
import type { ChatToken } from './token.js';
import type { ChatConnection } from './chat-connection.js';
import { TwitchLogins, type TwitchRole } from './logins.js';
import type { LoginStore } from './login-store.js';

export type ChatConnectOptions = Pick<ConnectChatOptions, 'backoff' | 'signal' | 'onStatus'>;

export interface TwitchAuthStartup {
  /** The bot's token keeper (chat, Helix, whispers). */
  tokens: ChatToken;
  /** Every login behind the token port ("bot", "broadcaster"). */
  logins: TwitchLogins;
  auth: TwitchAuthClient;
  /** The bot's account (TWITCH_USERNAME, or the saved login's). */
  username: string;
  /** The client id the bot's token was issued to (Helix's Client-Id), when known. */
  clientId: string | undefined;
  /** Validates the token and connects, retrying network failures (see connector.ts). */
  connect(chat: ChatConnection, options?: ChatConnectOptions): Promise<void>;
  close(): Promise<void>;
}

export interface TwitchStartupOptions {
  /** The setup page's saved logins (live mode). */
  store?: LoginStore;
  /** A login Twitch ended: one line naming the fix (shown on the dashboard and /healthz). */
  onRevoked?: (role: TwitchRole, line: string) => void;
  /** The scopes the chat transport needs of the bot's token (default IRC's chat:read chat:edit; app/chat-transport.ts). */
  botScopes?: readonly string[];
}

/** True when the config or the saved logins give the bot a Twitch login. */
export function hasBotLogin(config: Config, store: LoginStore | undefined): boolean {
  return Boolean(config.twitch.token) || store?.get('bot') !== undefined;
}

export function startTwitchAuth(
  config: Config,
  logger: Logger,
  clock: Clock,
  o: TwitchStartupOptions = {},
): TwitchAuthStartup {
  const t = config.twitch;
  const auth = new TwitchAuthClient({ authUrl: t.authUrl ?? defaultTwitchAuthUrl(t.ircUrl) });
  const logins = new TwitchLogins({
    auth,
    logger,
    clock,
    registerSecret: (value) => registerSecret(logger, value),
    ...(t.token
      ? {
          envBot: {
            username: t.username ?? '',
            token: t.token,
            ...(t.refreshToken && t.clientId && t.clientSecret
              ? { refresh: { refreshToken: t.refreshToken, clientId: t.clientId, clientSecret: t.clientSecret } }
              : {}),
          },
        }
      : {}),
    ...(o.store ? { store: o.store } : {}),
    confidential: {
      ...(t.clientId ? { clientId: t.clientId } : {}),
      ...(t.clientSecret ? { clientSecret: t.clientSecret } : {}),
    },
    ...(o.onRevoked ? { onRevoked: o.onRevoked } : {}),
    ...(o.botScopes ? { botScopes: o.botScopes } : {}),
  });
  const tokens = logins.keeper('bot');
  if (!tokens) throw new Error('startTwitchAuth needs TWITCH_TOKEN or a saved bot login');
  const saved = logins.source('bot')?.source === 'saved';
  return {
    tokens,
    logins,
    auth,
    username: saved ? logins.source('bot')!.login : (t.username ?? ''),
    clientId: saved ? logins.clientId('bot') : t.clientId,
    connect: (chat, options) => connectChat({ chat, tokens, logger, clock, ...options }),
    async close() {
      logins.stop();
      await auth.close();
    },
  };
}
