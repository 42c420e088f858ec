/**
 * The Twitch scopes the setup page's device code logins ask for, and each one in plain words (the
 * page lists them before the streamer opens Twitch's page). Which scope a part of the bot needs
 * lives in twitch/scopes.ts (also read by the start-up check and `setup`); this module only lists
 * them per login and words them. The bot account: chat (over IRC and over EventSub, so
 * `chat.transport` can change without a new login, and `user:bot` for the Chat Bot badge),
 * whispers to winners, follower checks (as a moderator). The broadcaster's account (optional): what
 * only the broadcaster's login can do (channel points, Bits, the roles of a viewer who entered with
 * channel points without chatting, follower checks as the broadcaster, `channel:bot` for the bot's
 * Chat Bot badge).
 * Pure data.
 */
import {
  BADGE_SCOPES,
  BROADCASTER_FEATURE_SCOPES,
  CHAT_SCOPES,
  chatScopesOf,
  transportWords,
  type ChatTransportName,
} from '../twitch/scopes.js';
import { WHISPER_SCOPE } from '../twitch/whispers.js';

const FOLLOWERS_SCOPE = 'moderator:read:followers';

/** The bot account's login: chat over both transports (required), the badge, whispers, follower checks. */
export const BOT_SCOPES: readonly string[] = [
  ...CHAT_SCOPES.irc,
  ...CHAT_SCOPES.eventsub,
  BADGE_SCOPES.bot,
  WHISPER_SCOPE,
  FOLLOWERS_SCOPE,
];

/** The broadcaster's optional login. */
export const BROADCASTER_SCOPES: readonly string[] = [
  FOLLOWERS_SCOPE,
  'channel:read:redemptions',
  BROADCASTER_FEATURE_SCOPES.channelPoints,
  BROADCASTER_FEATURE_SCOPES.bits,
  BROADCASTER_FEATURE_SCOPES.subscriberLookup,
  BROADCASTER_FEATURE_SCOPES.moderatorLookup,
  BADGE_SCOPES.broadcaster,
];

const WORDS: Record<string, string> = {
  'chat:read': 'read your chat (to see !enter)',
  'chat:edit': 'write in chat (to announce draws and winners)',
  'user:read:chat': "read your chat through Twitch's API",
  'user:write:chat': "write in chat through Twitch's API",
  [BADGE_SCOPES.bot]: 'appear in chat as a bot, with the Chat Bot badge',
  [BADGE_SCOPES.broadcaster]: 'let the bot appear in your chat with the Chat Bot badge',
  [WHISPER_SCOPE]: 'whisper each winner their prize link',
  [FOLLOWERS_SCOPE]: 'check who follows the channel (follower-only giveaways)',
  'channel:read:redemptions': 'see channel point redemptions',
  [BROADCASTER_FEATURE_SCOPES.channelPoints]: 'create and fulfil a channel point reward for entries',
  [BROADCASTER_FEATURE_SCOPES.bits]: 'see Bits cheered in the channel',
  [BROADCASTER_FEATURE_SCOPES.subscriberLookup]:
    'see whether a viewer who entered with channel points is a subscriber (subscriber-only giveaways)',
  [BROADCASTER_FEATURE_SCOPES.moderatorLookup]:
    'see whether a viewer who entered with channel points is a moderator (giveaways without moderators)',
};

/** `scope` in plain words (the scope itself when it has none). */
export function scopeWords(scope: string): string {
  return WORDS[scope] ?? scope;
}

/**
 * A login's scopes in plain words for the page; a chat scope also says whether the chat transport
 * in force (`chat.transport`) uses it: "(chat over IRC: in use)", or that it is there for switching.
 */
export function scopeList(scopes: readonly string[], transport: ChatTransportName): { scope: string; words: string }[] {
  const uses = (t: ChatTransportName, s: string) => CHAT_SCOPES[t].includes(s);
  return scopes.map((scope) => {
    const t = uses('irc', scope) ? 'irc' : uses('eventsub', scope) ? 'eventsub' : undefined;
    const note =
      t === undefined
        ? ''
        : t === transport
          ? ` (${transportWords(t)}: in use)`
          : ` (${transportWords(t)}: if you switch chat.transport)`;
    return { scope, words: `${scopeWords(scope)}${note}` };
  });
}

/** The bot's login row: which of its scopes the transport in force needs. */
export function transportNote(transport: ChatTransportName): string {
  return `The bot uses ${transportWords(transport)} (the settings' chat.transport), which needs ${chatScopesOf(transport).join(' ')}.`;
}
