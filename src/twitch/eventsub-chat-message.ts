/**
 * What EventSub's `channel.chat.message` event carries, as the project's ChatMessage: the chat
 * transport over EventSub (eventsub-chat.ts) reads every chat line through it.
 *
 * Contract: the event is checked with zod at the edge; one that does not fit (no chatter id, no
 * text, another channel's event) is refused with the reason (a string), never thrown. Identity is
 * `chatter_user_id`; the login is `chatter_user_login` (lower-cased), the display name
 * `chatter_user_name`. Roles come from `badges` only, which are the chatter's badges in THIS
 * channel (`set_id` broadcaster, moderator, vip, subscriber or founder; the subscriber badge's
 * `info` is the months subscribed); Shared Chat's `source_badges` are never read (what a partner
 * channel's badges grant is nothing here: giveaway/shared-chat.ts). `source_broadcaster_user_id`
 * and `is_source_only` are carried as `sourceChannelId` and `sourceOnly` (null outside a Shared
 * Chat session: absent). A cheer's bits come from `cheer.bits`. EventSub has no `first-msg`
 * flag: `firstMessage` is true only for Twitch's first-time-chatter introductions
 * (`message_type` user_intro). It has no `/me` flag either (`action` is false). `sentAt` is the
 * notification's `message_timestamp` when given, else the receive time. `self` is true for the
 * bot's own messages (the caller passes the bot's user id).
 */
import { z } from 'zod';
import type { ChatMessage, ChatRoles } from '../shared/chat.js';

const badgeSchema = z.looseObject({ set_id: z.string(), id: z.string(), info: z.string().nullish() });

const eventSchema = z.looseObject({
  broadcaster_user_id: z.string().min(1),
  broadcaster_user_login: z.string().min(1),
  chatter_user_id: z.string().min(1),
  chatter_user_login: z.string().min(1),
  chatter_user_name: z.string().nullish(),
  message_id: z.string(),
  message: z.looseObject({ text: z.string() }),
  message_type: z.string().nullish(),
  badges: z.array(badgeSchema).nullish(),
  cheer: z.looseObject({ bits: z.number() }).nullish(),
  source_broadcaster_user_id: z.string().nullish(),
  is_source_only: z.boolean().nullish(),
});

/** The ids the mapping needs: this channel and the bot. */
export interface ChatEventContext {
  channelId: string;
  botUserId: string;
}

function months(info: string | null | undefined): number {
  const n = Number.parseInt(info ?? '', 10);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** The chatter's roles in this channel from the event's `badges` (see the module header). */
function rolesOfBadges(
  badges: readonly { set_id: string; info?: string | null | undefined }[],
  chatterId: string,
  channelId: string,
  messageType?: string | null,
): ChatRoles {
  let broadcaster = chatterId === channelId;
  let moderator = false;
  let vip = false;
  let subscriber = false;
  let subMonths = 0;
  for (const b of badges) {
    if (b.set_id === 'broadcaster') broadcaster = true;
    else if (b.set_id === 'moderator') moderator = true;
    else if (b.set_id === 'vip') vip = true;
    else if (b.set_id === 'subscriber' || b.set_id === 'founder') {
      subscriber = true;
      subMonths = Math.max(subMonths, months(b.info));
    }
  }
  return { broadcaster, moderator, vip, subscriber, subMonths, firstMessage: messageType === 'user_intro' };
}

/**
 * The ChatMessage of one `channel.chat.message` event, or why it is refused. `receivedAt`: when
 * the bot read it; `at`: the notification's `message_timestamp`, when sent.
 */
export function chatMessageOfEvent(
  event: unknown,
  ctx: ChatEventContext,
  receivedAt: number,
  at?: string,
): ChatMessage | string {
  const r = eventSchema.safeParse(event);
  if (!r.success) return `not a channel.chat.message event (${r.error.issues[0]?.path.join('.') || 'shape'})`;
  const e = r.data;
  if (e.broadcaster_user_id !== ctx.channelId) return `an event of another channel (${e.broadcaster_user_id})`;
  const sentAt = at ? Date.parse(at) : Number.NaN;
  const login = e.chatter_user_login.toLowerCase();
  const bits = e.cheer && Number.isFinite(e.cheer.bits) && e.cheer.bits > 0 ? Math.floor(e.cheer.bits) : 0;
  return {
    id: e.message_id,
    channel: e.broadcaster_user_login.toLowerCase(),
    channelId: e.broadcaster_user_id,
    userId: e.chatter_user_id,
    login,
    displayName: e.chatter_user_name || login,
    text: e.message.text,
    roles: rolesOfBadges(e.badges ?? [], e.chatter_user_id, e.broadcaster_user_id, e.message_type),
    bits,
    action: false,
    sentAt: Number.isFinite(sentAt) && sentAt > 0 ? sentAt : receivedAt,
    receivedAt,
    self: e.chatter_user_id === ctx.botUserId,
    ...(e.source_broadcaster_user_id ? { sourceChannelId: e.source_broadcaster_user_id } : {}),
    ...(e.is_source_only != null ? { sourceOnly: e.is_source_only } : {}),
  };
}
