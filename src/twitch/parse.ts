/**
 * Turns what tmi.js hands to its `message`, `action` and `cheer` listeners into a ChatMessage.
 *
 * Contract: identity is the `user-id` tag; a line without one is rejected (the caller logs it),
 * never thrown. tmi.js has already parsed the tags: `'1'`/`'0'` values became booleans, `badges`
 * and `badge-info` became objects of strings, `username` was added from the prefix, and the
 * `\u0001ACTION` wrapper was stripped (message-type `action`). Roles: broadcaster from
 * badges.broadcaster (or user-id = room-id), moderator from `mod` or badges.moderator, vip from
 * badges.vip or the `vip` tag, subscriber from `subscriber` or the subscriber/founder badge,
 * months from badge-info, first message from `first-msg`; all read from this channel's tags
 * (`badges`, `mod`, ...), never from Shared Chat's `source-badges`. Shared Chat's `source-room-id`
 * and `source-only` are carried as they are (`sourceChannelId`, `sourceOnly`); what they allow is
 * giveaway/shared-chat.ts's decision. Minimal work per line: this runs on
 * the receive path of every chat line (TagsMessage reads a field's tags only when it is used).
 * It does not decide anything about commands or entries.
 */
import type { ChatMessage, ChatRoles } from '../shared/chat.js';

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
  const out = chatMessageOf(login, tags, text, self, receivedAt);
  return typeof out === 'string' ? { ok: false, reason: out } : { ok: true, message: out };
}

/**
 * The receive path's ChatMessage: user id, login, text, channel and self are read from the tags
 * at once (a line without a user id or login is rejected there); every other field, the send
 * time included, is read from the tags when first used. Most chat lines (a repeated `!enter`,
 * plain chat) only need the identity and the text, and tmi.js's tags object is a slow dictionary
 * to read from. The values are exactly those of the plain message (`plainMessage`); `roles` is
 * one object per message.
 * `receivedAt` is given by the caller (who reads the clock once per socket read) and is the
 * send time of a line without a usable `tmi-sent-ts`. Read-only.
 */
export class TagsMessage implements ChatMessage {
  readonly channel: string;
  readonly userId: string;
  readonly login: string;
  readonly text: string;
  readonly receivedAt: number;
  readonly self: boolean;
  readonly #tags: TmiTags;
  #roles: ChatRoles | undefined;
  /** `source-room-id` once read (null: not read yet); the command gate and the entry both ask. */
  #source: string | undefined | null = null;

  private constructor(
    channel: string,
    tags: TmiTags,
    userId: string,
    login: string,
    text: string,
    receivedAt: number,
    self: boolean,
  ) {
    this.channel = channel;
    this.userId = userId;
    this.login = login;
    this.text = text;
    this.receivedAt = receivedAt;
    this.self = self;
    this.#tags = tags;
  }

  /**
   * The message of a line, or why it is rejected (a string). `channel` is the channel login
   * without `#`; `receivedAt` is when the line was read (also its send time when it has no
   * usable `tmi-sent-ts`).
   */
  static of(channel: string, tags: TmiTags, text: string, self: boolean, receivedAt: number): TagsMessage | string {
    const userId = tags['user-id'];
    if (typeof userId !== 'string' || userId === '') {
      return userId === undefined ? 'no user-id tag' : 'user-id tag is not an id';
    }
    const login = str(tags.username) ?? str(tags.login);
    if (login === undefined) return 'no login';
    return new TagsMessage(channel, tags, userId, login, text, receivedAt, self);
  }

  /** `tmi-sent-ts`, or the receive time when the line has no usable one. */
  get sentAt(): number {
    const sentAt = sentTime(this.#tags['tmi-sent-ts']);
    return sentAt > 0 ? sentAt : this.receivedAt;
  }

  get id(): string {
    return str(this.#tags.id) ?? '';
  }

  /** undefined when there is no `room-id` tag. */
  get channelId(): string | undefined {
    return str(this.#tags['room-id']);
  }

  get displayName(): string {
    const displayName = this.#tags['display-name'];
    return typeof displayName === 'string' && displayName !== '' ? displayName : this.login;
  }

  get roles(): ChatRoles {
    return (this.#roles ??= rolesOf(this.#tags, this.userId));
  }

  get bits(): number {
    return count(this.#tags.bits);
  }

  get action(): boolean {
    return this.#tags['message-type'] === 'action';
  }

  /** Shared Chat's `source-room-id`; undefined outside a Shared Chat session. */
  get sourceChannelId(): string | undefined {
    const source = this.#source;
    return source !== null ? source : (this.#source = str(this.#tags['source-room-id']));
  }

  /** Shared Chat's `source-only` (tmi.js turned `1` into true); undefined when absent. */
  get sourceOnly(): boolean | undefined {
    const v = this.#tags['source-only'];
    return v === undefined ? undefined : flag(v);
  }
}

/** The `tmi-sent-ts` tag as a time (plain digits read directly; others as Number reads them); 0 when not usable. */
function sentTime(tag: unknown): number {
  if (typeof tag !== 'string') return 0;
  let n = 0;
  if (tag.length > 0 && tag.length <= 15) {
    for (let i = 0; i < tag.length; i++) {
      const d = tag.charCodeAt(i) - 48;
      if (d < 0 || d > 9) {
        n = -1;
        break;
      }
      n = n * 10 + d;
    }
    if (n >= 0) return n;
  }
  const at = Number(tag);
  return Number.isFinite(at) && at > 0 ? at : 0;
}

function rolesOf(tags: TmiTags, userId: string): ChatRoles {
  const badges = (tags.badges ?? undefined) as Record<string, string | undefined> | undefined | null;
  const roomId = str(tags['room-id']);
  const subscriber =
    flag(tags.subscriber) || (badges != null && (badges.subscriber !== undefined || badges.founder !== undefined));
  const badgeInfo = subscriber
    ? ((tags['badge-info'] ?? undefined) as Record<string, string | undefined> | undefined | null)
    : undefined;
  return {
    broadcaster: (badges != null && badges.broadcaster !== undefined) || (roomId !== undefined && roomId === userId),
    moderator: flag(tags.mod) || (badges != null && badges.moderator !== undefined),
    vip: flag(tags.vip) || (badges != null && badges.vip !== undefined),
    subscriber,
    subMonths: subscriber && badgeInfo != null ? count(badgeInfo.subscriber ?? badgeInfo.founder) : 0,
    firstMessage: flag(tags['first-msg']),
  };
}

/** A ChatMessage's fields as a plain object (every field read now). */
export function plainMessage(m: ChatMessage): ChatMessage {
  return {
    id: m.id,
    channel: m.channel,
    channelId: m.channelId,
    userId: m.userId,
    login: m.login,
    displayName: m.displayName,
    text: m.text,
    roles: m.roles,
    bits: m.bits,
    action: m.action,
    sentAt: m.sentAt,
    ...(m.receivedAt === undefined ? {} : { receivedAt: m.receivedAt }),
    self: m.self,
    ...(m.sourceChannelId === undefined ? {} : { sourceChannelId: m.sourceChannelId }),
    ...(m.sourceOnly === undefined ? {} : { sourceOnly: m.sourceOnly }),
  };
}

/**
 * parseChatMessage's mapping as a plain object: the ChatMessage, or the reason the line is
 * rejected (a string). `channel` is the channel login without `#`; `receivedAt` is when the line
 * was read (its send time too when it has no usable `tmi-sent-ts`). `channelId` is undefined
 * when there is no `room-id` tag (the property is always present, so every message has the same
 * shape).
 */
export function chatMessageOf(
  channel: string,
  tags: TmiTags,
  text: string,
  self: boolean,
  receivedAt: number,
): ChatMessage | string {
  const m = TagsMessage.of(channel, tags, text, self, receivedAt);
  return typeof m === 'string' ? m : plainMessage(m);
}
