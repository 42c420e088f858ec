/**
 * The sandbox chat as EventSub tells it: every chat line of the channel (viewers', Shared Chat
 * partners', the bot's own, over IRC or Send Chat Message) becomes a `channel.chat.message`
 * notification, and each Shared Chat session change a `channel.shared_chat.begin/update/end` one,
 * in Twitch's payload shapes (v1), published on the sandbox EventSub server.
 *
 * Contract: `bridgeChatToEventSub(chat, publish)` publishes from the chat server's 'chat-line' and
 * 'shared-chat' events until the returned function is called. Badges are the chatter's in this
 * channel (`badges`: broadcaster, moderator, vip, subscriber with the months as `info`, and the
 * Chat Bot badge `bot-badge` on an app-token line); a partner viewer's line adds
 * `source_broadcaster_user_*`, `source_message_id`, `source_badges` (their badges there) and
 * `is_source_only`; this channel's own lines during a session carry the same with this channel;
 * outside a session these are null. Pure mapping plus the subscription to the two events.
 */
import type { ChatRoles } from '../../shared/chat.js';
import type { SharedChatEvent } from './shared-chat.js';
import type { ChatLineEvent, ChatServer } from './types.js';

type Payload = Record<string, unknown>;

const SUB_TIERS = [0, 3, 6, 9, 12, 18, 24, 36, 48, 60, 72, 84, 96, 108, 120];

function badges(r: ChatRoles, chatBotBadge = false): Payload[] {
  const out: Payload[] = [];
  if (r.broadcaster) out.push({ set_id: 'broadcaster', id: '1', info: '' });
  if (r.moderator) out.push({ set_id: 'moderator', id: '1', info: '' });
  if (r.vip) out.push({ set_id: 'vip', id: '1', info: '' });
  if (r.subscriber)
    out.push({
      set_id: 'subscriber',
      id: String(SUB_TIERS.filter((t) => t <= r.subMonths).at(-1) ?? 0),
      info: String(r.subMonths),
    });
  if (chatBotBadge) out.push({ set_id: 'bot-badge', id: '1', info: '' });
  return out;
}

/** The `channel.chat.message` event of one line in `channel`. */
function chatMessagePayload(line: ChatLineEvent, channel: { id: string; login: string }): Payload {
  const s = line.source;
  return {
    broadcaster_user_id: channel.id,
    broadcaster_user_login: channel.login,
    broadcaster_user_name: channel.login,
    chatter_user_id: line.userId,
    chatter_user_login: line.login,
    chatter_user_name: line.displayName,
    message_id: line.messageId,
    message: {
      text: line.text,
      fragments: [{ type: 'text', text: line.text, cheermote: null, emote: null, mention: null }],
    },
    color: '',
    badges: badges(line.roles, line.chatBotBadge),
    message_type: line.roles.firstMessage ? 'user_intro' : 'text',
    cheer: line.bits ? { bits: line.bits } : null,
    reply: null,
    channel_points_custom_reward_id: null,
    source_broadcaster_user_id: s?.channelId ?? null,
    source_broadcaster_user_login: s?.channelLogin ?? null,
    source_broadcaster_user_name: s?.channelLogin ?? null,
    source_message_id: s?.messageId ?? null,
    source_badges: s ? badges(s.roles) : null,
    ...(s ? { is_source_only: s.only } : {}),
  };
}

/** The `channel.shared_chat.*` notification of one session change, as `channel` receives it. */
function sharedChatPayload(
  e: SharedChatEvent,
  channel: { id: string; login: string },
): { type: string; event: Payload } {
  const base: Payload = {
    session_id: e.sessionId,
    broadcaster_user_id: channel.id,
    broadcaster_user_login: channel.login,
    broadcaster_user_name: channel.login,
    host_broadcaster_user_id: e.host.id,
    host_broadcaster_user_login: e.host.login,
    host_broadcaster_user_name: e.host.login,
  };
  if (e.kind === 'end') return { type: 'channel.shared_chat.end', event: base };
  const participants = e.participants.map((p) => ({
    broadcaster_user_id: p.id,
    broadcaster_user_login: p.login,
    broadcaster_user_name: p.login,
  }));
  return { type: `channel.shared_chat.${e.kind}`, event: { ...base, participants } };
}

/** Publishes the chat server's lines and Shared Chat changes as EventSub notifications; returns the unsubscribe. */
export function bridgeChatToEventSub(chat: ChatServer, publish: (type: string, event: Payload) => unknown): () => void {
  const channel = { id: chat.channelId, login: chat.channel };
  const onLine = (line: ChatLineEvent): void => void publish('channel.chat.message', chatMessagePayload(line, channel));
  const onShared = (e: SharedChatEvent): void => {
    const { type, event } = sharedChatPayload(e, channel);
    publish(type, event);
  };
  chat.on('chat-line', onLine);
  chat.on('shared-chat', onShared);
  return () => {
    chat.off('chat-line', onLine);
    chat.off('shared-chat', onShared);
  };
}
