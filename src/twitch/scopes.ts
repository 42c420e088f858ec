/**
 * Which Twitch scopes each part of the bot needs of which account, in one place: the chat
 * transports (the bot's token: IRC, or EventSub and Send Chat Message), the Chat Bot badge (the
 * bot's and the broadcaster's part), and what only the broadcaster's login does (channel points,
 * bits, the roles of a viewer who entered without chatting). The start-up check (logins.ts,
 * token.ts, app/chat-transport.ts, app/twitch-events.ts), the terminal `setup` (cli/setup.ts) and
 * the setup page (setup/scopes.ts: what its logins ask for, in plain words) read it, so a scope
 * changes here and everywhere at once.
 * Pure data.
 */

/** The `chat.transport` setting's values. */
export type ChatTransportName = 'irc' | 'eventsub';

/** The scopes the bot's token needs to read and write chat over each transport. */
export const CHAT_SCOPES: Readonly<Record<ChatTransportName, readonly string[]>> = {
  irc: ['chat:read', 'chat:edit'],
  eventsub: ['user:read:chat', 'user:write:chat'],
};

/** The scopes of the transport in force. */
export function chatScopesOf(transport: ChatTransportName): readonly string[] {
  return CHAT_SCOPES[transport];
}

/** The transport in words, for messages: "chat over IRC". */
export function transportWords(transport: ChatTransportName): string {
  return transport === 'eventsub' ? 'chat over EventSub' : 'chat over IRC';
}

/**
 * The Chat Bot badge (chat over EventSub with an app access token): `user:bot` on the bot's token,
 * and `channel:bot` on the broadcaster's (or the bot a moderator of the channel instead).
 */
export const BADGE_SCOPES = { bot: 'user:bot', broadcaster: 'channel:bot' } as const;

/** What only the broadcaster's login does, with the scope each needs. */
export const BROADCASTER_FEATURE_SCOPES = {
  /** Create the bot's reward and settle its redemptions. */
  channelPoints: 'channel:manage:redemptions',
  /** See bits used in the channel. */
  bits: 'bits:read',
  /** Whether a viewer who redeemed without chatting is a subscriber (`subscribersOnly`). */
  subscriberLookup: 'channel:read:subscriptions',
  /** Whether such a viewer is a moderator (`excludeModerators`). */
  moderatorLookup: 'moderation:read',
} as const;
