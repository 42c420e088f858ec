/**
 * The Twitch scopes the setup page's device code logins ask for, and each one in plain words (the
 * page lists them before the streamer opens Twitch's page). The bot account: chat (over IRC and
 * over EventSub, so `chat.transport` can change without a new login, and `user:bot` for the Chat
 * Bot badge), whispers to winners, follower checks (as a moderator). The broadcaster's account
 * (optional): what only the broadcaster's login can do (channel points, Bits, follower checks as
 * the broadcaster, `channel:bot` for the bot's Chat Bot badge).
 * Pure data.
 */

/** The bot account's login: chat (required), whispers, follower checks. */
export const BOT_SCOPES: readonly string[] = [
  'chat:read',
  'chat:edit',
  'user:read:chat',
  'user:write:chat',
  'user:bot',
  'user:manage:whispers',
  'moderator:read:followers',
];

/** The broadcaster's optional login. */
export const BROADCASTER_SCOPES: readonly string[] = ['moderator:read:followers', 'channel:read:redemptions', 'channel:manage:redemptions', 'bits:read', 'channel:bot'];

const WORDS: Record<string, string> = {
  'chat:read': 'read your chat (to see !enter)',
  'chat:edit': 'write in chat (to announce draws and winners)',
  'user:read:chat': 'read your chat through Twitch\'s API (chat over EventSub)',
  'user:write:chat': 'write in chat through Twitch\'s API (chat over EventSub)',
  'user:bot': 'appear in chat as a bot, with the Chat Bot badge',
  'channel:bot': 'let the bot appear in your chat with the Chat Bot badge',
  'user:manage:whispers': 'whisper each winner their prize link',
  'moderator:read:followers': 'check who follows the channel (follower-only giveaways)',
  'channel:read:redemptions': 'see channel point redemptions',
  'channel:manage:redemptions': 'create and fulfil a channel point reward for entries',
  'bits:read': 'see Bits cheered in the channel',
};

/** `scope` in plain words (the scope itself when it has none). */
export function scopeWords(scope: string): string {
  return WORDS[scope] ?? scope;
}
