/**
 * Turns what tmi.js hands to its `message`, `action` and `cheer` listeners into a ChatMessage.
 *
 * Contract: identity is the `user-id` tag; a line without one is rejected (the caller logs it),
 * never thrown. tmi.js has already parsed the tags: `'1'`/`'0'` values became booleans, `badges`
 * and `badge-info` became objects of strings, `username` was added from the prefix, and the
 * `\u0001ACTION` wrapper was stripped (message-type `action`). Roles: broadcaster from
 * badges.broadcaster (or user-id = room-id), moderator from `mod` or badges.moderator, vip from
 * badges.vip or the `vip` tag, subscriber from `subscriber` or the subscriber/founder badge,
 * months from badge-info, first message from `first-msg`. Minimal work per line: this runs on
 * the receive path of every chat line. It does not decide anything about commands or entries.
 */
import type { ChatMessage } from '../shared/chat.js';

/** The tags object tmi.js passes (a subset of @types/tmi.js's ChatUserstate, kept loose). */
export type TmiTags = Record<string, unknown>;

export type ParseResult = { ok: true; message: ChatMessage } | { ok: false; reason: string };

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** A tag that tmi.js may have turned into a boolean (`'1'`/`'0'`) or left as a string. */
function flag(v: unknown): boolean {
  return v === true || (typeof v === 'string' && v !== '' && v !== '0');
}

function count(v: unknown): number {
  if (typeof v === 'string') {
    const n = Number.parseInt(v, 10);
    return Number.isFinite(n) && n > 0 ? n : 0;
  }
  if (v === true) return 1;
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

/**
 * Builds a ChatMessage from tmi.js listener arguments.
 * @param channel `#login` as tmi.js gives it
 * @param tags the userstate object
 * @param text message text (already without the ACTION wrapper)
 * @param self tmi.js's self flag
 * @param receivedAt fallback send time when `tmi-sent-ts` is missing
 */
export function parseChatMessage(
  channel: string,
  tags: TmiTags,
  text: string,
  self: boolean,
  receivedAt: number,
): ParseResult {
  const login = channel.charCodeAt(0) === 35 /* # */ ? channel.slice(1) : channel;
  const out = chatMessageOf(login, tags, text, self, () => receivedAt);
  return typeof out === 'string' ? { ok: false, reason: out } : { ok: true, message: out };
}

/**
 * parseChatMessage for the receive path: the ChatMessage, or the reason the line is rejected (a
 * string); nothing else allocated. `channel` is the channel login without `#`; `now` is called
 * only when the line has no usable `tmi-sent-ts`. `channelId` is undefined when there is no
 * `room-id` tag (the property is always present, so every message has the same shape).
 */
export function chatMessageOf(channel: string, tags: TmiTags, text: string, self: boolean, now: () => number): ChatMessage | string {
  const userId = tags['user-id'];
  if (typeof userId !== 'string' || userId === '') {
    return userId === undefined ? 'no user-id tag' : 'user-id tag is not an id';
  }
  const login = str(tags.username) ?? str(tags.login);
  if (login === undefined) return 'no login';
  const badges = (tags.badges ?? undefined) as Record<string, string | undefined> | undefined | null;
  const badgeInfo = (tags['badge-info'] ?? undefined) as Record<string, string | undefined> | undefined | null;
  const roomId = str(tags['room-id']);
  const broadcaster = (badges != null && badges.broadcaster !== undefined) || (roomId !== undefined && roomId === userId);
  const subscriber =
    flag(tags.subscriber) || (badges != null && (badges.subscriber !== undefined || badges.founder !== undefined));
  const sentTs = tags['tmi-sent-ts'];
  const sentAt = typeof sentTs === 'string' ? Number(sentTs) : NaN;
  const displayName = tags['display-name'];
  return {
    id: str(tags.id) ?? '',
    channel,
    channelId: roomId,
    userId,
    login,
    displayName: typeof displayName === 'string' && displayName !== '' ? displayName : login,
    text,
    roles: {
      broadcaster,
      moderator: flag(tags.mod) || (badges != null && badges.moderator !== undefined),
      vip: flag(tags.vip) || (badges != null && badges.vip !== undefined),
      subscriber,
      subMonths: subscriber && badgeInfo != null ? count(badgeInfo.subscriber ?? badgeInfo.founder) : 0,
      firstMessage: flag(tags['first-msg']),
    },
    bits: count(tags.bits),
    action: tags['message-type'] === 'action',
    sentAt: Number.isFinite(sentAt) && sentAt > 0 ? sentAt : now(),
    self,
  };
}
