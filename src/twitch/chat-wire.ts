/**
 * The wire between the chat worker (tmi-host.ts, where tmi.js reads the socket and parses IRC)
 * and the bot's thread (tmi-worker.ts): what each side posts, and the compact form of chat lines.
 *
 * Why a compact form: a structured clone of tmi.js's tags object costs the receiving thread about
 * as much as tmi.js's own parsing saved it, and even a clone of six strings per line costs the
 * worker ~0.4 us a line; the lines of one batch go as bytes in transferred buffers instead (no
 * copy between the threads), and the bot's thread decodes a string only when it is read.
 *
 * Contract:
 * - the worker posts `HostPost`s: a `batch` holds, in tmi.js's order, the channel's chat lines
 *   (`LineColumns`) and the other events (`events`, each placed after the first `at` lines), then
 *   the replies to commands made before it; `token` asks for the chat token (read at every login);
 * - the bot's thread posts `HostCommand`s;
 * - `LineWriter.add` (worker) writes a parsed line (parse.ts TagsMessage, read there with a
 *   receive time of 0) and `WireMessage.read` (bot's thread) gives back a ChatMessage with the
 *   same values, its `receivedAt` the bot thread's clock when the batch arrived (also the send time of a line
 *   without a usable `tmi-sent-ts`). Roles travel as packed bits (the journal's layout, see
 *   entrant-table.ts packRoles, plus `action`) with the subscriber months.
 * Owns no thread, socket or timer.
 */
import type { ChatMessage, ChatRoles } from '../shared/chat.js';
import type { TmiTags } from './parse.js';

/** pino's level names (a worker's log line keeps its level). */
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
  /** `#channel`, lower case. */
  channelKey: string;
  /** The bot's login (tmi.js's username), lower case. */
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

/** Strings per line, in this order. */
const USER_ID = 0;
const LOGIN = 1;
const TEXT = 2;
/** The display-name tag ('' when it is the login or absent). */
const NAME = 3;
const MESSAGE_ID = 4;
const ROOM_ID = 5;
/** Numbers per line: tmi-sent-ts (0 when not usable), flags, subscriber months, bits. */
const NUMBERS = 4;

const BROADCASTER = 1;
const MODERATOR = 2;
const VIP = 4;
const SUBSCRIBER = 8;
const FIRST_MESSAGE = 16;
const ACTION = 32;

/** A string's 4-byte header: its byte length, with this bit set when the bytes are UTF-8 (else ASCII). */
const UTF8 = 0x8000_0000;

/**
 * A batch's chat lines, made to be transferred (no copy between the threads): each line's six
 * strings as a 4-byte header (byte length | UTF8) and their bytes in `bytes` from `starts[i]`,
 * its four numbers in `numbers` from 4 * i.
 */
export interface LineColumns {
  count: number;
  bytes: Uint8Array<ArrayBuffer>;
  starts: Uint32Array<ArrayBuffer>;
  numbers: Float64Array<ArrayBuffer>;
}

/** A received batch's lines, their bytes seen as a Buffer (the bot's thread reads them so). */
export type ReadableLines = LineColumns & { bytes: Buffer };

export function readableLines(lines: LineColumns): ReadableLines {
  return { ...lines, bytes: Buffer.from(lines.bytes.buffer, lines.bytes.byteOffset, lines.bytes.byteLength) };
}

/** The worker's side: lines written as they are routed, taken as one LineColumns per batch. */
export class LineWriter {
  private bytes = Buffer.allocUnsafe(64 * 1024);
  private used = 0;
  private starts: Uint32Array<ArrayBuffer> = new Uint32Array(1024);
  private numbers: Float64Array<ArrayBuffer> = new Float64Array(4 * 1024);
  count = 0;

  /** Appends `m` (read with a receive time of 0, so `sentAt` is 0 without a usable tag). */
  add(m: ChatMessage): void {
    const i = this.count;
    if (i === this.starts.length) {
      this.starts = grown(this.starts, i * 2);
      this.numbers = grown(this.numbers, i * 2 * NUMBERS);
    }
    this.starts[i] = this.used;
    const name = m.displayName;
    this.string(m.userId);
    this.string(m.login);
    this.string(m.text);
    this.string(name === m.login ? '' : name);
    this.string(m.id);
    this.string(m.channelId ?? '');
    const roles = m.roles;
    const k = i * NUMBERS;
    this.numbers[k] = m.sentAt;
    this.numbers[k + 1] =
      (roles.broadcaster ? BROADCASTER : 0) |
      (roles.moderator ? MODERATOR : 0) |
      (roles.vip ? VIP : 0) |
      (roles.subscriber ? SUBSCRIBER : 0) |
      (roles.firstMessage ? FIRST_MESSAGE : 0) |
      (m.action ? ACTION : 0);
    this.numbers[k + 2] = roles.subMonths;
    this.numbers[k + 3] = m.bits;
    this.count = i + 1;
  }

  /** The lines written since the last take, in buffers of their own (to be transferred), and a fresh start. */
  take(): LineColumns {
    const out: LineColumns = {
      count: this.count,
      bytes: new Uint8Array(this.bytes.subarray(0, this.used)),
      starts: this.starts.slice(0, this.count),
      numbers: this.numbers.slice(0, this.count * NUMBERS),
    };
    this.used = 0;
    this.count = 0;
    return out;
  }

  /** A string's header and bytes: ASCII copied byte by byte, anything else as UTF-8. */
  private string(s: string): void {
    const n = s.length;
    if (this.used + 4 + n * 3 > this.bytes.length) {
      const next = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.used + 4 + n * 3));
      this.bytes.copy(next, 0, 0, this.used);
      this.bytes = next;
    }
    const b = this.bytes;
    const at = this.used + 4;
    let p = at;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 0x7f) {
        const len = b.write(s, at, 'utf8');
        b.writeUInt32LE((len | UTF8) >>> 0, this.used);
        this.used = at + len;
        return;
      }
      b[p++] = c;
    }
    b.writeUInt32LE(n, this.used);
    this.used = p;
  }
}

function grown<T extends Uint32Array<ArrayBuffer> | Float64Array<ArrayBuffer>>(a: T, size: number): T {
  const next = new (a.constructor as new (n: number) => T)(size);
  next.set(a);
  return next;
}

/**
 * A chat line read back from a batch (see the module header). The strings are decoded when first
 * read: a repeated `!enter` needs only its user id and text. Read-only.
 */
export class WireMessage implements ChatMessage {
  readonly channel: string;
  readonly sentAt: number;
  readonly receivedAt: number;
  readonly bits: number;
  readonly action: boolean;
  readonly self = false;
  readonly #lines: ReadableLines;
  readonly #i: number;
  readonly #flags: number;
  readonly #months: number;
  #roles: ChatRoles | undefined;
  #userId: string | undefined;
  #login: string | undefined;
  #text: string | undefined;

  private constructor(channel: string, lines: ReadableLines, i: number, receivedAt: number) {
    const k = i * NUMBERS;
    const n = lines.numbers;
    this.channel = channel;
    this.#lines = lines;
    this.#i = i;
    const sent = n[k]!;
    this.sentAt = sent > 0 ? sent : receivedAt;
    this.receivedAt = receivedAt;
    this.#flags = n[k + 1]!;
    this.#months = n[k + 2]!;
    this.bits = n[k + 3]!;
    this.action = (this.#flags & ACTION) !== 0;
  }

  /** Line `i` of `lines`, for `channel` (its login, without `#`), read when the batch arrived at `receivedAt`. */
  static read(channel: string, lines: ReadableLines, i: number, receivedAt: number): WireMessage {
    return new WireMessage(channel, lines, i, receivedAt);
  }

  get userId(): string {
    return (this.#userId ??= this.#string(USER_ID));
  }

  get login(): string {
    return (this.#login ??= this.#string(LOGIN));
  }

  get text(): string {
    return (this.#text ??= this.#string(TEXT));
  }

  get displayName(): string {
    return this.#string(NAME) || this.login;
  }

  get id(): string {
    return this.#string(MESSAGE_ID);
  }

  get channelId(): string | undefined {
    return this.#string(ROOM_ID) || undefined;
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

  /** String `k` of the line. */
  #string(k: number): string {
    const b = this.#lines.bytes;
    let at = this.#lines.starts[this.#i]!;
    for (let j = 0; j < k; j++) at += 4 + (readHeader(b, at) & ~UTF8);
    const header = readHeader(b, at);
    const len = header & ~UTF8;
    if (len === 0) return '';
    const start = at + 4;
    return b.toString(header & UTF8 ? 'utf8' : 'latin1', start, start + len);
  }
}

function readHeader(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
}
