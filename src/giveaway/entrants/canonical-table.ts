/**
 * The canonical list of fairness/canonical.ts (validation, the sort into user-id code-unit order, the
 * duplicate check, the digest), computed over an entrant table's columns when every eligible
 * user id is a decimal id of up to 15 digits (Twitch's) and every login is held as bytes: the
 * sort runs on the ids' digit keys (fairness/digit-keys.ts) and the digest lines are written from the
 * sorted keys and the table's login bytes, so no heap string is read per entrant.
 *
 * Contract: `canonicaliseTable(table, rows)` gives undefined when some row does not qualify (the
 * caller then runs `canonicalise`); otherwise exactly what `canonicalise` gives for the same rows
 * (same order, weights, digest and digest bytes, the same FairnessError for the same bad input),
 * except that `order` holds table rows rather than positions in `rows`. A generator (fairness/canonical.ts
 * Steps): run it sliced. Does not: decide eligibility or keep anything.
 */
import { createHash, type Hash } from 'node:crypto';
import {
  checkField,
  checkWeight,
  FairnessError,
  sortByDigitKeys,
  writeDigits,
  type Canonical,
  type Steps,
} from '../../fairness/index.js';
import { LOGIN_STRING_ONLY, LOGIN_UNCHECKED, type EntrantTable, type TableColumns } from './entrant-table.js';

const CHUNK = 4096;
const OUT_CHUNK = 1 << 18;
/** Longest line: 15 digits, TAB, 255 login bytes, TAB, 16 weight digits, LF. */
const MAX_LINE = 15 + 1 + 255 + 1 + 16 + 1;

/** Checks rows [start, end) and gathers their keys; returns their total weight, or -1 to fall back. */
function gather(
  table: EntrantTable,
  c: TableColumns,
  rows: Uint32Array,
  hi: Uint32Array,
  lo: Uint32Array,
  start: number,
  end: number,
): number {
  let total = 0;
  for (let i = start; i < end; i++) {
    const row = rows[i]!;
    total += checkWeight(c.weights[row], i);
    const h = c.keyHi[row]!;
    const flags = c.loginFlags[row]!;
    if (h === 0 || (flags & LOGIN_STRING_ONLY) !== 0) return -1;
    if ((flags & LOGIN_UNCHECKED) !== 0) checkField(table.loginAt(row), 'login', i);
    hi[i] = h;
    lo[i] = c.keyLo[row]!;
  }
  return total;
}

/** The digest lines being written: fixed-size chunks, each hashed and kept when full. */
interface Out {
  buf: Buffer;
  pos: number;
  chunks: Buffer[];
  hash: Hash;
}

function cut(out: Out): void {
  if (out.pos === 0) return;
  const chunk = out.buf.subarray(0, out.pos);
  out.hash.update(chunk);
  out.chunks.push(chunk);
  out.buf = Buffer.allocUnsafe(OUT_CHUNK);
  out.pos = 0;
}

/** Writes canonical positions [start, end): duplicate check, weights, the digest lines. */
function writeLines(
  table: EntrantTable,
  c: TableColumns,
  sorted: { hi: Uint32Array; lo: Uint32Array; rows: Uint32Array },
  weights: Float64Array,
  out: Out,
  start: number,
  end: number,
): void {
  const { hi, lo, rows } = sorted;
  const logins = c.loginBytes;
  let prevH = start > 0 ? hi[start - 1]! : 0;
  let prevL = start > 0 ? lo[start - 1]! : 0;
  for (let p = start; p < end; p++) {
    const h = hi[p]!;
    const l = lo[p]!;
    const row = rows[p]!;
    if (h === prevH && l === prevL) throw new FairnessError(`duplicate entrant userId ${table.userIdAt(row)}`);
    prevH = h;
    prevL = l;
    const w = c.weights[row]!;
    weights[p] = w;
    if (out.pos + MAX_LINE > OUT_CHUNK) cut(out);
    const buf = out.buf;
    let pos = writeDigits(buf, out.pos, h, l);
    buf[pos++] = 0x09;
    const from = c.loginStart[row]!;
    const to = from + c.loginLen[row]!;
    for (let b = from; b < to; b++) buf[pos++] = logins[b]!;
    buf[pos++] = 0x09;
    if (w < 10) buf[pos++] = 0x30 + w;
    else pos += buf.write(String(w), pos, 'latin1');
    buf[pos++] = 0x0a;
    out.pos = pos;
  }
}

/**
 * canonicalise (fairness/canonical.ts) over `rows` of `table`'s columns; undefined when a row does not
 * qualify. Once it returns a list, `rows` has been reused by the sort (its contents are gone).
 */
export function* canonicaliseTable(table: EntrantTable, rows: Uint32Array): Steps<Canonical | undefined> {
  const n = rows.length;
  const c = table.columns();
  const hi = new Uint32Array(n);
  const lo = new Uint32Array(n);
  // The sort carries the rows along: it starts from `rows` itself (no copy).
  const order = rows;
  let total = 0;
  for (let start = 0; start < n; start += CHUNK) {
    const part = gather(table, c, rows, hi, lo, start, Math.min(n, start + CHUNK));
    if (part < 0) return undefined;
    total += part;
    yield;
  }
  if (!Number.isSafeInteger(total)) throw new FairnessError('total weight exceeds 2^53 - 1');
  const sorted = yield* sortByDigitKeys(hi, lo, order);
  const weights = new Float64Array(n);
  const out: Out = { buf: Buffer.allocUnsafe(OUT_CHUNK), pos: 0, chunks: [], hash: createHash('sha256') };
  for (let start = 0; start < n; start += CHUNK) {
    writeLines(table, c, sorted, weights, out, start, Math.min(n, start + CHUNK));
    yield;
  }
  cut(out);
  return { order: sorted.rows, weights, bytes: out.chunks, digest: out.hash.digest('hex') };
}
