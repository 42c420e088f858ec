/**
 * The bot's Twitch start-up from its Config, in one place so bot.ts only wires it: the auth
 * client (TWITCH_AUTH_URL, or the default derived from TWITCH_IRC_URL), the token keeper
 * (refresh when TWITCH_REFRESH_TOKEN + TWITCH_CLIENT_ID + TWITCH_CLIENT_SECRET are set; new
 * tokens registered with the log redactor) and the retried start-up connection.
 */
import type { Config } from '../config/index.js';
import { defaultTwitchAuthUrl } from '../config/index.js';
import { registerSecret, type Logger } from '../logging/index.js';
import type { Clock } from '../shared/clock.js';
import { TwitchAuthClient } from './auth.js';
import { connectChat, type ConnectChatOptions } from './connector.js';
import { ChatToken } from './token.js';
import type { ChatConnection } from './chat-connection.js';

export type ChatConnectOptions = Pick<ConnectChatOptions, 'backoff' | 'signal' | 'onStatus'>;

export interface TwitchAuthStartup {
  tokens: ChatToken;
  auth: TwitchAuthClient;
  /** Validates the token and connects, retrying network failures (see connector.ts). */
  connect(chat: ChatConnection, options?: ChatConnectOptions): Promise<void>;
  close(): Promise<void>;
}

/** `requiredScopes`: the scopes the chat transport needs of TWITCH_TOKEN (default IRC's chat:read chat:edit). */
export function startTwitchAuth(config: Config, logger: Logger, clock: Clock, requiredScopes?: readonly string[]): TwitchAuthStartup {
  const t = config.twitch;
  const auth = new TwitchAuthClient({ authUrl: t.authUrl ?? defaultTwitchAuthUrl(t.ircUrl) });
  const tokens = new ChatToken({
    auth,
    username: t.username ?? '',
    token: t.token ?? '',
    ...(t.refreshToken && t.clientId && t.clientSecret
      ? { refresh: { refreshToken: t.refreshToken, clientId: t.clientId, clientSecret: t.clientSecret } }
      : {}),
    logger,
    clock,
    registerSecret: (value) => registerSecret(logger, value),
    ...(requiredScopes ? { requiredScopes } : {}),
  });
  return {
    tokens,
    auth,
    connect: (chat, options) => connectChat({ chat, tokens, logger, clock, ...options }),
    async close() {
      tokens.stop();
      await auth.close();
    },
  };
}
