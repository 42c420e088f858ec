/**
 * The canonical frozen entrant list of fairness.ts (steps 2 and 3), computed at any size without
 * object graphs and without blocking: validation, the sort into user-id code-unit order, the
 * duplicate check, the digest and the weights in canonical order.
 *
 * Contract: `canonicalise` is a generator that does the work in chunks and yields between them;
 * `runToEnd` drives it synchronously (verify, tests), `runSliced` drives it on the event loop,
 * yielding to I/O whenever a slice has run for its budget, so a million entrants never block the
 * loop for long. The outcome is the procedure's, exactly: the same order and digest as sorting
 * with JavaScript's default string order and hashing `userId \t login \t weight \n` lines.
 * Twitch's decimal ids (up to 15 digits) are sorted on packed numeric keys (base 11, shorter ids
 * padded with a digit below '0', which keeps code-unit order) with an LSD radix sort; any other
 * id falls back to a bottom-up merge sort with string comparison. Both are stable and sliceable. Does not:
 * decide eligibility, pick winners or store anything.
 */
import { createHash } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ByteChunks } from '../shared/byte-chunks.js';
import { GiftdropError } from '../shared/errors.js';

/** Raised when fairness inputs are invalid (bad seed, duplicate entrant, bad weight...). */
export class FairnessError extends GiftdropError {
  constructor(message: string) {
    super('FAIRNESS_INVALID_INPUT', message);
  }
}

/** Rows of an entrant list, read by position (nothing is materialised). */
export interface EntrantRows {
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

/** Work in steps: a generator that yields between chunks and returns its result. */
export type Steps<T> = Generator<void, T, void>;

const CHUNK = 4096;
const MAX_PACKED_DIGITS = 15;
const TAB_CR_LF = /[\t\r\n]/;

/** Runs `steps` to the end synchronously. */
export function runToEnd<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Runs `steps` on the event loop, letting I/O run whenever a slice has taken `budgetMs`. */
export async function runSliced<T>(steps: Steps<T>, budgetMs = 8): Promise<T> {
  let sliceStart = performance.now();
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    if (performance.now() - sliceStart >= budgetMs) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
}

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

/**
 * A number whose order is the code-unit order of `id` for decimal ids of up to 15 digits (each
 * digit d -> d + 1 in base 11, missing positions -> 0, so a prefix sorts first); -1 otherwise.
 * Exact: 11^15 < 2^53.
 */
export function packedKey(id: string): number {
  const n = id.length;
  if (n === 0 || n > MAX_PACKED_DIGITS) return -1;
  let key = 0;
  for (let i = 0; i < MAX_PACKED_DIGITS; i++) {
    let digit = 0;
    if (i < n) {
      const c = id.charCodeAt(i);
      if (c < 48 || c > 57) return -1;
      digit = c - 47;
    }
    key = key * 11 + digit;
  }
  return key;
}

// The generators below only drive: every hot loop is a plain function over one chunk, because V8
// does not optimise a loop inside a generator while it runs (no on-stack replacement there).

const SLICE = 16_384;

function splitKeys(keys: Float64Array, lo: Uint32Array, hi: Uint32Array, rows: Uint32Array, start: number, end: number): void {
  for (let i = start; i < end; i++) {
    const k = keys[i]!;
    const h = Math.floor(k / 0x4000000);
    hi[i] = h;
    lo[i] = k - h * 0x4000000;
    rows[i] = i;
  }
}

function countDigits(digits: Uint32Array, counts: Uint32Array, shift: number, mask: number): void {
  counts.fill(0);
  const n = digits.length;
  for (let i = 0; i < n; i++) counts[(digits[i]! >>> shift) & mask]!++;
  let sum = 0;
  for (let d = 0; d <= mask; d++) {
    const c = counts[d]!;
    counts[d] = sum;
    sum += c;
  }
}

function scatter(
  digits: Uint32Array,
  counts: Uint32Array,
  shift: number,
  mask: number,
  from: [Uint32Array, Uint32Array, Uint32Array],
  to: [Uint32Array, Uint32Array, Uint32Array],
  start: number,
  end: number,
): void {
  const [lo, hi, rows] = from;
  const [lo2, hi2, rows2] = to;
  for (let i = start; i < end; i++) {
    const at = counts[(digits[i]! >>> shift) & mask]!++;
    lo2[at] = lo[i]!;
    hi2[at] = hi[i]!;
    rows2[at] = rows[i]!;
  }
}

/**
 * Stable LSD radix sort of row numbers by packed keys (< 2^52): the keys are split into two
 * 26-bit halves and sorted on 11-, 11-, 4-bit digits of each half (low half first). Each pass
 * carries the key halves along with the rows, so reads are sequential. O(n) per pass.
 */
function* radixSort(keys: Float64Array): Steps<Uint32Array> {
  const n = keys.length;
  let from: [Uint32Array, Uint32Array, Uint32Array] = [new Uint32Array(n), new Uint32Array(n), new Uint32Array(n)];
  let to: [Uint32Array, Uint32Array, Uint32Array] = [new Uint32Array(n), new Uint32Array(n), new Uint32Array(n)];
  for (let start = 0; start < n; start += SLICE) {
    splitKeys(keys, from[0], from[1], from[2], start, Math.min(n, start + SLICE));
    yield;
  }
  const counts = new Uint32Array(2048);
  const passes: readonly (readonly [number, number, number])[] = [
    [0, 0, 0x7ff],
    [0, 11, 0x7ff],
    [0, 22, 0xf],
    [1, 0, 0x7ff],
    [1, 11, 0x7ff],
    [1, 22, 0xf],
  ];
  for (const [half, shift, mask] of passes) {
    const digits = from[half]!;
    countDigits(digits, counts, shift, mask);
    yield;
    for (let start = 0; start < n; start += SLICE) {
      scatter(digits, counts, shift, mask, from, to, start, Math.min(n, start + SLICE));
      yield;
    }
    const t = from;
    from = to;
    to = t;
  }
  return from[2];
}

function insertionSortRuns(rows: Uint32Array, less: (a: number, b: number) => boolean, start: number, end: number, run: number): void {
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

function mergeRuns(src: Uint32Array, dst: Uint32Array, less: (a: number, b: number) => boolean, lo: number, mid: number, hi: number): void {
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

/** Validates rows [start, end) and fills their keys; returns their total weight. */
function checkRows(rows: EntrantRows, keys: Float64Array, start: number, end: number): number {
  let total = 0;
  for (let i = start; i < end; i++) {
    total += checkWeight(rows.weight(i), i);
    const id = rows.userId(i);
    const key = typeof id === 'string' ? packedKey(id) : -1;
    // A packed id is all digits: it cannot be empty or hold TAB, CR or LF.
    if (key < 0) checkField(id, 'userId', i);
    checkField(rows.login(i), 'login', i);
    keys[i] = key;
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
function serialise(rows: EntrantRows, order: Uint32Array, weights: Float64Array, bytes: ByteChunks, start: number, end: number): void {
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
 * Validates `rows`, sorts them into canonical order and digests them (fairness.ts steps 2-3).
 * Throws FairnessError on an empty or TAB/CR/LF-bearing userId or login, a weight that is not a
 * positive safe integer, a total weight above 2^53 - 1, or a duplicate userId.
 */
export function* canonicalise(rows: EntrantRows): Steps<Canonical> {
  const n = rows.length;
  const keys = new Float64Array(n);
  let total = 0;
  for (let start = 0; start < n; start += CHUNK) {
    total += checkRows(rows, keys, start, Math.min(n, start + CHUNK));
    yield;
  }
  if (!Number.isSafeInteger(total)) throw new FairnessError('total weight exceeds 2^53 - 1');
  let order: Uint32Array;
  if (keys.every((k) => k >= 0)) {
    order = yield* radixSort(keys);
  } else {
    const identity = new Uint32Array(n);
    for (let i = 0; i < n; i++) identity[i] = i;
    order = yield* mergeSort(identity, (a, b) => rows.userId(a) < rows.userId(b));
  }
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
