/**
 * The entrants of one draw, held compactly: one row per distinct user id in parallel columns
 * (strings for user id and login; display names, when they differ from the login, as UTF-8 bytes
 * in one growing buffer; typed arrays for weight, role flags, subscription months and entry time)
 * plus a Map from user id to row. No object per entrant is kept (two strings and a Map entry), so a
 * million entrants cost well under 200 bytes each and little garbage-collector work.
 *
 * Contract: rows are appended in entry order and never removed or reordered; `add` keeps the
 * first entry of a user id and returns false for later ones. Strings are copied on the way in so
 * a kept login never pins the chat frame it was cut from. `entrant(row)` materialises a row as an
 * `Entrant` (for journals and callers that need the object); the hot paths read columns. Does
 * not: validate fairness inputs (fairness.ts does at close), decide eligibility or persist.
 */
import type { ChatRoles } from '../shared/chat.js';
import type { Entrant } from './ports.js';

const BROADCASTER = 1;
const MODERATOR = 2;
const VIP = 4;
const SUBSCRIBER = 8;
const FIRST_MESSAGE = 16;
const MAX_MONTHS = 0xffff;

/**
 * A string that owns its characters. V8 keeps substrings of 13+ characters as views into the
 * string they were cut from (here: a whole chat frame); a kept entrant must not pin that frame.
 */
function own(s: string): string {
  return s.length < 13 ? s : (JSON.parse(JSON.stringify(s)) as string);
}

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

function grown<T extends Float64Array | Uint8Array | Uint16Array>(a: T, size: number): T {
  const next = new (a.constructor as new (n: number) => T)(size);
  next.set(a);
  return next;
}

/** The entrants of one draw in columns, addressed by row (entry order). */
export class EntrantTable {
  private readonly rowOf = new Map<string, number>();
  private readonly ids: string[] = [];
  private readonly logins: string[] = [];
  /** Display names that differ from the login, as UTF-8 bytes; a row's slice is nameAt..+nameLen. */
  private names = Buffer.allocUnsafe(1024);
  private namesUsed = 0;
  private nameAt = new Float64Array(64);
  /** Byte length of the row's display name; 0 = same as the login. */
  private nameLen = new Uint16Array(64);
  private weights = new Float64Array(64);
  private roleBits = new Uint8Array(64);
  private months = new Uint16Array(64);
  private enteredAt = new Float64Array(64);

  constructor(entrants: Iterable<Entrant> = []) {
    for (const e of entrants) this.add(e);
  }

  get size(): number {
    return this.ids.length;
  }

  has(userId: string): boolean {
    return this.rowOf.has(userId);
  }

  /** Adds an entrant once per user id; false when that user id is already in. */
  add(e: Entrant): boolean {
    if (this.rowOf.has(e.userId)) return false;
    const row = this.ids.length;
    if (row === this.weights.length) this.grow(row * 2);
    const userId = own(e.userId);
    const login = own(e.login);
    this.rowOf.set(userId, row);
    this.ids.push(userId);
    this.logins.push(login);
    this.storeName(row, e.displayName === e.login ? '' : e.displayName);
    this.weights[row] = e.weight;
    this.roleBits[row] = packRoles(e.roles);
    this.months[row] = Math.max(0, Math.min(MAX_MONTHS, Math.floor(e.roles.subMonths) || 0));
    this.enteredAt[row] = e.enteredAt;
    return true;
  }

  private storeName(row: number, name: string): void {
    this.nameAt[row] = this.namesUsed;
    if (name === '') {
      this.nameLen[row] = 0;
      return;
    }
    const bytes = Buffer.byteLength(name, 'utf8');
    if (bytes > 0xffff) throw new RangeError('display name too long');
    if (this.namesUsed + bytes > this.names.length) {
      const next = Buffer.allocUnsafe(Math.max(this.names.length * 2, this.namesUsed + bytes));
      this.names.copy(next, 0, 0, this.namesUsed);
      this.names = next;
    }
    this.namesUsed += this.names.write(name, this.namesUsed, 'utf8');
    this.nameLen[row] = bytes;
  }

  private grow(size: number): void {
    this.nameAt = grown(this.nameAt, size);
    this.nameLen = grown(this.nameLen, size);
    this.weights = grown(this.weights, size);
    this.roleBits = grown(this.roleBits, size);
    this.months = grown(this.months, size);
    this.enteredAt = grown(this.enteredAt, size);
  }

  rowOfUser(userId: string): number | undefined {
    return this.rowOf.get(userId);
  }

  userIdAt(row: number): string {
    return this.ids[row]!;
  }

  loginAt(row: number): string {
    return this.logins[row]!;
  }

  displayNameAt(row: number): string {
    const len = this.nameLen[row]!;
    if (len === 0) return this.logins[row]!;
    const at = this.nameAt[row]!;
    return this.names.toString('utf8', at, at + len);
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

  entrant(row: number): Entrant {
    return {
      userId: this.ids[row]!,
      login: this.logins[row]!,
      displayName: this.displayNameAt(row),
      weight: this.weights[row]!,
      roles: this.rolesAt(row),
      enteredAt: this.enteredAt[row]!,
    };
  }

  /** The entrant with this user id, materialised; undefined when not in. */
  get(userId: string): Entrant | undefined {
    const row = this.rowOf.get(userId);
    return row === undefined ? undefined : this.entrant(row);
  }

  displayNameOf(userId: string): string | undefined {
    const row = this.rowOf.get(userId);
    return row === undefined ? undefined : this.displayNameAt(row);
  }

  /** The first entrant whose login equals `login` (case-insensitive). */
  /** Every entrant in entry order, one object at a time (for read-only views such as the dashboard). */
  *values(): IterableIterator<Entrant> {
    for (let row = 0; row < this.logins.length; row++) yield this.entrant(row);
  }

  findByLogin(login: string): Entrant | undefined {
    const wanted = login.toLowerCase();
    for (let row = 0; row < this.logins.length; row++) {
      if (this.logins[row]!.toLowerCase() === wanted) return this.entrant(row);
    }
    return undefined;
  }
}
