/**
 * The chat side of Helix Send Chat Message in the sandbox (sandbox/helix/chat-messages.ts asks it):
 * a message the bot sends through the API is judged by the same rules as one it sends over IRC
 * (limits.ts: the per-account window shared with IRC, pacing, slow mode, duplicates, room modes),
 * then delivered to the channel or dropped with Twitch's drop reason.
 *
 * Contract: `postApiMessage` returns `{ ok: true, messageId }` for a delivered message (recorded in
 * the transcript as kind 'bot' with `via: 'api'` and `chatBotBadge`, echoed as a PRIVMSG to the
 * IRC clients in the channel, emitted as 'bot-message'), or `{ ok: false, code, message }` for a
 * dropped one: the code is what IRC's NOTICE would name (`msg_ratelimit`, `msg_duplicate`,
 * `msg_slowmode`, `msg_subsonly`, `msg_followersonly`, `msg_emoteonly`, ...; Twitch documents no
 * list and changes them), recorded as kind 'notice' with `via: 'api'`. `dropNext(code)` makes the
 * next messages dropped with that code whatever the rules say (AutoMod's `msg_rejected`, a code
 * the bot never saw), once per call. Nothing here checks tokens (the Helix side does).
 */
import { randomUUID } from 'node:crypto';
import { noticeText, type OutboundPolicy, type RoomModes } from './limits.js';

export interface ApiMessageInput {
  text: string;
  /** Sent with an app token by a bot allowed the Chat Bot badge. */
  chatBotBadge: boolean;
  replyTo?: string;
  /** Send Chat Message's `for_source_only` (app tokens only). */
  forSourceOnly?: boolean;
}

export type ApiMessageResult = { ok: true; messageId: string } | { ok: false; code: string; message: string };

/** A transcript entry of the API path (a subset of types.ts TranscriptEntry). */
interface ApiEntry {
  kind: 'bot' | 'notice';
  login: string;
  userId: string;
  text: string;
  via: 'api';
  displayName?: string;
  messageId?: string;
  msgId?: string;
  attempted?: string;
  chatBotBadge?: boolean;
  replyTo?: string;
  forSourceOnly?: boolean;
}

/** What the chat server lends the API path. */
export interface ApiMessageHost {
  readonly channel: string;
  readonly botLogin: string;
  readonly botUserId: string;
  now(): number;
  readonly policy: OutboundPolicy;
  readonly modes: RoomModes;
  sender(): { privileged: boolean; subscriber: boolean; following: boolean };
  /** Records a dropped message's notice entry. */
  dropped(entry: ApiEntry): void;
  /** Records a delivered message, echoes it to the IRC clients in the channel and emits 'bot-message'. */
  delivered(entry: ApiEntry): void;
}

const FORCED_TEXT: Record<string, string> = {
  msg_rejected: 'Your message is being checked by mods and has not been sent.',
  msg_rejected_mandatory: "Your message wasn't posted due to conflicts with the channel's moderation settings.",
};

export class ApiMessages {
  private readonly forced: string[] = [];

  constructor(private readonly host: ApiMessageHost) {}

  /** The next message is dropped with `code` (in call order, one per call). */
  dropNext(code: string): void {
    this.forced.push(code);
  }

  post(input: ApiMessageInput): ApiMessageResult {
    const h = this.host;
    const forced = this.forced.shift();
    const verdict = forced
      ? { ok: false as const, msgId: forced, text: FORCED_TEXT[forced] ?? noticeText(forced, h.channel) }
      : h.policy.judge(h.now(), h.channel, { login: h.botLogin, ...h.sender() }, input.text, h.modes);
    if (!verdict.ok) {
      h.dropped({
        kind: 'notice',
        login: h.botLogin,
        userId: h.botUserId,
        text: verdict.text,
        msgId: verdict.msgId,
        attempted: input.text,
        via: 'api',
      });
      return { ok: false, code: verdict.msgId, message: verdict.text };
    }
    const messageId = randomUUID();
    h.delivered({
      kind: 'bot',
      login: h.botLogin,
      userId: h.botUserId,
      displayName: h.botLogin,
      text: input.text,
      messageId,
      via: 'api',
      chatBotBadge: input.chatBotBadge,
      ...(input.replyTo ? { replyTo: input.replyTo } : {}),
      ...(input.forSourceOnly !== undefined ? { forSourceOnly: input.forSourceOnly } : {}),
    });
    return { ok: true, messageId };
  }
}
