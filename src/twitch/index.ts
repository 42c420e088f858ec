/**
 * The Twitch chat adapter's public surface: the tmi.js client wrapper, its outbox and the tag
 * parser. Implements the giveaway domain's ChatPort; imports nothing from fourthwall/.
 */
export { TwitchChat, TwitchAuthError } from './client.js';
export type { OutboxLimits } from './outbox.js';
