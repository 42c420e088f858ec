/**
 * Simulated chatters for the sandbox chat server: stable ids derived from logins, and the
 * PRIVMSG line Twitch would send for one of their messages, with realistic tags (badge-info,
 * badges, bits, color, display-name, emotes, first-msg, flags, id, mod, returning-chatter,
 * room-id, subscriber, tmi-sent-ts, turbo, user-id, user-type, vip; during a Shared Chat session
 * also source-badge-info, source-badges, source-id, source-only and source-room-id, see
 * shared-chat.ts).
 *
 * Contract: the same login always yields the same numeric user id (never "0" or "1", which
 * tmi.js would turn into booleans). Formatting is pure apart from the message uuid.
 * Deliberately not here: emote parsing (emotes= is always empty), channel state, sockets.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { ChatRoles } from '../../shared/chat.js';
import { GiftdropError } from '../../shared/errors.js';
import { escapeTag } from './irc.js';

/** A simulated chatter. `userId` is the stable identity; `login` is lower-case. */
export interface SimViewer {
  readonly login: string;
  readonly userId: string;
  readonly displayName: string;
  readonly roles: ChatRoles;
  /** Chat colour (`#RRGGBB`), derived from the login; empty when absent. */
  readonly color?: string;
}

/** Roles a test asks for when creating a viewer. */
export interface SimViewerOptions {
  mod?: boolean;
  vip?: boolean;
  subscriber?: boolean;
  /** Months subscribed; implies `subscriber` when > 0. Default 1 for subscribers. */
  subMonths?: number;
  broadcaster?: boolean;
  /** The viewer has never chatted here: their first injected message carries `first-msg=1`. */
  firstMessage?: boolean;
  displayName?: string;
}

/** Per-message extras for an injected line. */
export interface InjectExtra {
  /** Bits cheered: adds `bits=N` and the cheer badge (tmi.js then fires `cheer`, not `message`). */
  bits?: number;
  /** A `/me` line: the text is wrapped as `\u0001ACTION text\u0001`. */
  action?: boolean;
  /** Overrides the `first-msg` tag. */
  firstMessage?: boolean;
}

/**
 * Shared Chat's tags of one message (shared-chat.ts): where it was typed (`roomId`), its id there,
 * and the chatter's badges there; `only`: shown only in its source channel.
 */
export interface SourceTags {
  roomId: string;
  id: string;
  badges: string;
  badgeInfo: string;
  only: boolean;
}

/** The channel a line is formatted for. */
export interface ChannelContext {
  channel: string;
  channelId: string;
  now(): number;
}

const LOGIN_RE = /^[a-z0-9_]{1,25}$/;
const COLORS = [
  '#FF0000',
  '#0000FF',
  '#008000',
  '#B22222',
  '#FF7F50',
  '#9ACD32',
  '#FF4500',
  '#2E8B57',
  '#DAA520',
  '#D2691E',
  '#5F9EA0',
  '#1E90FF',
  '#FF69B4',
  '#8A2BE2',
  '#00FF7F',
];
const SUB_BADGE_TIERS = [0, 3, 6, 9, 12, 18, 24, 36, 48, 60, 72, 84, 96, 108, 120];
const CHEER_BADGE_TIERS = [1, 100, 1000, 5000, 10000, 25000, 50000, 75000, 100000];
const BAD_TEXT_RE = /[\r\n\0]/;

/** Throws a clear error unless `login` is a valid Twitch login; returns it lower-cased. */
export function normaliseLogin(login: string, what = 'login'): string {
  const l = typeof login === 'string' ? login.trim().replace(/^#/, '').toLowerCase() : '';
  if (!LOGIN_RE.test(l)) {
    throw new GiftdropError(
      'SANDBOX_CHAT_BAD_INPUT',
      `${what} must be 1-25 characters of a-z, 0-9 or _ (got ${JSON.stringify(login)})`,
    );
  }
  return l;
}

function digest(login: string): Buffer {
  return createHash('sha256').update(`giftdrop-sandbox-user:${login}`).digest();
}

/** A stable 12-digit numeric user id derived from a login. */
export function userIdFor(login: string): string {
  // 12 digits: collision-free in practice for the 50,000-viewer benchmark (a 9-digit space was not).
  return String((digest(login).readUIntBE(0, 6) % 900_000_000_000) + 100_000_000_000);
}

function tier(tiers: number[], value: number): number {
  let out = tiers[0] ?? 0;
  for (const t of tiers) if (t <= value) out = t;
  return out;
}

/** Builds a simulated viewer. `userId` overrides the derived id (used for the broadcaster). */
export function makeViewer(login: string, opts: SimViewerOptions = {}, userId?: string): SimViewer {
  const l = normaliseLogin(login);
  const subMonths = Math.max(0, Math.floor(opts.subMonths ?? 0));
  const subscriber = opts.subscriber ?? subMonths > 0;
  const displayName = opts.displayName ?? l;
  if (/[\s\0]/.test(displayName) || !displayName) {
    throw new GiftdropError(
      'SANDBOX_CHAT_BAD_INPUT',
      `displayName must be non-empty without spaces (got ${JSON.stringify(displayName)})`,
    );
  }
  return {
    login: l,
    userId: userId ?? userIdFor(l),
    displayName,
    roles: {
      broadcaster: opts.broadcaster ?? false,
      moderator: opts.mod ?? false,
      vip: opts.vip ?? false,
      subscriber,
      subMonths: subscriber ? Math.max(1, subMonths) : 0,
      firstMessage: opts.firstMessage ?? false,
    },
    color: COLORS[digest(l)[6]! % COLORS.length]!,
  };
}

/** Throws a clear error for text Twitch could never deliver (empty, or with CR/LF/NUL). */
function checkText(text: string): void {
  if (typeof text !== 'string' || !text.length || BAD_TEXT_RE.test(text)) {
    throw new GiftdropError(
      'SANDBOX_CHAT_BAD_INPUT',
      `chat text must be a non-empty single line (got ${JSON.stringify(String(text)).slice(0, 80)})`,
    );
  }
}

/** The `badges` tag of a chatter with `r` (and the cheer badge for `bits` > 0). */
export function badgesTag(r: ChatRoles, bits = 0): string {
  let badges = '';
  if (r.broadcaster) badges = 'broadcaster/1';
  if (r.moderator) badges += badges ? ',moderator/1' : 'moderator/1';
  if (r.vip) badges += badges ? ',vip/1' : 'vip/1';
  if (r.subscriber) badges += `${badges ? ',' : ''}subscriber/${tier(SUB_BADGE_TIERS, r.subMonths)}`;
  if (bits > 0) badges += `${badges ? ',' : ''}bits/${tier(CHEER_BADGE_TIERS, bits)}`;
  return badges;
}

/** The `badge-info` tag of a chatter with `r`. */
export function badgeInfoTag(r: ChatRoles): string {
  return r.subscriber ? `subscriber/${r.subMonths}` : '';
}

/** The Shared Chat tags, in Twitch's (alphabetical) order, ending before `;subscriber=`. */
function sourceTagsText(source: SourceTags | undefined): string {
  if (!source) return '';
  return (
    `;source-badge-info=${source.badgeInfo};source-badges=${source.badges};source-id=${source.id}` +
    `;source-only=${source.only ? 1 : 0};source-room-id=${source.roomId}`
  );
}

/**
 * The PRIVMSG line (no line ending) Twitch would deliver for `viewer` saying `text` in the
 * channel. `firstMessage` defaults to the viewer's role flag. `viewer.roles` are the chatter's
 * standing in this channel (`badges`, `mod`, `subscriber`); `source` adds Shared Chat's tags.
 */
export function formatViewerPrivmsg(
  ctx: ChannelContext,
  viewer: SimViewer,
  text: string,
  extra: InjectExtra = {},
  id: string = randomUUID(),
  source?: SourceTags,
): string {
  checkText(text);
  const r = viewer.roles;
  const bits = extra.bits !== undefined ? Math.floor(extra.bits) : 0;
  if (extra.bits !== undefined && !(bits > 0)) {
    throw new GiftdropError('SANDBOX_CHAT_BAD_INPUT', `bits must be a positive integer (got ${extra.bits})`);
  }
  const badges = badgesTag(r, bits);
  // Written out in Twitch's (alphabetical) order; only display-name can need escaping.
  const tags =
    `@badge-info=${badgeInfoTag(r)};badges=${badges}` +
    `${bits > 0 ? `;bits=${bits}` : ''};color=${viewer.color ?? ''};display-name=${escapeTag(viewer.displayName)}` +
    `;emotes=;first-msg=${(extra.firstMessage ?? r.firstMessage) ? 1 : 0};flags=;id=${id}` +
    `;mod=${r.moderator ? 1 : 0};returning-chatter=0;room-id=${ctx.channelId}${sourceTagsText(source)}` +
    `;subscriber=${r.subscriber ? 1 : 0};tmi-sent-ts=${ctx.now()};turbo=0;user-id=${viewer.userId}` +
    `;user-type=${r.moderator ? 'mod' : ''}${r.vip ? ';vip=1' : ''} `;
  const body = extra.action ? `\u0001ACTION ${text}\u0001` : text;
  const l = viewer.login;
  return `${tags}:${l}!${l}@${l}.tmi.twitch.tv PRIVMSG #${ctx.channel} :${body}`;
}
