/**
 * The wire between the chat worker (tmi-host.ts, where tmi.js reads the socket and parses IRC)
 * and the bot's thread (tmi-worker.ts): what each side posts, and the compact form of chat lines.
 *
 * Why a compact form: a structured clone of tmi.js's tags object costs the receiving thread about
 * as much as tmi.js's own parsing saved it; the lines of one batch go as columns instead (six
 * strings and four numbers per line in two flat arrays), which the bot's thread reads for about
 * 0.2 us a line.
 *
 * Contract:
 * - the worker posts `HostPost`s: a `batch` holds, in tmi.js's order, the channel's chat lines
 *   (`LineColumns`) and the other events (`events`, each placed after the first `at` lines), then
 *   the replies to commands made before it; `token` asks for the chat token (read at every login);
 * - the bot's thread posts `HostCommand`s;
 * - `addLine` (worker) writes a parsed line (parse.ts TagsMessage, read there with a receive time
 *   of 0) and `WireMessage.read` (bot's thread) gives back a ChatMessage with the same values,
 *   its `receivedAt` the bot thread's clock when the batch arrived (also the send time of a line
 *   without a usable `tmi-sent-ts`). Roles travel as packed bits (the journal's layout, see
 *   entrant-table.ts packRoles, plus `action`) with the subscriber months.
 * Owns no thread, socket or timer.
 */
import type { ChatMessage, ChatRoles } from '../shared/chat.js';
import type { TmiTags } from './parse.js';

/** pino's level numbers (trace 10 ... fatal 60). */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** The tmi.js options the worker builds its client from (the token and the logger are not data). */
export interface HostOptions {
  server: string;
  port: number;
  secure: boolean;
  reconnectInterval: number;
  maxReconnectInterval: number;
  /** tmi.js's PONG deadline (ms). */
  timeout: number;
  joinInterval: number;
  username: string;
  /** `#channel`, lower case. */
  channelKey: string;
  botLogin: string;
  /** The lowest pino level the bot's logger writes (its levelVal); lower ones are not posted. */
  logLevel: number;
}

/** An event of the channel or the connection, in the order tmi.js reported it. */
export type HostEvent =
  | { at: number; kind: 'roomstate'; tags: TmiTags }
  | { at: number; kind: 'notice' | 'automod'; msgId: string; text: string }
  | { at: number; kind: 'mod'; mod: boolean }
  | { at: number; kind: 'userstate'; channel: string | undefined; tags: Record<string, unknown> | undefined }
  | { at: number; kind: 'pong'; token: string | undefined }
  | { at: number; kind: 'connecting' | 'reconnect' }
  | { at: number; kind: 'disconnected'; reason: string }
  | { at: number; kind: 'log'; level: LogLevel; obj: Record<string, unknown>; msg: string };

/** A command's outcome: `error` is what tmi.js rejected with (often a plain string). */
export interface HostReply {
  id: number;
  ok: boolean;
  error?: unknown;
}

export type HostPost =
  | { kind: 'batch'; lines: LineColumns; events: HostEvent[]; replies: HostReply[] }
  | { kind: 'token'; id: number };

export type HostCommand =
  | { op: 'connect' | 'disconnect'; id: number }
  | { op: 'raw'; id: number; line: string }
  | { op: 'reconnect'; on: boolean }
  | { op: 'token'; id: number; token: string };

/** Strings per line: userId, login, text, display-name tag ('' for none), id tag, room-id tag. */
const STRINGS = 6;
/** Numbers per line: tmi-sent-ts (0 when not usable), flags, subscriber months, bits. */
const NUMBERS = 4;

const BROADCASTER = 1;
const MODERATOR = 2;
const VIP = 4;
const SUBSCRIBER = 8;
const FIRST_MESSAGE = 16;
const ACTION = 32;

/** A batch's chat lines as two flat arrays. */
export interface LineColumns {
  strings: string[];
  numbers: number[];
}

export function emptyLines(): LineColumns {
  return { strings: [], numbers: [] };
}

export function lineCount(lines: LineColumns): number {
  return lines.numbers.length / NUMBERS;
}

/** Appends `m` (read with a receive time of 0, so `sentAt` is 0 without a usable tag). */
export function addLine(lines: LineColumns, m: ChatMessage): void {
  const roles = m.roles;
  const name = m.displayName;
  lines.strings.push(m.userId, m.login, m.text, name === m.login ? '' : name, m.id, m.channelId ?? '');
  const flags =
    (roles.broadcaster ? BROADCASTER : 0) |
    (roles.moderator ? MODERATOR : 0) |
    (roles.vip ? VIP : 0) |
    (roles.subscriber ? SUBSCRIBER : 0) |
    (roles.firstMessage ? FIRST_MESSAGE : 0) |
    (m.action ? ACTION : 0);
  lines.numbers.push(m.sentAt, flags, roles.subMonths, m.bits);
}

/** A chat line read back from a batch's columns (see the module header). Read-only. */
export class WireMessage implements ChatMessage {
  readonly channel: string;
  readonly userId: string;
  readonly login: string;
  readonly text: string;
  readonly displayName: string;
  readonly id: string;
  readonly channelId: string | undefined;
  readonly sentAt: number;
  readonly receivedAt: number;
  readonly bits: number;
  readonly action: boolean;
  readonly self = false;
  readonly #flags: number;
  readonly #months: number;
  #roles: ChatRoles | undefined;

  private constructor(channel: string, s: string[], n: number[], i: number, receivedAt: number) {
    const at = i * STRINGS;
    const k = i * NUMBERS;
    this.channel = channel;
    this.userId = s[at]!;
    this.login = s[at + 1]!;
    this.text = s[at + 2]!;
    this.displayName = s[at + 3] || this.login;
    this.id = s[at + 4]!;
    this.channelId = s[at + 5] || undefined;
    const sent = n[k]!;
    this.sentAt = sent > 0 ? sent : receivedAt;
    this.receivedAt = receivedAt;
    this.#flags = n[k + 1]!;
    this.#months = n[k + 2]!;
    this.bits = n[k + 3]!;
    this.action = (this.#flags & ACTION) !== 0;
  }

  /** Line `i` of `lines`, for `channel` (its login, without `#`), read when the batch arrived at `receivedAt`. */
  static read(channel: string, lines: LineColumns, i: number, receivedAt: number): WireMessage {
    return new WireMessage(channel, lines.strings, lines.numbers, i, receivedAt);
  }

  get roles(): ChatRoles {
    const f = this.#flags;
    return (this.#roles ??= {
      broadcaster: (f & BROADCASTER) !== 0,
      moderator: (f & MODERATOR) !== 0,
      vip: (f & VIP) !== 0,
      subscriber: (f & SUBSCRIBER) !== 0,
      subMonths: this.#months,
      firstMessage: (f & FIRST_MESSAGE) !== 0,
    });
  }
}
