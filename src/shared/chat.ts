/**
 * The chat message every layer agrees on. `twitch/` produces it from tmi.js; `commands/` and
 * `giveaway/` consume it. Identity is the Twitch user id, never the display name or login.
 */
export interface ChatRoles {
  broadcaster: boolean;
  moderator: boolean;
  vip: boolean;
  subscriber: boolean;
  /** Months subscribed (badge-info), 0 when not a subscriber or unknown. */
  subMonths: number;
  /** Twitch's `first-msg` tag: the chatter's first message in this channel. */
  firstMessage: boolean;
}

export interface ChatMessage {
  /** Twitch message id (tag `id`). */
  id: string;
  /** Channel login without `#`. */
  channel: string;
  /** Channel user id (tag `room-id`), when known. */
  channelId?: string;
  /** The chatter's stable Twitch user id (tag `user-id`). */
  userId: string;
  /** Lower-case login. */
  login: string;
  displayName: string;
  text: string;
  roles: ChatRoles;
  /** Bits cheered with this message, 0 if none. */
  bits: number;
  /** `/me` action line. */
  action: boolean;
  /** Send time in ms since the epoch (tag `tmi-sent-ts`, or receive time). */
  sentAt: number;
  /**
   * When the bot read the line from its chat connection, in ms since the epoch (lines read
   * together share one reading of the clock). Absent on messages made elsewhere (tests, demos);
   * the engine then reads its own clock.
   */
  receivedAt?: number;
  /** True when the bot itself sent it. */
  self: boolean;
  /**
   * Shared Chat: the channel (user id) the message was typed in, when Twitch says (IRC
   * `source-room-id`, EventSub `source_broadcaster_user_id`); absent outside a Shared Chat session.
   * Equal to `channelId` for this channel's own messages during a session. Whether a message may
   * enter or run a command is decided by giveaway/shared-chat.ts, never here.
   */
  sourceChannelId?: string;
  /** Shared Chat: shown only in its source channel (IRC `source-only=1`, EventSub `is_source_only`). */
  sourceOnly?: boolean;
}

export const noRoles: ChatRoles = {
  broadcaster: false,
  moderator: false,
  vip: false,
  subscriber: false,
  subMonths: 0,
  firstMessage: false,
};

/**
 * Makes user- or shop-supplied text safe to put in a chat line: a leading `/` or `.` (Twitch
 * chat commands) is neutralised, and line breaks are flattened.
 */
export function neutralise(text: string): string {
  const flat = text.replace(/[\r\n]+/g, ' ');
  return /^\s*[/.]/.test(flat) ? `\u200b${flat.trimStart()}` : flat;
}
