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
import { TwitchChat } from '../twitch/index.js';
import { LoginStore } from '../twitch/login-store.js';
import { hasBotLogin, startTwitchAuth, type TwitchAuthStartup } from '../twitch/startup.js';
import type { BotContext } from './context.js';

/** The adapters every later step uses: the history, the Fourthwall client and shop, Twitch auth and chat. */
export interface Adapters {
  repo: FileDrawRepository;
  client: FourthwallClient;
  shop: FourthwallShop;
  twitchAuth: TwitchAuthStartup;
  chat: TwitchChat;
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
  const twitchAuth = startTwitchAuth(config, logger, clock, { ...(store ? { store } : {}), onRevoked });
  stops.close('twitch-auth', () => twitchAuth.close());
  const outboxMax = config.twitch.outboxMax;
  const chat = new TwitchChat({
    url: config.twitch.ircUrl,
    channel: config.twitch.channel!,
    username: twitchAuth.username,
    token: twitchAuth.tokens.current(),
    tokens: twitchAuth.tokens,
    logger,
    clock,
    outbox: { ...(outboxMax !== undefined ? { maxQueued: outboxMax } : {}), ...options.outbox },
  });
  stops.close('chat', () => chat.disconnect());
  return { repo, client, shop, twitchAuth, chat };
}

function requireChatCredentials(config: Config, store?: LoginStore): void {
  if (!config.twitch.channel || !hasBotLogin(config, store) || (config.twitch.token && !config.twitch.username))
    throw new Error(
      'startBot needs TWITCH_CHANNEL and TWITCH_USERNAME with TWITCH_TOKEN (or a bot login saved by the setup page)',
    );
}
