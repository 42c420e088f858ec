/**
 * Helix Send Chat Message in the sandbox (`POST /helix/chat/messages`), a route registered on the
 * Helix sandbox (`SandboxHelix.route(chatMessagesRoute(chat, ...))`, local-stack.ts).
 *
 * Twitch's rules as the sandbox plays them:
 * - body `{ broadcaster_id, sender_id, message, reply_parent_message_id?, for_source_only? }`;
 *   a missing field or a body that is not JSON is 400; `broadcaster_id` must be the sandbox
 *   channel (400 otherwise); a message over 500 characters is 422 "The message is too large.";
 * - a user access token needs `user:write:chat` (401 "Missing scope: user:write:chat"), its user
 *   must be `sender_id` (401), and may not set `for_source_only` (400: only app tokens may);
 * - an app access token (client credentials grant) needs the sender to have authorized the
 *   application with `user:bot` (its user token's scopes say so) and the broadcaster `channel:bot`
 *   or the sender to be a moderator; otherwise 403 naming what is missing. Such a message carries
 *   the Chat Bot badge; `for_source_only` defaults to true (Twitch's default since 2025-05-19);
 * - then the chat room judges it like an IRC line (sandbox/chat/api-messages.ts, the sender's
 *   window shared with IRC): 200 `{ data: [{ message_id, is_sent: true, drop_reason: null }] }`, or
 *   `{ data: [{ message_id: "", is_sent: false, drop_reason: { code, message } }] }` when dropped
 *   (Twitch's rate limits, duplicate, slow mode, room modes, or a drop the test asked for).
 * `sendChatMessage` is pure over its inputs (the token was already checked by index.ts);
 * `chatMessagesRoute` reads the body and answers.
 */
import type { ApiMessageInput, ApiMessageResult } from '../chat/api-messages.js';
import type { HelixRoute } from './index.js';

/** The sandbox chat room Send Chat Message posts into (the chat server is one). */
export interface ChatMessagesRoom {
  readonly channelId: string;
  postApiMessage(input: ApiMessageInput): ApiMessageResult;
  isBotMod(): boolean;
  readonly channelBotGranted: boolean;
}

/** Who sent the request: a user token (with its user and scopes) or an app token. */
type ChatMessageCaller =
  { kind: 'user'; userId: string; scopes: readonly string[] } | { kind: 'app'; senderScopes: readonly string[] };

interface HelixAnswer {
  status: number;
  body: unknown;
}

const MAX_LENGTH = 500;

function error(status: number, message: string): HelixAnswer {
  const names: Record<number, string> = {
    400: 'Bad Request',
    401: 'Unauthorized',
    403: 'Forbidden',
    422: 'Unprocessable Entity',
  };
  return { status, body: { error: names[status] ?? 'Error', status, message } };
}

/**
 * The route: Send Chat Message into `room`. `senderScopes` are what the sender (the bot account)
 * authorized the application with, for the app-token rules.
 */
export function chatMessagesRoute(room: ChatMessagesRoom, senderScopes: () => readonly string[]): HelixRoute {
  return (call) => {
    if (call.path !== '/chat/messages' || call.method !== 'POST') return false;
    const caller: ChatMessageCaller = call.caller.app
      ? { kind: 'app', senderScopes: senderScopes() }
      : { kind: 'user', userId: call.caller.userId, scopes: call.caller.scopes };
    void call.body().then((body) => {
      const answer = sendChatMessage(room, caller, body);
      call.reply(answer.status, answer.body);
    });
    return true;
  };
}

/** Answers one Send Chat Message request (see the module header); `parsed` is the JSON body (undefined: none or not JSON). */
function sendChatMessage(room: ChatMessagesRoom, caller: ChatMessageCaller, parsed: unknown): HelixAnswer {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return error(400, 'The request body must be a JSON object');
  const body = parsed as Record<string, unknown>;
  for (const field of ['broadcaster_id', 'sender_id', 'message'] as const) {
    if (typeof body[field] !== 'string' || body[field] === '')
      return error(400, `Missing required parameter "${field}"`);
  }
  const broadcasterId = body.broadcaster_id as string;
  const senderId = body.sender_id as string;
  const message = body.message as string;
  const forSourceOnly = body.for_source_only;
  if (forSourceOnly !== undefined && typeof forSourceOnly !== 'boolean')
    return error(400, 'for_source_only must be true or false');
  if (caller.kind === 'user') {
    if (!caller.scopes.includes('user:write:chat')) return error(401, 'Missing scope: user:write:chat');
    if (senderId !== caller.userId) return error(401, 'The sender_id must match the user ID in the user access token');
    if (forSourceOnly !== undefined) return error(400, 'for_source_only may only be set with an app access token');
  }
  if (broadcasterId !== room.channelId)
    return error(400, `broadcaster_id ${broadcasterId} is not the sandbox channel (${room.channelId})`);
  if ([...message].length > MAX_LENGTH) return error(422, 'The message is too large.');
  if (caller.kind === 'app') {
    if (!caller.senderScopes.includes('user:bot'))
      return error(403, 'The sender has not authorized this application with the user:bot scope');
    if (!room.channelBotGranted && !room.isBotMod())
      return error(
        403,
        'The broadcaster has not authorized this application with the channel:bot scope, and the sender is not a moderator',
      );
  }
  const replyTo =
    typeof body.reply_parent_message_id === 'string' && body.reply_parent_message_id
      ? body.reply_parent_message_id
      : undefined;
  const result = room.postApiMessage({
    text: message,
    chatBotBadge: caller.kind === 'app',
    ...(replyTo ? { replyTo } : {}),
    ...(caller.kind === 'app' ? { forSourceOnly: forSourceOnly ?? true } : {}),
  });
  const data = result.ok
    ? { message_id: result.messageId, is_sent: true, drop_reason: null }
    : { message_id: '', is_sent: false, drop_reason: { code: result.code, message: result.message } };
  return { status: 200, body: { data: [data] } };
}
