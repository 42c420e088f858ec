/**
 * The entrants of one draw, held compactly: one row per distinct user id in parallel columns of
 * typed arrays and byte buffers, with no heap string or object per entrant in the common case.
 * A decimal user id of up to 15 digits (every Twitch id) is held only as its two digit keys
 * (fairness/digit-keys.ts), a login only as its UTF-8 bytes, a display name that differs from the login as
 * UTF-8 bytes; weight, role flags, subscription months and entry time are numbers in typed
 * arrays; an index maps user id to row (id-index.ts). Only the odd row keeps a string, in a
 * side map: a user id that is not such a decimal id, a login over 255 UTF-8 bytes, a login or
 * display name that is not well-formed UTF-16 (its bytes could not give it back exactly; they are
 * kept as well). Why: a flood of new entrants then leaves nothing for the garbage collector to
 * copy or mark (two strings per entrant cost about 2 us of collector work each, measured by hand
 * with bench/chat-sync.ts, since removed: 95d36b5), and a million entrants cost a few dozen bytes each. The freeze at close
 * (canonical-table.ts) sorts and digests these columns directly.
 *
 * A Shared Chat partner channel (the channel a partner viewer entered from, partner entries on)
 * is kept in a side map by row, so this channel's entrants cost nothing for it.
 *
 * Contract: rows are appended in entry order and never removed or reordered; `add` keeps the
 * first entry of a user id and returns false for later ones. A row's fields never change once
 * added (the journal reads them later); tickets granted afterwards (channel points, bits:
 * giveaway/tickets.ts) go to a separate column (`addTickets`), journaled by their grants, and
 * count in `ticketsAt`, `entrant().weight` and the freeze's weights (`columns().weights`), never
 * in `weightAt` (the row as journaled). Every string read back
 * (`userIdAt`, `loginAt`, `displayNameAt`, `entrant`) equals the one added, and is built on each
 * read (callers on hot paths read the columns instead). Does not: validate fairness inputs
 * (fairness/procedure.ts does at close), decide eligibility or persist.
 */
import type { ChatRoles } from '../../shared/chat.js';
import { ownedString } from './owned-string.js';
import { writeDigits } from '../../fairness/index.js';
import { IdIndex } from './id-index.js';
import type { EntrantRows } from '../entrant-rows.js';
import type { Entrant } from '../model.js';

const BROADCASTER = 1;
const MODERATOR = 2;
const VIP = 4;
const SUBSCRIBER = 8;
const FIRST_MESSAGE = 16;
const MAX_MONTHS = 0xffff;
/** A display name's UTF-8 bytes must fit nameLen (Uint16Array). */
const MAX_NAME_BYTES = 0xffff;
/** Login flags: fails the fairness field check (empty, TAB, CR or LF). */
export const LOGIN_UNCHECKED = 1;
/** Login flags: over 255 UTF-8 bytes: kept only as a string (loginLen 0). */
export const LOGIN_STRING_ONLY = 2;
/** Login flags: has characters beyond ASCII (its lower case may differ in length). */
export const LOGIN_NON_ASCII = 4;
/**
 * Login flags: not well-formed UTF-16 (a lone surrogate), so its UTF-8 bytes (with U+FFFD, as
 * every UTF-8 writer gives them) cannot give it back: the string is kept too, for loginAt.
 */
export const LOGIN_KEEPS_STRING = 8;
const TAB_CR_LF = /[\t\r\n]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Digits of a user id written back from its key (fairness/digit-keys.ts); one scratch buffer. */
const DIGITS = Buffer.allocUnsafe(16);

export function packRoles(r: ChatRoles): number {
  return (
    (r.broadcaster ? BROADCASTER : 0) |
    (r.moderator ? MODERATOR : 0) |
    (r.vip ? VIP : 0) |
    (r.subscriber ? SUBSCRIBER : 0) |
    (r.firstMessage ? FIRST_MESSAGE : 0)
  );
}

export function unpackRoles(bits: number, subMonths: number): ChatRoles {
  return {
    broadcaster: (bits & BROADCASTER) !== 0,
    moderator: (bits & MODERATOR) !== 0,
    vip: (bits & VIP) !== 0,
    subscriber: (bits & SUBSCRIBER) !== 0,
    subMonths,
    firstMessage: (bits & FIRST_MESSAGE) !== 0,
  };
}

function grown<T extends Float64Array | Uint8Array | Uint16Array | Uint32Array>(a: T, size: number): T {
  const next = new (a.constructor as new (n: number) => T)(size);
  next.set(a);
  return next;
}

/** Column arrays by row (see EntrantTable.columns). */
export interface TableColumns {
  keyHi: Uint32Array;
  keyLo: Uint32Array;
  weights: Float64Array;
  loginBytes: Buffer;
  loginStart: Float64Array;
  loginLen: Uint8Array;
  /** LOGIN_UNCHECKED | LOGIN_STRING_ONLY | LOGIN_NON_ASCII | LOGIN_KEEPS_STRING. */
  loginFlags: Uint8Array;
  /** packRoles bits and subscription months. */
  roleBits: Uint8Array;
  months: Uint16Array;
}

/**
 * An entrant table's columns by row, read-only, valid until the next row is added: a decimal user
 * id's digit keys (fairness/digit-keys.ts; keyHi 0: read userIdAt); a login's UTF-8 bytes at
 * loginBytes[loginStart .. + loginLen) when its loginFlags are 0 (else read loginAt); a display
 * name unlike the login at names[nameAt .. + nameLen) (nameLen 0: same as the login).
 */
export interface EntrantRowBytes {
  keyHi: Uint32Array;
  keyLo: Uint32Array;
  loginBytes: Uint8Array;
  loginStart: Float64Array;
  loginLen: Uint8Array;
  loginFlags: Uint8Array;
  names: Uint8Array;
  nameAt: Float64Array;
  nameLen: Uint16Array;
  weights: Float64Array;
  /** packRoles bits. */
  roleBits: Uint8Array;
  /** Subscription months. */
  months: Uint16Array;
  enteredAt: Float64Array;
}

/** The entrants of one draw in columns, addressed by row (entry order). */
export class EntrantTable implements EntrantRows {
  private readonly index = new IdIndex();
  private rows = 0;
  /** User ids that have no digit key (keyHi 0), by row. */
  private readonly otherIds = new Map<number, string>();
  /** Display names that are not well-formed UTF-16 (their bytes cannot give them back), by row. */
  private readonly stringNames = new Map<number, string>();
  /** Logins flagged LOGIN_STRING_ONLY or LOGIN_KEEPS_STRING, by row. */
  private readonly stringLogins = new Map<number, string>();
  /** Shared Chat partner channels of the rows whose entrant entered from one, by row. */
  private readonly partnerChannels = new Map<number, string>();
  /** Display names that differ from the login, as UTF-8 bytes; a row's slice is nameAt..+nameLen. */
  private names = Buffer.allocUnsafe(1024);
  private namesUsed = 0;
  private nameAt = new Float64Array(64);
  /** Byte length of the row's display name; 0 = same as the login. */
  private nameLen = new Uint16Array(64);
  private weights = new Float64Array(64);
  /** Tickets granted after the row was added (addTickets), by row; allocated on the first grant. */
  private extra: Float64Array | undefined;
  private roleBits = new Uint8Array(64);
  private months = new Uint16Array(64);
  private enteredAt = new Float64Array(64);
  /** Digit-id sort keys (fairness/digit-keys.ts; keyHi 0 = not a decimal id of up to 15 digits). */
  private keyHi = new Uint32Array(64);
  private keyLo = new Uint32Array(64);
  /** Logins as UTF-8 bytes: a row's are loginBytes[loginStart .. loginStart + loginLen). */
  private loginBytes = Buffer.allocUnsafe(1024);
  private loginBytesUsed = 0;
  private loginStart = new Float64Array(64);
  private loginLen = new Uint8Array(64);
  private loginFlags = new Uint8Array(64);

  constructor(entrants: Iterable<Entrant> = []) {
    for (const e of entrants) this.add(e);
  }

  get size(): number {
    return this.rows;
  }

  has(userId: string): boolean {
    return this.index.has(userId);
  }

  /** Adds an entrant once per user id; false when that user id is already in. */
  add(e: Entrant): boolean {
    return this.addFields(
      e.userId,
      e.login,
      e.displayName,
      e.weight,
      packRoles(e.roles),
      e.roles.subMonths,
      e.enteredAt,
      e.partnerChannelId,
    );
  }

  /**
   * `add` from the entrant's fields (roleBits as packRoles makes them), with no Entrant object:
   * the `!enter` path. False when that user id is already in. `partnerChannelId`: the Shared Chat
   * partner channel the entrant entered from (undefined for this channel's viewers).
   */
  addFields(
    userId: string,
    login: string,
    displayName: string,
    weight: number,
    roleBits: number,
    subMonths: number,
    enteredAt: number,
    partnerChannelId?: string,
  ): boolean {
    // (checked before the id is recorded, so a refused entrant leaves no trace)
    if (displayName.length > MAX_NAME_BYTES / 3 && Buffer.byteLength(displayName, 'utf8') > MAX_NAME_BYTES) {
      throw new RangeError('display name too long');
    }
    const row = this.rows;
    if (!this.index.add(userId, row)) return false;
    if (row === this.weights.length) this.grow(row * 2);
    this.rows = row + 1;
    this.keyHi[row] = this.index.addedHi;
    this.keyLo[row] = this.index.addedLo;
    if (this.keyHi[row] === 0) this.otherIds.set(row, ownedString(userId));
    this.storeName(row, displayName === login ? '' : displayName);
    this.weights[row] = weight;
    this.roleBits[row] = roleBits;
    this.months[row] = Math.max(0, Math.min(MAX_MONTHS, Math.floor(subMonths) || 0));
    this.enteredAt[row] = enteredAt;
    this.storeLogin(row, login);
    if (partnerChannelId !== undefined) this.partnerChannels.set(row, ownedString(partnerChannelId));
    return true;
  }

  private storeLogin(row: number, login: string): void {
    const n = login.length;
    this.loginStart[row] = this.loginBytesUsed;
    let flags = n === 0 ? LOGIN_UNCHECKED : 0;
    if (this.loginBytesUsed + n * 3 > this.loginBytes.length) {
      const next = Buffer.allocUnsafe(Math.max(this.loginBytes.length * 2, this.loginBytesUsed + n * 3));
      this.loginBytes.copy(next, 0, 0, this.loginBytesUsed);
      this.loginBytes = next;
    }
    const buf = this.loginBytes;
    let pos = this.loginBytesUsed;
    let ascii = true;
    for (let i = 0; i < n && ascii; i++) {
      const c = login.charCodeAt(i);
      if (c > 0x7f) ascii = false;
      else {
        if (c === 0x09 || c === 0x0a || c === 0x0d) flags |= LOGIN_UNCHECKED;
        buf[pos++] = c;
      }
    }
    if (!ascii) {
      flags |= LOGIN_NON_ASCII;
      if (TAB_CR_LF.test(login)) flags |= LOGIN_UNCHECKED;
    }
    const bytes = ascii ? n : buf.write(login, this.loginBytesUsed, 'utf8');
    if (bytes > 0xff) {
      flags |= LOGIN_STRING_ONLY;
      this.loginLen[row] = 0;
      this.stringLogins.set(row, ownedString(login));
    } else {
      if (!ascii && LONE_SURROGATE.test(login)) {
        flags |= LOGIN_KEEPS_STRING;
        this.stringLogins.set(row, ownedString(login));
      }
      this.loginBytesUsed += bytes;
      this.loginLen[row] = bytes;
    }
    this.loginFlags[row] = flags;
  }

  private storeName(row: number, name: string): void {
    this.nameAt[row] = this.namesUsed;
    if (name === '') {
      this.nameLen[row] = 0;
      return;
    }
    // at most MAX_NAME_BYTES (add checked); room for the worst case, then ASCII byte by byte
    if (this.namesUsed + name.length * 3 > this.names.length) {
      const next = Buffer.allocUnsafe(Math.max(this.names.length * 2, this.namesUsed + name.length * 3));
      this.names.copy(next, 0, 0, this.namesUsed);
      this.names = next;
    }
    const buf = this.names;
    const start = this.namesUsed;
    let pos = start;
    for (let i = 0; i < name.length; i++) {
      const c = name.charCodeAt(i);
      if (c > 0x7f) {
        pos = start + buf.write(name, start, 'utf8');
        if (LONE_SURROGATE.test(name)) this.stringNames.set(row, ownedString(name));
        break;
      }
      buf[pos++] = c;
    }
    this.namesUsed = pos;
    this.nameLen[row] = pos - start;
  }

  /** Adds tickets to an entrant's weight (a grant after entry); false when that user id is not in. */
  addTickets(userId: string, tickets: number): boolean {
    const row = this.index.rowOf(userId);
    if (row < 0) return false;
    this.extra ??= new Float64Array(this.weights.length);
    this.extra[row]! += tickets;
    return true;
  }

  /** A row's tickets: its weight as added plus every later grant (what the picks use). */
  ticketsAt(row: number): number {
    return this.weights[row]! + (this.extra ? this.extra[row]! : 0);
  }

  private grow(size: number): void {
    if (this.extra) this.extra = grown(this.extra, size);
    this.nameAt = grown(this.nameAt, size);
    this.nameLen = grown(this.nameLen, size);
    this.weights = grown(this.weights, size);
    this.roleBits = grown(this.roleBits, size);
    this.months = grown(this.months, size);
    this.enteredAt = grown(this.enteredAt, size);
    this.keyHi = grown(this.keyHi, size);
    this.keyLo = grown(this.keyLo, size);
    this.loginStart = grown(this.loginStart, size);
    this.loginLen = grown(this.loginLen, size);
    this.loginFlags = grown(this.loginFlags, size);
  }

  /**
   * The freeze's view of the columns (read-only by contract; canonical-table.ts), with `weights`
   * the tickets (ticketsAt: a new array when grants were added, else the column itself). Valid
   * until the next `add` or grant.
   */
  columns(): TableColumns {
    let weights = this.weights;
    const extra = this.extra;
    if (extra) {
      weights = new Float64Array(this.rows);
      for (let row = 0; row < this.rows; row++) weights[row] = this.weights[row]! + extra[row]!;
    }
    return {
      keyHi: this.keyHi,
      keyLo: this.keyLo,
      weights,
      loginBytes: this.loginBytes,
      loginStart: this.loginStart,
      loginLen: this.loginLen,
      loginFlags: this.loginFlags,
      roleBits: this.roleBits,
      months: this.months,
    };
  }

  /** The columns as EntrantRowBytes (journal-line.ts copies rows from them). Valid until the next `add`. */
  rowBytes(): EntrantRowBytes {
    return {
      keyHi: this.keyHi,
      keyLo: this.keyLo,
      loginBytes: this.loginBytes,
      loginStart: this.loginStart,
      loginLen: this.loginLen,
      loginFlags: this.loginFlags,
      names: this.names,
      nameAt: this.nameAt,
      nameLen: this.nameLen,
      weights: this.weights,
      roleBits: this.roleBits,
      months: this.months,
      enteredAt: this.enteredAt,
    };
  }

  rowOfUser(userId: string): number | undefined {
    const row = this.index.rowOf(userId);
    return row < 0 ? undefined : row;
  }

  userIdAt(row: number): string {
    this.checkRow(row);
    const h = this.keyHi[row]!;
    if (h === 0) return this.otherIds.get(row)!;
    return DIGITS.toString('latin1', 0, writeDigits(DIGITS, 0, h, this.keyLo[row]!));
  }

  loginAt(row: number): string {
    this.checkRow(row);
    const flags = this.loginFlags[row]!;
    if ((flags & (LOGIN_STRING_ONLY | LOGIN_KEEPS_STRING)) !== 0) return this.stringLogins.get(row)!;
    const at = this.loginStart[row]!;
    return this.loginBytes.toString((flags & LOGIN_NON_ASCII) !== 0 ? 'utf8' : 'latin1', at, at + this.loginLen[row]!);
  }

  displayNameAt(row: number): string {
    const len = this.nameLen[row]!;
    if (len === 0) return this.loginAt(row);
    if (this.stringNames.size !== 0 && this.stringNames.has(row)) return this.stringNames.get(row)!;
    const at = this.nameAt[row]!;
    return this.names.toString('utf8', at, at + len);
  }

  private checkRow(row: number): void {
    if (!(row >= 0 && row < this.rows)) throw new RangeError(`no entrant row ${row} (the table has ${this.rows})`);
  }

  weightAt(row: number): number {
    return this.weights[row]!;
  }

  /** Role flags of a row (see packRoles). */
  roleBitsAt(row: number): number {
    return this.roleBits[row]!;
  }

  subMonthsAt(row: number): number {
    return this.months[row]!;
  }

  rolesAt(row: number): ChatRoles {
    return unpackRoles(this.roleBits[row]!, this.months[row]!);
  }

  enteredAtOf(row: number): number {
    return this.enteredAt[row]!;
  }

  partnerChannelAt(row: number): string | undefined {
    return this.partnerChannels.size === 0 ? undefined : this.partnerChannels.get(row);
  }

  /** Entrants by the Shared Chat partner channel they entered from (this channel's viewers not counted). */
  partnerCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const channel of this.partnerChannels.values()) counts.set(channel, (counts.get(channel) ?? 0) + 1);
    return counts;
  }

  entrant(row: number): Entrant {
    const e: Entrant = {
      userId: this.userIdAt(row),
      login: this.loginAt(row),
      displayName: this.displayNameAt(row),
      weight: this.ticketsAt(row),
      roles: this.rolesAt(row),
      enteredAt: this.enteredAt[row]!,
    };
    const partner = this.partnerChannelAt(row);
    if (partner !== undefined) e.partnerChannelId = partner;
    return e;
  }

  /** The entrant with this user id, materialised; undefined when not in. */
  get(userId: string): Entrant | undefined {
    const row = this.index.rowOf(userId);
    return row < 0 ? undefined : this.entrant(row);
  }

  displayNameOf(userId: string): string | undefined {
    const row = this.index.rowOf(userId);
    return row < 0 ? undefined : this.displayNameAt(row);
  }

  /** Every entrant in entry order, one object at a time (for read-only views such as the dashboard). */
  *values(): IterableIterator<Entrant> {
    for (let row = 0; row < this.rows; row++) yield this.entrant(row);
  }

  /** The first entrant whose login equals `login` (case-insensitive). */
  findByLogin(login: string): Entrant | undefined {
    const wanted = login.toLowerCase();
    for (let row = 0; row < this.rows; row++) {
      if (this.loginAt(row).toLowerCase() === wanted) return this.entrant(row);
    }
    return undefined;
  }
}
