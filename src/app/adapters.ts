/**
 * The first step of a start (bot.ts): the adapters every later step uses, the history, the
 * Fourthwall client and shop, Twitch auth (with the saved logins in live mode) and chat, each
 * registering its stop in the one stop list as it is built.
 */
import type { Config } from '../config/index.js';
import { FourthwallClient } from '../fourthwall/index.js';
import { clientAuth } from '../fourthwall/auth.js';
import { FourthwallShop } from '../shop/shop-port.js';
import { FileDrawRepository } from '../storage/index.js';
import type { ChatConnection } from '../twitch/chat-connection.js';
import { LoginStore } from '../twitch/login-store.js';
import { hasBotLogin, startTwitchAuth, type TwitchAuthStartup } from '../twitch/startup.js';
import { chatScopes, openChat } from './chat-transport.js';
import type { BotContext } from './context.js';

/** The adapters every later step uses: the history, the Fourthwall client and shop, Twitch auth and chat. */
export interface Adapters {
  repo: FileDrawRepository;
  client: FourthwallClient;
  shop: FourthwallShop;
  twitchAuth: TwitchAuthStartup;
  chat: ChatConnection;
}

/**
 * The login store (live mode: the bot's and the broadcaster's saved Twitch logins), the chat
 * credentials checked, then the adapters, each stop registered as it is built.
 */
export async function openAdapters(c: BotContext): Promise<Adapters> {
  const { config, logger, clock, options, stops } = c;
  const store = options.loginStore ?? (config.mode === 'live' ? await LoginStore.open(config.dataDir) : undefined);
  requireChatCredentials(config, store);
  const repo = await FileDrawRepository.open(config.dataDir, {
    clock,
    logger,
    mode: config.mode,
    ...(options.fileSystem ? { fileSystem: options.fileSystem } : {}),
  });
  stops.save('history', 'the draw history', () => repo.close());
  const client = new FourthwallClient({
    apiUrl: config.fourthwall.apiUrl,
    auth: clientAuth(config),
    rateLimit: config.fourthwall.rateLimit,
    logger,
    clock,
    ...(options.signal ? { signal: options.signal } : {}),
    ...options.client,
  });
  stops.close('fourthwall', () => client.close());
  const shop = new FourthwallShop(client, { logger, shopUrl: config.fourthwall.shopUrl });
  // A login Twitch ended is one line (the token keeper logged it) kept for /healthz and the dashboard.
  const onRevoked = (_role: unknown, line: string) => c.problems.add(line);
  const botScopes = chatScopes(config);
  const twitchAuth = startTwitchAuth(config, logger, clock, { ...(store ? { store } : {}), onRevoked, botScopes });
  stops.close('twitch-auth', () => twitchAuth.close());
  const chat = openChat(c, twitchAuth);
  return { repo, client, shop, twitchAuth, chat };
}

function requireChatCredentials(config: Config, store?: LoginStore): void {
  if (!config.twitch.channel || !hasBotLogin(config, store) || (config.twitch.token && !config.twitch.username))
    throw new Error(
      'startBot needs TWITCH_CHANNEL and TWITCH_USERNAME with TWITCH_TOKEN (or a bot login saved by the setup page)',
    );
}
