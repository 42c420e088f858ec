/**
 * The Twitch chat adapter's public surface: the tmi.js client wrapper, its outbox and the tag
 * parser. Implements the giveaway domain's ChatPort; imports nothing from fourthwall/.
 */
export { TwitchChat, TwitchAuthError, TwitchConnectError } from './client.js';
export type { ChatConnectionState, RoomState, TwitchChatOptions } from './client.js';
export { Outbox, NotSentError, defaultOutboxLimits } from './outbox.js';
export type { ChatTransport, DropReason, OutboxLimits, OutboxOptions, OutboxStats } from './outbox.js';
export { parseChatMessage } from './parse.js';
export type { ParseResult, TmiTags } from './parse.js';
export { packList, sanitiseLine, splitText } from './text.js';
