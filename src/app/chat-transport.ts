/**
 * The bot's Twitch chat connection for the `chat.transport` setting, wired for one bot: IRC through
 * tmi.js (TwitchChat, the default) or EventSub and Send Chat Message (EventSubChat). The engine and
 * the app see one ChatConnection either way.
 *
 * Contract: `openChat` builds the connection (nothing connects yet); the EventSub transport refuses
 * to start when the bot's token has no known application (an env TWITCH_TOKEN without
 * TWITCH_CLIENT_ID; a login the setup page saved carries its own): one line naming the fix, the
 * start-up fails. `linkChat` gives
 * the EventSub transport what it reaches Twitch through once the composition root built it: the
 * bot's one EventSub client, the bot's Helix client (the channel lookup, Send Chat Message), with
 * TWITCH_CLIENT_SECRET and `chat.botBadge` an app access token's Helix client (the Chat Bot badge),
 * and the channel directory (Shared Chat's participants); the IRC transport needs none of it.
 * The tokens the transport needs (scopes) are checked by the start-up connection (twitch/token.ts).
 */
import type { Config } from '../config/index.js';
import { GiftdropError } from '../shared/errors.js';
import { registerSecret } from '../logging/index.js';
import { AppToken } from '../twitch/app-token.js';
import type { ChannelLogins } from '../twitch/channel-directory.js';
import type { ChatConnection } from '../twitch/chat-connection.js';
import { HelixChatEndpoint } from '../twitch/chat-messages-endpoint.js';
import { EventSubChat } from '../twitch/eventsub-chat.js';
import type { EventSubClient } from '../twitch/eventsub/client.js';
import { HelixClient } from '../twitch/helix.js';
import { chatScopesOf } from '../twitch/scopes.js';
import { TwitchChat } from '../twitch/index.js';
import type { TwitchAuthStartup } from '../twitch/startup.js';
import type { BotContext } from './context.js';

/** The scopes the bot's token needs for the transport in force (checked at start; their home is twitch/scopes.ts). */
export function chatScopes(config: Config): readonly string[] {
  return chatScopesOf(config.settings.chat.transport);
}

/** The chat connection of the configured transport (registered in the stop list). */
export function openChat(c: BotContext, twitchAuth: TwitchAuthStartup): ChatConnection {
  const { config, logger, clock, options, stops } = c;
  const t = config.twitch;
  const outbox = { ...(t.outboxMax !== undefined ? { maxQueued: t.outboxMax } : {}), ...options.outbox };
  if (config.settings.chat.transport === 'eventsub') {
    // The application the bot's token was issued to: TWITCH_CLIENT_ID, or the setup page's login's own.
    if (!twitchAuth.clientId) {
      throw new GiftdropError(
        'CONFIG_INVALID',
        'chat.transport "eventsub" needs the Twitch application TWITCH_TOKEN was issued to (the bot reads chat through the Twitch API): set TWITCH_CLIENT_ID, or log the bot in on the setup page; or set "chat": { "transport": "irc" } in the settings file.',
      );
    }
    const chat = new EventSubChat({ channel: t.channel!, username: twitchAuth.username, clock, logger, outbox });
    stops.close('chat', () => chat.disconnect());
    return chat;
  }
  const chat = new TwitchChat({
    url: t.ircUrl,
    channel: t.channel!,
    username: twitchAuth.username,
    token: twitchAuth.tokens.current(),
    tokens: twitchAuth.tokens,
    logger,
    clock,
    outbox,
  });
  stops.close('chat', () => chat.disconnect());
  return chat;
}

/** Links the EventSub transport to what it reaches Twitch through (see the module header); nothing for IRC. */
export function linkChat(
  c: BotContext,
  chat: ChatConnection,
  d: {
    twitchAuth: TwitchAuthStartup;
    helix: HelixClient | undefined;
    eventSub: EventSubClient | undefined;
    channels: ChannelLogins;
  },
): void {
  if (!(chat instanceof EventSubChat)) return;
  const { config, logger, clock } = c;
  const t = config.twitch;
  const { helix, eventSub } = d;
  if (!helix || !eventSub) return; // openChat refused to start without the bot's application
  const appToken =
    config.settings.chat.botBadge && t.clientId && t.clientSecret
      ? new AppToken({
          auth: d.twitchAuth.auth,
          clientId: t.clientId,
          clientSecret: t.clientSecret,
          logger,
          registerSecret: (v) => registerSecret(logger, v),
        })
      : undefined;
  const appHelix =
    appToken && t.clientId
      ? new HelixClient({
          apiUrl: t.apiUrl ?? 'https://api.twitch.tv/helix',
          clientId: t.clientId,
          token: appToken,
          tokenName: 'the app access token (TWITCH_CLIENT_SECRET)',
          dispatcher: d.twitchAuth.auth.dispatcher,
          clock,
          logger,
        })
      : undefined;
  if (!appHelix && config.settings.chat.botBadge)
    logger.info("chat over EventSub without TWITCH_CLIENT_SECRET: the bot's lines carry no Chat Bot badge");
  const partnerEntries = config.settings.sharedChat.partnerEntries;
  chat.attach({
    events: eventSub,
    identify: async () => {
      const botUserId = d.twitchAuth.tokens.validated()?.userId ?? (await d.twitchAuth.tokens.check()).userId;
      const channel = await helix.userByLogin(t.channel!.replace(/^#/, '').toLowerCase());
      if (!channel)
        throw new GiftdropError(
          'TWITCH_CHANNEL_UNKNOWN',
          `Twitch knows no channel "${t.channel}": check TWITCH_CHANNEL.`,
        );
      return { channelId: channel.id, botUserId };
    },
    endpoint: (ids) => {
      if (appToken)
        void appToken
          .start()
          .catch((err: unknown) =>
            logger.warn({ err }, 'could not get an app access token yet (it is asked again with the first line)'),
          );
      return new HelixChatEndpoint({
        broadcasterId: ids.channelId,
        senderId: ids.botUserId,
        user: helix,
        ...(appHelix ? { app: appHelix } : {}),
        sourceOnly: () => !partnerEntries,
        logger,
      });
    },
    onSharedChat: (channels) => {
      for (const ch of channels) d.channels.learn(ch.id, ch.login);
    },
    close: async () => {
      await appHelix?.close();
    },
  });
}
