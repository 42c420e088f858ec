/**
 * One journal line of an entrant (journal.ts), built without the generic JSON serialiser on the
 * `!enter` hot path. The output is exactly `JSON.stringify(entrant)` for an Entrant with the
 * standard fields in the standard order (userId, login, displayName, weight, roles{broadcaster,
 * moderator, vip, subscriber, subMonths, firstMessage}, enteredAt); anything else (extra fields,
 * non-finite numbers) goes through JSON.stringify. Readers parse it with entrantSchema as before.
 * `entrantLine` returns the line as a string; `LineBytes.addEntrant` writes the same line's UTF-8
 * bytes (and a newline) straight into a growing buffer, with no string built for a standard
 * entrant whose strings are printable ASCII (other strings go through JSON.stringify).
 */
import type { Entrant } from '../giveaway/ports.js';

const ENTRANT_KEYS = ['userId', 'login', 'displayName', 'weight', 'roles', 'enteredAt'] as const;
const ROLE_KEYS = ['broadcaster', 'moderator', 'vip', 'subscriber', 'subMonths', 'firstMessage'] as const;
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function quote(s: string): string {
  return PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
}

/** The object's own enumerable keys are exactly `keys`, in that order. */
function keysAre(o: object, keys: readonly string[]): boolean {
  const own = Object.keys(o);
  if (own.length !== keys.length) return false;
  for (let i = 0; i < own.length; i++) if (own[i] !== keys[i]) return false;
  return true;
}

function standard(e: Entrant): boolean {
  return (
    typeof e.userId === 'string' &&
    typeof e.login === 'string' &&
    typeof e.displayName === 'string' &&
    Number.isFinite(e.weight) &&
    Number.isFinite(e.enteredAt) &&
    typeof e.roles === 'object' &&
    e.roles !== null &&
    typeof e.roles.broadcaster === 'boolean' &&
    typeof e.roles.moderator === 'boolean' &&
    typeof e.roles.vip === 'boolean' &&
    typeof e.roles.subscriber === 'boolean' &&
    typeof e.roles.firstMessage === 'boolean' &&
    Number.isFinite(e.roles.subMonths) &&
    keysAre(e, ENTRANT_KEYS) &&
    keysAre(e.roles, ROLE_KEYS)
  );
}

/** `JSON.stringify(entrant)`, fast for the standard shape. */
export function entrantLine(e: Entrant): string {
  if (!standard(e)) return JSON.stringify(e);
  const r = e.roles;
  return (
    `{"userId":${quote(e.userId)},"login":${quote(e.login)},"displayName":${quote(e.displayName)},"weight":${e.weight},` +
    `"roles":{"broadcaster":${r.broadcaster},"moderator":${r.moderator},"vip":${r.vip},` +
    `"subscriber":${r.subscriber},"subMonths":${r.subMonths},"firstMessage":${r.firstMessage}},` +
    `"enteredAt":${e.enteredAt}}`
  );
}

const ascii = (text: string): Buffer => Buffer.from(text, 'latin1');
const K_USER_ID = ascii('{"userId":');
const K_LOGIN = ascii(',"login":');
const K_DISPLAY_NAME = ascii(',"displayName":');
const K_WEIGHT = ascii(',"weight":');
/** `,"roles":{...,"subMonths":` for each combination of the first four role flags (packRoles order). */
const K_ROLES: Buffer[] = [];
for (let bits = 0; bits < 16; bits++) {
  const [broadcaster, moderator, vip, subscriber] = [1, 2, 4, 8].map((bit) => (bits & bit) !== 0);
  K_ROLES.push(ascii(`,"roles":{"broadcaster":${broadcaster},"moderator":${moderator},"vip":${vip},"subscriber":${subscriber},"subMonths":`));
}
const K_FIRST_MESSAGE = [ascii(',"firstMessage":false},"enteredAt":'), ascii(',"firstMessage":true},"enteredAt":')];
/** Room for every constant part and number of a line: each string makes room for itself and this. */
const LINE_ROOM = K_LOGIN.length + K_DISPLAY_NAME.length + K_WEIGHT.length + K_ROLES[0]!.length + K_FIRST_MESSAGE[0]!.length + 3 * 24 + 2;

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
    if (!standard(e)) {
      this.add(entrantLine(e));
      return;
    }
    const r = e.roles;
    this.reserve(K_USER_ID.length);
    this.put(K_USER_ID);
    this.string(e.userId);
    this.put(K_LOGIN);
    this.string(e.login);
    this.put(K_DISPLAY_NAME);
    this.string(e.displayName);
    this.put(K_WEIGHT);
    this.number(e.weight);
    this.put(K_ROLES[(r.broadcaster ? 1 : 0) | (r.moderator ? 2 : 0) | (r.vip ? 4 : 0) | (r.subscriber ? 8 : 0)]!);
    this.number(r.subMonths);
    this.put(K_FIRST_MESSAGE[r.firstMessage ? 1 : 0]!);
    this.number(e.enteredAt);
    const b = this.buf;
    b[this.used++] = 0x7d; // }
    b[this.used++] = 0x0a;
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.used);
  }

  /** Constant bytes (room made before). */
  private put(k: Buffer): void {
    this.buf.set(k, this.used);
    this.used += k.length;
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

  /** A finite number as JSON writes it (room made before). */
  private number(n: number): void {
    const b = this.buf;
    let at = this.used;
    if (n >= 0 && n <= Number.MAX_SAFE_INTEGER && Number.isInteger(n)) {
      let digits = 1;
      for (let t = n; t >= 10; t = Math.floor(t / 10)) digits++;
      at += digits;
      for (let i = at - 1, t = n; i >= this.used; i--) {
        const q = Math.floor(t / 10);
        b[i] = 0x30 + (t - q * 10);
        t = q;
      }
    } else {
      const text = String(n); // JSON's form of a finite number; ASCII
      for (let i = 0; i < text.length; i++) b[at++] = text.charCodeAt(i);
    }
    this.used = at;
  }
}
