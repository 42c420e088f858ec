/**
 * One journal line of an entrant (storage/journal.ts), built without the generic JSON serialiser on the
 * `!enter` hot path.
 *
 * Line formats (a reader takes both, line by line, so an old journal goes on after an upgrade):
 * - compact (written for every standard entrant): a JSON array of seven values,
 *   `[userId, login, displayName, weight, roleBits, subMonths, enteredAt]`, where roleBits is
 *   broadcaster 1 | moderator 2 | vip 4 | subscriber 8 | firstMessage 16 (entrant-table.ts
 *   packRoles; the format's test pins these values). Exactly `JSON.stringify` of that array. About a quarter of the object line's
 *   bytes, and a torn line never parses (it lacks its closing `]`).
 * - object: `JSON.stringify(entrant)`. Written for an entrant that is not standard (extra fields,
 *   such as a Shared Chat partner viewer's `partnerChannelId`, non-finite numbers, non-boolean
 *   flags), so nothing an entrant carries is lost; older versions wrote every line this way.
 * A standard entrant has exactly the fields userId, login, displayName (strings), weight,
 * enteredAt (finite numbers) and roles with exactly broadcaster, moderator, vip, subscriber,
 * firstMessage (booleans) and subMonths (a finite number).
 * `entrantLine` returns the line as a string; `LineBytes.addEntrant` writes the same line's UTF-8
 * bytes (and a newline) straight into a growing buffer, with no string built when the entrant's
 * strings are printable ASCII (other strings go through JSON.stringify); `LineBytes.addRow` does
 * the same for a row of a draw's entrant table, read from its columns (no object built). `entrantOfLine` turns a
 * parsed line of either format back into the entrant's fields (the caller validates them).
 */
import { writeDigits } from '../../fairness/index.js';
import { EntrantTable, packRoles, unpackRoles, type EntrantRowBytes } from './entrant-table.js';
import type { EntrantRows } from '../entrant-rows.js';
import type { Entrant } from '../model.js';

/** Every role bit set (the layout is packRoles'; storage-entrant-line.test.ts pins it as the format). */
const ALL_ROLE_BITS = 31;

/** Own enumerable keys (inherited ones too) of `o`, counted without building an array. */
function keyCount(o: object): number {
  let n = 0;
  for (const _key in o) n++;
  return n;
}

function standard(e: Entrant): boolean {
  const r = e.roles as Entrant['roles'] | null | undefined;
  return (
    typeof e.userId === 'string' &&
    typeof e.login === 'string' &&
    typeof e.displayName === 'string' &&
    Number.isFinite(e.weight) &&
    Number.isFinite(e.enteredAt) &&
    typeof r === 'object' &&
    r !== null &&
    typeof r.broadcaster === 'boolean' &&
    typeof r.moderator === 'boolean' &&
    typeof r.vip === 'boolean' &&
    typeof r.subscriber === 'boolean' &&
    typeof r.firstMessage === 'boolean' &&
    Number.isFinite(r.subMonths) &&
    keyCount(e) === 6 &&
    keyCount(r) === 6
  );
}

/** The journal line of `e`: the compact array for a standard entrant, else the JSON object. */
export function entrantLine(e: Entrant): string {
  if (!standard(e)) return JSON.stringify(e);
  return JSON.stringify([
    e.userId,
    e.login,
    e.displayName,
    e.weight,
    packRoles(e.roles),
    e.roles.subMonths,
    e.enteredAt,
  ]);
}

/**
 * The entrant a parsed journal line describes: a compact line's array as an Entrant-shaped object
 * (fields in the standard order), an object line as it is; undefined for an array of any other
 * shape. Field types are not checked here (the journal's schema does).
 */
export function entrantOfLine(parsed: unknown): unknown {
  if (!Array.isArray(parsed)) return parsed;
  const row = parsed as unknown[];
  if (row.length !== 7) return undefined;
  const bits: unknown = row[4];
  if (typeof bits !== 'number' || !Number.isInteger(bits) || bits < 0 || bits > ALL_ROLE_BITS) return undefined;
  return {
    userId: row[0],
    login: row[1],
    displayName: row[2],
    weight: row[3],
    roles: unpackRoles(bits, row[5] as number),
    enteredAt: row[6],
  };
}

/** Room for every constant part and number of a compact line: each string makes room for itself and this. */
const LINE_ROOM = 4 * 24 + 16;
/** plainRow's room besides the login (twice: it may be the display name too) and the display name: brackets, quotes, commas, newline, a 15-digit id and the numbers. */
const PLAIN_ROW_ROOM = 16 + 15 + 4 * 24;

/** UTF-8 lines in one growing buffer (the journal's pending lines of a draw). */
export class LineBytes {
  buf: Buffer;
  used = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  /** Makes room for `n` more bytes. */
  reserve(n: number): void {
    if (this.used + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.used + n));
    this.buf.copy(next, 0, 0, this.used);
    this.buf = next;
  }

  /** Appends `line` and a newline. */
  add(line: string): void {
    this.reserve(line.length * 3 + 1);
    this.used += this.buf.write(line, this.used, 'utf8');
    this.buf[this.used++] = 0x0a;
  }

  /** Appends `entrantLine(e)` and a newline (see the module header). */
  addEntrant(e: Entrant): void {
    if (standard(e))
      this.addCompact(e.userId, e.login, e.displayName, e.weight, packRoles(e.roles), e.roles.subMonths, e.enteredAt);
    else this.add(JSON.stringify(e));
  }

  /**
   * Appends row `row` of `rows` as a compact line and a newline: `entrantLine` of the row's
   * entrant (a non-finite number is written as JSON writes it, null, and fails on reading).
   */
  addRow(rows: EntrantRows, row: number): void {
    const partner = rows.partnerChannelAt(row);
    if (partner !== undefined) return this.addPartnerRow(rows, row, partner);
    const roles = rows.rolesAt(row);
    this.addCompact(
      rows.userIdAt(row),
      rows.loginAt(row),
      rows.displayNameAt(row),
      rows.weightAt(row),
      packRoles(roles),
      roles.subMonths,
      rows.enteredAtOf(row),
    );
  }

  /**
   * Appends rows [from, to) of `rows` as `addRow` does, byte for byte. From an EntrantTable's
   * columns (rowBytes) decimal ids are written from their digit keys, and logins and display
   * names of printable ASCII without `"` or `\` are copied as they are (no string read or built);
   * any other field goes the string way.
   */
  addRows(rows: EntrantRows, from: number, to: number): void {
    const cols = rows instanceof EntrantTable ? rows.rowBytes() : undefined;
    if (!cols) {
      for (let row = from; row < to; row++) this.addRow(rows, row);
      return;
    }
    for (let row = from; row < to; row++) {
      const partner = rows.partnerChannelAt(row);
      if (partner !== undefined) this.addPartnerRow(rows, row, partner);
      else if (!this.plainRow(cols, row)) this.anyRow(rows, cols, row);
    }
  }

  /** A Shared Chat partner viewer's row: the object line (`entrantLine` of its entrant, with `partnerChannelId`). */
  private addPartnerRow(rows: EntrantRows, row: number, partnerChannelId: string): void {
    const entrant: Entrant = {
      userId: rows.userIdAt(row),
      login: rows.loginAt(row),
      displayName: rows.displayNameAt(row),
      weight: rows.weightAt(row),
      roles: rows.rolesAt(row),
      enteredAt: rows.enteredAtOf(row),
      partnerChannelId,
    };
    this.add(JSON.stringify(entrant));
  }

  /**
   * The usual row in one pass with one `reserve`: a decimal id, a login and display name of
   * printable ASCII without `"` or `\`, integer numbers below 1e8 but the entry time (any safe
   * integer). False (nothing written) for any other row.
   */
  private plainRow(cols: EntrantRowBytes, row: number): boolean {
    const keyHi = cols.keyHi[row]!;
    const weight = cols.weights[row]!;
    const months = cols.months[row]!;
    const at = cols.enteredAt[row]!;
    if (keyHi === 0 || cols.loginFlags[row] !== 0 || !(weight >= 0 && weight < 1e8 && Number.isInteger(weight)))
      return false;
    if (!(at >= 0 && at <= Number.MAX_SAFE_INTEGER && Number.isInteger(at))) return false;
    const loginLen = cols.loginLen[row]!;
    const nameLen = cols.nameLen[row]!;
    this.reserve(PLAIN_ROW_ROOM + 2 * loginLen + nameLen);
    const b = this.buf;
    let p = openDigitsAt(b, this.used, keyHi, cols.keyLo[row]!);
    p = copyPlainAt(b, p, cols.loginBytes, cols.loginStart[row]!, loginLen);
    if (p < 0) return false;
    b[p] = 0x2c;
    p =
      nameLen === 0
        ? copyPlainAt(b, p + 1, cols.loginBytes, cols.loginStart[row]!, loginLen)
        : copyPlainAt(b, p + 1, cols.names, cols.nameAt[row]!, nameLen);
    if (p < 0) return false;
    b[p] = 0x2c;
    p = writeUint(b, p + 1, weight);
    b[p] = 0x2c;
    p = writeUint(b, p + 1, cols.roleBits[row]!);
    b[p] = 0x2c;
    p = writeUint(b, p + 1, months);
    b[p] = 0x2c;
    this.used = p + 1;
    this.number(at);
    b[this.used] = 0x5d; // ]
    b[this.used + 1] = 0x0a;
    this.used += 2;
    return true;
  }

  /** Any row: each field from the columns where it can be copied, else through its string. */
  private anyRow(rows: EntrantRows, cols: EntrantRowBytes, row: number): void {
    const keyHi = cols.keyHi[row]!;
    if (keyHi !== 0) this.openDigits(keyHi, cols.keyLo[row]!);
    else this.open(rows.userIdAt(row));
    const loginAt = cols.loginStart[row]!;
    const loginLen = cols.loginLen[row]!;
    const nameLen = cols.nameLen[row]!;
    const plainLogin = cols.loginFlags[row] === 0 && this.copyPlain(cols.loginBytes, loginAt, loginLen);
    if (!plainLogin) this.string(rows.loginAt(row));
    this.comma();
    if (nameLen === 0) {
      if (!plainLogin || !this.copyPlain(cols.loginBytes, loginAt, loginLen)) this.string(rows.loginAt(row));
    } else if (!this.copyPlain(cols.names, cols.nameAt[row]!, nameLen)) {
      this.string(rows.displayNameAt(row));
    }
    this.close(cols.weights[row]!, cols.roleBits[row]!, cols.months[row]!, cols.enteredAt[row]!);
  }

  /**
   * Writes `src[at .. at + n)` as a JSON string when every byte is printable ASCII other than `"`
   * and `\` and returns true; otherwise writes nothing and returns false. Makes room for itself and LINE_ROOM more.
   */
  private copyPlain(src: Uint8Array, at: number, n: number): boolean {
    this.reserve(n + 2 + LINE_ROOM);
    const end = copyPlainAt(this.buf, this.used, src, at, n);
    if (end < 0) return false;
    this.used = end;
    return true;
  }

  private addCompact(
    userId: string,
    login: string,
    displayName: string,
    weight: number,
    bits: number,
    subMonths: number,
    enteredAt: number,
  ): void {
    this.open(userId);
    this.string(login);
    this.comma();
    this.string(displayName);
    this.close(weight, bits, subMonths, enteredAt);
  }

  /** A compact line's start: `[`, the user id and a comma. */
  private open(userId: string): void {
    this.reserve(1);
    this.buf[this.used++] = 0x5b; // [
    this.string(userId);
    this.comma();
  }

  /** `open` for a decimal user id given by its digit keys (fairness/digit-keys.ts): its digits need no escaping. */
  private openDigits(keyHi: number, keyLo: number): void {
    this.reserve(15 + 4 + LINE_ROOM);
    this.used = openDigitsAt(this.buf, this.used, keyHi, keyLo);
  }

  /** A compact line's end after the display name (room made before): the four numbers, `]` and a newline. */
  private close(weight: number, bits: number, subMonths: number, enteredAt: number): void {
    this.comma();
    this.number(weight);
    this.comma();
    this.number(bits);
    this.comma();
    this.number(subMonths);
    this.comma();
    this.number(enteredAt);
    const b = this.buf;
    b[this.used++] = 0x5d; // ]
    b[this.used++] = 0x0a;
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.used);
  }

  /** Empties it for reuse, keeping its buffer (the bytes last returned by `bytes()` are overwritten by later lines). */
  clear(): void {
    this.used = 0;
  }

  /** A comma (room made before). */
  private comma(): void {
    this.buf[this.used++] = 0x2c;
  }

  /**
   * `JSON.stringify(s)`: printable ASCII byte by byte; otherwise the generic serialiser's text as
   * UTF-8. Makes room for itself and LINE_ROOM more.
   */
  private string(s: string): void {
    this.reserve(s.length + 2 + LINE_ROOM);
    const b = this.buf;
    const start = this.used;
    let at = start;
    b[at++] = 0x22;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) {
        // Escapes or non-ASCII: the generic serialiser, then UTF-8 (room made here).
        const json = JSON.stringify(s);
        this.used = start;
        this.reserve(json.length * 3 + LINE_ROOM);
        this.used += this.buf.write(json, start, 'utf8');
        return;
      }
      b[at++] = c;
    }
    b[at++] = 0x22;
    this.used = at;
  }

  /** A number as JSON writes it (room made before). */
  private number(n: number): void {
    if (n >= 0 && n <= Number.MAX_SAFE_INTEGER && Number.isInteger(n)) {
      // In int32 halves of 8 digits: an entry time (13 digits) costs no float division per digit.
      if (n < 1e8) this.used = writeUint(this.buf, this.used, n);
      else {
        const high = Math.floor(n / 1e8);
        this.used = writeDigits8(this.buf, writeUint(this.buf, this.used, high), n - high * 1e8);
      }
      return;
    }
    const b = this.buf;
    let at = this.used;
    const text = Number.isFinite(n) ? String(n) : 'null'; // JSON's form of the number; ASCII
    for (let i = 0; i < text.length; i++) b[at++] = text.charCodeAt(i);
    this.used = at;
  }
}

/** Writes `n` (an integer in [0, 1e8)) in decimal at `at`; returns the position after it. */
function writeUint(b: Uint8Array, at: number, n: number): number {
  let digits = 1;
  while (digits < 8 && n >= POWERS[digits]!) digits++;
  return writeDigits8(b, at + digits - 8, n, 8 - digits);
}

/**
 * Writes `n` (an integer in [0, 1e8)) as exactly 8 decimal digits at `at`, leading zeros included,
 * except the first `skip` of them (they are zeros); returns the position after the 8th.
 */
function writeDigits8(b: Uint8Array, at: number, n: number, skip = 0): number {
  let t = n | 0;
  for (let i = at + 7; i >= at + skip; i--) {
    const q = (t / 10) | 0;
    b[i] = 0x30 + (t - q * 10);
    t = q;
  }
  return at + 8;
}

const POWERS = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];

/** Writes a compact line's start for a decimal id given by its digit keys (`["digits",`) at `p`; returns the position after it (room made before). */
function openDigitsAt(b: Uint8Array, p: number, keyHi: number, keyLo: number): number {
  b[p] = 0x5b; // [
  b[p + 1] = 0x22;
  const end = writeDigits(b, p + 2, keyHi, keyLo);
  b[end] = 0x22;
  b[end + 1] = 0x2c;
  return end + 2;
}

/**
 * Copies `src[at .. at + n)` to `b` at `p` as a JSON string (quotes included) when every byte is
 * printable ASCII other than `"` and `\`; returns the position after it, or -1 (room made before).
 */
function copyPlainAt(b: Uint8Array, p: number, src: Uint8Array, at: number, n: number): number {
  b[p++] = 0x22;
  for (let i = at, end = at + n; i < end; i++) {
    const c = src[i]!;
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return -1;
    b[p++] = c;
  }
  b[p] = 0x22;
  return p + 1;
}
