/**
 * `npm run setup`'s chat check when `chat.transport` is `eventsub`: the bot's token checked for the
 * scopes that transport needs (twitch/scopes.ts, the home the start-up check and the setup page
 * read), then a real subscription to the channel's chat (`channel.chat.message` over the EventSub
 * WebSocket, through the bot's own EventSubChat, as the bot makes it at start), closed again. The
 * IRC transport's check (a real IRC login and join) stays in setup.ts.
 *
 * Contract: resolves with the items (`Twitch chat login` required, `Bot is a moderator` optional);
 * never sends a chat line; never prints a token; closes every socket it opened.
 */
import type { Config } from '../config/index.js';
import type { Logger } from '../logging/index.js';
import { NO_RETRY } from '../shared/retry.js';
import { systemClock } from '../shared/clock.js';
import type { SetupItem } from '../setup/setup-item.js';
import { TwitchAuthClient } from '../twitch/auth.js';
import { EventSubChat } from '../twitch/eventsub-chat.js';
import { EventSubClient } from '../twitch/eventsub/client.js';
import { HelixClient } from '../twitch/helix.js';
import { NotSentError } from '../twitch/outbox-types.js';
import { CHAT_SCOPES, chatScopesOf, transportWords } from '../twitch/scopes.js';

const NAME = 'Twitch chat login';

/** Where the token came from, for the fix: the setup page's login or TWITCH_TOKEN. */
function fixOf(config: Config): string {
  return config.twitch.savedLogin
    ? 'log the bot in again on the setup page'
    : `generate a new TWITCH_TOKEN with ${chatScopesOf('eventsub').join(' ')}`;
}

export async function checkEventSubChat(config: Config, logger: Logger, timeoutMs: number): Promise<SetupItem[]> {
  const { channel, username, token, clientId, authUrl, apiUrl, eventSubUrl } = config.twitch;
  const words = transportWords('eventsub');
  if (!channel || !username || !token)
    return [
      {
        name: NAME,
        status: 'fail',
        detail:
          "TWITCH_CHANNEL, TWITCH_USERNAME and TWITCH_TOKEN (or the bot's login on the setup page) are all needed",
        required: true,
      },
    ];
  if (!clientId)
    return [
      {
        name: NAME,
        status: 'fail',
        detail: `${words} ("chat": { "transport": "eventsub" }) needs the Twitch application TWITCH_TOKEN was issued to: set TWITCH_CLIENT_ID, or log the bot in on the setup page; or switch back to "transport": "irc"`,
        required: true,
      },
    ];
  const auth = new TwitchAuthClient({ authUrl: authUrl ?? 'https://id.twitch.tv/oauth2', timeoutMs });
  const bare = token.replace(/^oauth:/i, '');
  try {
    const v = await auth.validate(bare);
    if (!v.valid)
      return [
        {
          name: NAME,
          status: 'fail',
          detail: `the bot's token is expired or invalid (Twitch says: ${v.reason}): ${fixOf(config)}`,
          required: true,
        },
      ];
    if (v.login !== username.toLowerCase())
      return [
        {
          name: NAME,
          status: 'fail',
          detail: `the bot's token belongs to "${v.login}", not to "${username}": use a token of ${username}, or set TWITCH_USERNAME=${v.login}`,
          required: true,
        },
      ];
    const missing = chatScopesOf('eventsub').filter((s) => !v.scopes.includes(s));
    if (missing.length) {
      const irc = CHAT_SCOPES.irc.every((s) => v.scopes.includes(s))
        ? ` (it has IRC's ${CHAT_SCOPES.irc.join(' ')}: "transport": "irc" would work with it)`
        : '';
      return [
        {
          name: NAME,
          status: 'fail',
          detail: `the bot's token lacks ${missing.join(' ')}, which ${words} needs${irc}: ${fixOf(config)}`,
          required: true,
        },
      ];
    }
    if (v.clientId !== clientId)
      return [
        {
          name: NAME,
          status: 'fail',
          detail:
            "the bot's token was issued to another application than TWITCH_CLIENT_ID: generate the token with this client id (or set the client id the token belongs to)",
          required: true,
        },
      ];
    return await subscribeOnce({
      logger,
      timeoutMs,
      auth,
      clientId,
      token: bare,
      botUserId: v.userId,
      channel,
      username,
      apiUrl,
      eventSubUrl,
    });
  } catch (err) {
    return [
      {
        name: NAME,
        status: 'fail',
        detail: `could not check the bot's token: ${(err as Error).message}`,
        required: true,
      },
    ];
  } finally {
    await auth.close();
  }
}

/** Subscribes to the channel's chat as the bot does at start, then closes everything. */
async function subscribeOnce(o: {
  logger: Logger;
  timeoutMs: number;
  auth: TwitchAuthClient;
  clientId: string;
  token: string;
  botUserId: string;
  channel: string;
  username: string;
  apiUrl: string | undefined;
  eventSubUrl: string | undefined;
}): Promise<SetupItem[]> {
  const { logger, timeoutMs } = o;
  const helix = new HelixClient({
    apiUrl: o.apiUrl ?? 'https://api.twitch.tv/helix',
    clientId: o.clientId,
    token: { current: () => o.token, canRefresh: () => false, refresh: () => Promise.resolve() },
    dispatcher: o.auth.dispatcher,
    logger,
    timeoutMs,
    deadlineMs: timeoutMs,
    retry: NO_RETRY,
  });
  const events = new EventSubClient({
    ...(o.eventSubUrl ? { url: o.eventSubUrl } : {}),
    helixFor: (account) => (account === 'bot' ? helix : undefined),
    logger,
  });
  const chat = new EventSubChat({
    channel: o.channel,
    username: o.username,
    clock: systemClock,
    logger,
    connectTimeoutMs: timeoutMs,
  });
  const login = o.channel.replace(/^#/, '').toLowerCase();
  chat.attach({
    events,
    identify: async () => {
      const user = await helix.userByLogin(login);
      if (!user) throw new Error(`Twitch knows no channel "${login}": check TWITCH_CHANNEL`);
      return { channelId: user.id, botUserId: o.botUserId };
    },
    // The check never speaks in the channel.
    endpoint: () => ({ send: () => Promise.reject(new NotSentError('setup sends nothing')) }),
  });
  try {
    await chat.connect();
    return [
      {
        name: NAME,
        status: 'ok',
        detail: `${o.username}'s token has ${chatScopesOf('eventsub').join(' ')}, and Twitch delivers #${login}'s chat to it over EventSub`,
        required: true,
      },
      {
        name: 'Bot is a moderator',
        status: 'skip',
        detail: `not checked over EventSub (the bot learns it from its first line in chat): if ${o.username} is not one yet, type "/mod ${o.username}" in your chat (mods may send more lines per second; announcements stay timely)`,
        required: false,
      },
    ];
  } catch (err) {
    return [
      {
        name: NAME,
        status: 'fail',
        detail: `Twitch did not deliver #${login}'s chat over EventSub: ${(err as Error).message}`,
        required: true,
      },
    ];
  } finally {
    await chat.disconnect().catch(() => undefined);
    events.stop();
    await helix.close().catch(() => undefined);
  }
}
