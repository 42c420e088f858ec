/**
 * The canonical frozen entrant list of procedure.ts (steps 2 and 3), computed at any size without
 * object graphs and without blocking: validation, the sort into user-id code-unit order, the
 * duplicate check, the digest and the weights in canonical order.
 *
 * Contract: `canonicalise` is a generator that does the work in chunks and yields between them
 * (steps.ts drives it: `runToEnd` synchronously, `runSliced` on the event loop, so a million
 * entrants never block the loop for long). The outcome is the procedure's, exactly: the same order and digest as sorting
 * with JavaScript's default string order and hashing `userId \t login \t weight \n` lines.
 * Twitch's decimal ids (up to 15 digits) are sorted on their digit keys with the LSD radix sort
 * of digit-keys.ts (the same one the entrant table's freeze uses); any other id falls back to a
 * bottom-up merge sort with string comparison. Both are stable and sliceable. Does not: decide
 * eligibility, pick winners or store anything.
 */
import { createHash } from 'node:crypto';
import { ByteChunks } from '../shared/byte-chunks.js';
import { GiftdropError } from '../shared/errors.js';
import { readDigitKey, sortByDigitKeys } from './digit-keys.js';
import type { Steps } from './steps.js';

/** Raised when fairness inputs are invalid (bad seed, duplicate entrant, bad weight...). */
export class FairnessError extends GiftdropError {
  constructor(message: string) {
    super('FAIRNESS_INVALID_INPUT', message);
  }
}

/** Rows of an entrant list to freeze, read by position (nothing is materialised; not the journal's EntrantRows). */
export interface ListRows {
  readonly length: number;
  userId(i: number): string;
  login(i: number): string;
  weight(i: number): number;
}

/** The canonical list as positions into the input rows, with its weights and digest. */
export interface Canonical {
  /** order[p] = input row at canonical position p. */
  order: Uint32Array;
  /** Weight at canonical position p. */
  weights: Float64Array;
  digest: string;
  /** The exact bytes the digest hashed (`userId \t login \t weight \n` lines), in chunks. */
  bytes: Buffer[];
}

const CHUNK = 4096;
const TAB_CR_LF = /[\t\r\n]/;

export function checkField(value: unknown, name: string, index: number): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new FairnessError(`entrant ${index}: ${name} must be a non-empty string`);
  }
  if (TAB_CR_LF.test(value)) {
    throw new FairnessError(`entrant ${index}: ${name} must not contain TAB, CR or LF`);
  }
  return value;
}

/** `weight` when it is a positive safe integer; else FairnessError naming `where` (a label, or `entrant <index>`). */
export function checkWeight(weight: unknown, where: string | number): number {
  if (typeof weight !== 'number' || !Number.isSafeInteger(weight) || weight <= 0) {
    const label = typeof where === 'number' ? `entrant ${where}` : where;
    throw new FairnessError(`${label}: weight must be a positive safe integer, got ${String(weight)}`);
  }
  return weight;
}

// The generators below only drive: every hot loop is a plain function over one chunk, because V8
// does not optimise a loop inside a generator while it runs (no on-stack replacement there).

/** The digit key of the id being checked (no allocation per row). */
const KEY = new Uint32Array(2);

const SLICE = 16_384;

function insertionSortRuns(
  rows: Uint32Array,
  less: (a: number, b: number) => boolean,
  start: number,
  end: number,
  run: number,
): void {
  for (let lo = start; lo < end; lo += run) {
    const hi = Math.min(end, lo + run);
    for (let i = lo + 1; i < hi; i++) {
      const v = rows[i]!;
      let j = i - 1;
      while (j >= lo && less(v, rows[j]!)) {
        rows[j + 1] = rows[j]!;
        j--;
      }
      rows[j + 1] = v;
    }
  }
}

function mergeRuns(
  src: Uint32Array,
  dst: Uint32Array,
  less: (a: number, b: number) => boolean,
  lo: number,
  mid: number,
  hi: number,
): void {
  let i = lo;
  let j = mid;
  let k = lo;
  while (i < mid && j < hi) {
    const a = src[i]!;
    const b = src[j]!;
    if (less(b, a)) {
      dst[k++] = b;
      j++;
    } else {
      dst[k++] = a;
      i++;
    }
  }
  while (i < mid) dst[k++] = src[i++]!;
  while (j < hi) dst[k++] = src[j++]!;
}

/** Bottom-up merge sort of `rows` by `less` (stable), yielding between merges. */
function* mergeSort(rows: Uint32Array, less: (a: number, b: number) => boolean): Steps<Uint32Array> {
  const n = rows.length;
  const RUN = 16;
  for (let start = 0; start < n; start += SLICE) {
    insertionSortRuns(rows, less, start, Math.min(n, start + SLICE), RUN);
    yield;
  }
  let src: Uint32Array = rows;
  let dst: Uint32Array = new Uint32Array(n);
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      mergeRuns(src, dst, less, lo, Math.min(n, lo + width), Math.min(n, lo + 2 * width));
      yield;
    }
    const t = src;
    src = dst;
    dst = t;
  }
  return src;
}

/**
 * Validates rows [start, end) and fills their digit keys (hi 0: not a decimal id of 1-15 digits);
 * returns their total weight.
 */
function checkRows(rows: ListRows, hi: Uint32Array, lo: Uint32Array, start: number, end: number): number {
  let total = 0;
  for (let i = start; i < end; i++) {
    total += checkWeight(rows.weight(i), i);
    const id = rows.userId(i);
    // A decimal id is all digits: it cannot be empty or hold TAB, CR or LF.
    if (typeof id === 'string' && readDigitKey(id, KEY)) {
      hi[i] = KEY[0]!;
      lo[i] = KEY[1]!;
    } else {
      checkField(id, 'userId', i);
      hi[i] = 0;
      lo[i] = 0;
    }
    checkField(rows.login(i), 'login', i);
  }
  return total;
}

/** One canonical line, `userId \t login \t weight \n`, as UTF-8 (the digest's and the entrants file's). */
export function writeLine(bytes: ByteChunks, userId: string, login: string, weight: number): void {
  bytes.text(userId);
  bytes.byte(0x09);
  bytes.text(login);
  bytes.byte(0x09);
  if (weight < 10) bytes.byte(0x30 + weight);
  else bytes.text(String(weight));
  bytes.byte(0x0a);
}

/** Writes canonical positions [start, end): duplicate check, weights, the digest lines. */
function serialise(
  rows: ListRows,
  order: Uint32Array,
  weights: Float64Array,
  bytes: ByteChunks,
  start: number,
  end: number,
): void {
  let previous = start > 0 ? rows.userId(order[start - 1]!) : undefined;
  for (let p = start; p < end; p++) {
    const row = order[p]!;
    const id = rows.userId(row);
    if (id === previous) throw new FairnessError(`duplicate entrant userId ${id}`);
    previous = id;
    const w = rows.weight(row);
    weights[p] = w;
    writeLine(bytes, id, rows.login(row), w);
  }
}

/**
 * Validates `rows`, sorts them into canonical order and digests them (procedure.ts steps 2-3).
 * Throws FairnessError on an empty or TAB/CR/LF-bearing userId or login, a weight that is not a
 * positive safe integer, a total weight above 2^53 - 1, or a duplicate userId.
 */
export function* canonicalise(rows: ListRows): Steps<Canonical> {
  const n = rows.length;
  const hi = new Uint32Array(n);
  const lo = new Uint32Array(n);
  let total = 0;
  for (let start = 0; start < n; start += CHUNK) {
    total += checkRows(rows, hi, lo, start, Math.min(n, start + CHUNK));
    yield;
  }
  if (!Number.isSafeInteger(total)) throw new FairnessError('total weight exceeds 2^53 - 1');
  const identity = new Uint32Array(n);
  for (let i = 0; i < n; i++) identity[i] = i;
  const order = hi.every((h) => h !== 0)
    ? (yield* sortByDigitKeys(hi, lo, identity)).rows
    : yield* mergeSort(identity, (a, b) => rows.userId(a) < rows.userId(b));
  const hash = createHash('sha256');
  // The chunks are kept: they are the entrants file's body (storage writes them as they are).
  const bytes = new ByteChunks((chunk) => hash.update(chunk), true, 1 << 18);
  const weights = new Float64Array(n);
  for (let start = 0; start < n; start += CHUNK) {
    serialise(rows, order, weights, bytes, start, Math.min(n, start + CHUNK));
    yield;
  }
  return { order, weights, bytes: bytes.end(), digest: hash.digest('hex') };
}
