/**
 * A whole giftdrop stack on this machine: the local Fourthwall sandbox, the local Twitch chat
 * server (with the local Helix API mounted on its port under /helix), and the real bot connected to both through the same code paths as live mode (real
 * sockets, signed webhooks registered through the API). Sandbox mode runs on it, and so do the
 * end-to-end tests. Its steps are exported for a stack whose chat server runs on another thread
 * (bench/e2e-2-chat.bench.ts): startLocalChat (chat server + Helix), configForLocal (the bot's
 * Config for a chat endpoint), registerBotWebhook.
 */
import type { Config } from '../config/index.js';
import type { Logger } from '../logging/index.js';
import { silentLogger } from '../logging/index.js';
import type { OperatorPort } from '../giveaway/ports.js';
import type { Clock } from '../shared/clock.js';
import type { RandomSource } from '../shared/random.js';
import {
  startFourthwallSandbox,
  type FourthwallSandbox,
  type FourthwallSandboxOptions,
} from '../sandbox/fourthwall/index.js';
import { startChatServer, type ChatServer, type ChatServerOptions } from '../sandbox/chat/index.js';
import { startBeaconSandbox, type BeaconSandbox, type BeaconSandboxOptions } from '../sandbox/beacon/index.js';
import { SandboxHelix, type SandboxHelixOptions } from '../sandbox/helix/index.js';
import { SandboxAccounts } from '../sandbox/helix/accounts.js';
import { startLocalTwitchEvents, type LocalTwitchEvents } from '../sandbox/eventsub/local.js';
import { chatMessagesRoute } from '../sandbox/helix/chat-messages.js';
import { bridgeChatToEventSub } from '../sandbox/chat/eventsub-events.js';
import { systemClock } from '../shared/clock.js';
import type { OutboxLimits } from '../twitch/index.js';
import { BOT_WEBHOOK_TYPES, startBot, type Bot, type BotOptions } from '../app/bot.js';

export { BOT_WEBHOOK_TYPES };

export interface LocalStackOptions {
  /** The user's config: dataDir, http, settings and log level are kept; endpoints are replaced. */
  config: Config;
  logger: Logger;
  operator?: OperatorPort;
  clock?: Clock;
  random?: RandomSource;
  fourthwall?: FourthwallSandboxOptions;
  chat?: ChatServerOptions;
  outbox?: Partial<OutboxLimits>;
  /**
   * Run the local sandbox beacon (own BLS key, on `clock`) and point the bot at it. Sandbox mode
   * turns it on; default off, so stacks built by tests draw from the seed alone unless they ask.
   */
  beacon?: boolean | BeaconSandboxOptions;
  /**
   * A drand-compatible beacon running elsewhere (instead of `beacon`): the bot draws with it as
   * with the local one (a benchmark runs its sandbox beacon on a thread of its own, so the
   * stand-in's signing is not on the bot's event loop).
   */
  beaconUrl?: string;
  /** The local Helix API (rate limit); `prepare` runs before the bot starts (e.g. the broadcaster is live). */
  helix?: Pick<SandboxHelixOptions, 'ratePerMinute' | 'everyoneFollows' | 'latencyMs'> & {
    prepare?: (helix: SandboxHelix, chat: ChatServer) => void;
  };
  /** Quiet the sandboxes' own logs (default true). */
  quietSandboxes?: boolean;
  /** Event intake tuning and storage fault injection (tests). */
  bot?: Pick<
    BotOptions,
    'events' | 'wrapRepository' | 'twitchApi' | 'fileSystem' | 'twitchEvents' | 'localRoutes' | 'publicRoutes'
  >;
}

export interface LocalStack {
  fourthwall: FourthwallSandbox;
  chatServer: ChatServer;
  /** The sandbox beacon, when `beacon` was asked for. */
  beacon?: BeaconSandbox;
  /** The local Helix API on the chat server's port (users, follows, streams, channel points, EventSub subscriptions). */
  helix: SandboxHelix;
  /** The sandbox EventSub server, channel points and the broadcaster's login. */
  twitch: LocalTwitchEvents;
  bot: Bot;
  config: Config;
  /** Stops the bot (cleanly), then both servers. */
  close(): Promise<void>;
}

/** What the bot needs to reach a chat server: its addresses, channel and the bot's credentials. */
export type ChatEndpoint = Pick<
  ChatServer,
  'url' | 'authUrl' | 'channel' | 'channelId' | 'botLogin' | 'token' | 'refreshToken' | 'clientId' | 'clientSecret'
> & {
  /** The sandbox EventSub server and the broadcaster's token, when the stack runs them. */
  eventSubUrl?: string;
  broadcasterToken?: string;
};

/** The Config that points the bot at a Fourthwall sandbox and a local chat server (this thread's or another's). */
export function configForLocal(base: Config, fw: FourthwallSandbox, chat: ChatEndpoint): Config {
  return {
    ...base,
    mode: 'sandbox',
    twitch: {
      channel: chat.channel,
      username: chat.botLogin,
      token: `oauth:${chat.token}`,
      ircUrl: chat.url,
      authUrl: chat.authUrl,
      apiUrl: chat.authUrl.replace(/\/oauth2$/, '/helix'),
      refreshToken: chat.refreshToken,
      clientId: chat.clientId,
      clientSecret: chat.clientSecret,
      ...(chat.eventSubUrl ? { eventSubUrl: chat.eventSubUrl } : {}),
      ...(chat.broadcasterToken ? { broadcasterToken: chat.broadcasterToken } : {}),
    },
    fourthwall: {
      ...base.fourthwall,
      apiUrl: fw.apiUrl,
      tokenUrl: fw.tokenUrl,
      auth: { kind: 'basic', username: fw.username, password: fw.password },
      webhookSecret: fw.webhookSecret,
      appHmacKey: undefined,
      shopUrl: fw.shopUrl,
    },
  };
}

/**
 * The local chat server with the local Helix API mounted on its port (the channel owner known to
 * it); `helix.prepare` runs before this returns.
 */
export async function startLocalChat(
  options: Pick<LocalStackOptions, 'chat' | 'helix'> & { logger: Logger },
): Promise<{ chatServer: ChatServer; helix: SandboxHelix; twitch: LocalTwitchEvents }> {
  const chatServer = await startChatServer({
    logger: options.logger,
    // IRC's chat scopes and EventSub's (chat.transport "eventsub"; user:bot for the Chat Bot badge)
    scopes: ['chat:read', 'chat:edit', 'moderator:read:followers', 'user:read:chat', 'user:write:chat', 'user:bot'],
    ...options.chat,
  });
  const { prepare, ...helixOptions } = options.helix ?? {};
  const clock = options.chat?.clock ?? systemClock;
  const accounts = new SandboxAccounts({
    clock,
    clientId: () => chatServer.clientId,
    clientSecret: () => chatServer.clientSecret,
  });
  const helix = new SandboxHelix({ auth: chatServer.tokens, clock, accounts, ...helixOptions });
  helix.setUser(chatServer.channelId, chatServer.channel);
  // Shared Chat partner channels are Twitch users the API knows (their logins, for the counts).
  chatServer.on('shared-chat', (e) => {
    for (const p of e.participants) helix.setUser(p.id, p.login);
  });
  chatServer.mount((req, res) => helix.handle(req, res));
  let twitch: LocalTwitchEvents;
  try {
    twitch = await startLocalTwitchEvents({ chat: chatServer, helix, accounts, clock });
    // Chat over EventSub: Send Chat Message on the Helix sandbox, and the chat's lines (and Shared
    // Chat sessions) published as EventSub notifications.
    helix.route(chatMessagesRoute(chatServer, () => chatServer.tokens.scopes));
    const eventSub = twitch.eventSub;
    bridgeChatToEventSub(chatServer, (type, event) => eventSub.publish(type, event));
  } catch (err) {
    await chatServer.close();
    throw err;
  }
  prepare?.(helix, chatServer);
  return { chatServer, helix, twitch };
}

/** Registers the bot's webhook at its Fourthwall (the sandbox) unless it is there; stops the bot when that fails. */
export async function registerBotWebhook(bot: Bot): Promise<void> {
  try {
    const existing = await bot.client.listWebhooks();
    if (!existing.results.some((w) => w.url === bot.webhookUrl))
      await bot.client.createWebhook({ url: bot.webhookUrl, allowedTypes: [...bot.webhookTypes] });
  } catch (err) {
    await bot.stop('webhook registration failed');
    throw err;
  }
}

/** A chat server's endpoint fields (its getters read now). */
function pickEndpoint(c: ChatServer): ChatEndpoint {
  return {
    url: c.url,
    authUrl: c.authUrl,
    channel: c.channel,
    channelId: c.channelId,
    botLogin: c.botLogin,
    token: c.token,
    refreshToken: c.refreshToken,
    clientId: c.clientId,
    clientSecret: c.clientSecret,
  };
}

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const quiet = options.quietSandboxes ?? true;
  const sandboxLogger = quiet ? silentLogger() : options.logger;
  const fourthwall = await startFourthwallSandbox({ logger: sandboxLogger, ...options.fourthwall });
  let chatServer: ChatServer | undefined;
  let beacon: BeaconSandbox | undefined;
  let twitch: LocalTwitchEvents | undefined;
  try {
    const local = await startLocalChat({ logger: sandboxLogger, chat: options.chat, helix: options.helix });
    chatServer = local.chatServer;
    twitch = local.twitch;
    const helix = local.helix;
    if (options.beacon && options.config.settings.fairness.beacon !== 'off') {
      beacon = await startBeaconSandbox({ clock: options.clock, ...(options.beacon === true ? {} : options.beacon) });
    }
    const endpoint: ChatEndpoint = {
      ...pickEndpoint(chatServer),
      eventSubUrl: twitch.eventSub.url,
      broadcasterToken: twitch.broadcaster.token,
    };
    const beaconUrl =
      options.config.settings.fairness.beacon !== 'off' ? (options.beaconUrl ?? beacon?.url) : undefined;
    const config: Config = { ...configForLocal(options.config, fourthwall, endpoint), beaconUrl };
    const bot = await startBot({
      config,
      logger: options.logger,
      operator: options.operator,
      clock: options.clock,
      random: options.random,
      outbox: options.outbox,
      ...options.bot,
    });
    await registerBotWebhook(bot);
    const chat = chatServer;
    const localBeacon = beacon;
    const localTwitch = twitch;
    return {
      fourthwall,
      chatServer: chat,
      ...(localBeacon ? { beacon: localBeacon } : {}),
      helix,
      twitch: localTwitch,
      bot,
      config,
      async close() {
        await bot.stop('local stack closed');
        await localTwitch.close();
        await chat.close();
        await localBeacon?.close();
        await fourthwall.close();
      },
    };
  } catch (err) {
    await twitch?.close().catch(() => undefined);
    await chatServer?.close().catch(() => undefined);
    await beacon?.close().catch(() => undefined);
    await fourthwall.close().catch(() => undefined);
    throw err;
  }
}
