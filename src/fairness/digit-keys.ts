/**
 * Decimal user ids (Twitch's, up to 15 digits) as two 32-bit sort keys, the stable LSD radix sort
 * over them, and the digits written back from the keys. Used by the close-time freeze over an
 * entrant table's columns (giveaway/entrants/canonical-table.ts: the sort and the digest then read contiguous typed
 * arrays, never a million heap strings), by the freeze of a plain list (canonical.ts) and by the
 * table's user-id index (giveaway/entrants/id-index.ts).
 *
 * Contract: `digitKey` packs an id of 1-15 ASCII digits as nibbles (digit d -> d + 1; a missing
 * position -> 0, so a prefix sorts first): digits 1-8 in `hi` (first digit in the top nibble),
 * digits 9-15 in the low 28 bits of `lo`. Comparing (hi, lo) as unsigned integers is comparing the
 * ids in code-unit order, and equal keys are equal ids. Any other id gives hi = 0 (no digit id
 * has hi = 0); `readDigitKey` reads a key without writing a column. `sortByDigitKeys` is stable and works in slices (a generator, see canonical.ts
 * Steps); `writeDigits` writes an id's ASCII digits from its key. Owns nothing else.
 */
import type { Steps } from './steps.js';

/** Sets key[0] (hi) and key[1] (lo) to the key of `id`; false (key unchanged) when `id` is not 1-15 decimal digits. */
export function readDigitKey(id: string, key: Uint32Array): boolean {
  const n = id.length;
  if (n === 0 || n > 15) return false;
  let h = 0;
  let l = 0;
  for (let i = 0; i < n; i++) {
    const c = id.charCodeAt(i);
    if (c < 48 || c > 57) return false;
    if (i < 8) h |= (c - 47) << (28 - 4 * i);
    else l |= (c - 47) << (24 - 4 * (i - 8));
  }
  key[0] = h;
  key[1] = l;
  return true;
}

const KEY = new Uint32Array(2);

/** Writes the key of `id` into hi[at], lo[at]; hi[at] = 0 when `id` is not 1-15 decimal digits. */
export function digitKey(id: string, hi: Uint32Array, lo: Uint32Array, at: number): void {
  const ok = readDigitKey(id, KEY);
  hi[at] = ok ? KEY[0]! : 0;
  lo[at] = ok ? KEY[1]! : 0;
}

/** Writes the ASCII digits of the id keyed (h, l) into `buf` at `pos`; returns the new position. */
export function writeDigits(buf: Uint8Array, pos: number, h: number, l: number): number {
  for (let shift = 28; shift >= 0; shift -= 4) {
    const d = (h >>> shift) & 0xf;
    if (d === 0) return pos;
    buf[pos++] = 47 + d;
  }
  for (let shift = 24; shift >= 0; shift -= 4) {
    const d = (l >>> shift) & 0xf;
    if (d === 0) return pos;
    buf[pos++] = 47 + d;
  }
  return pos;
}

const SLICE = 16_384;
/** The 8 byte-wide digits of a key, least significant first: 4 of lo (its top byte holds 4 bits), 4 of hi. */
const PASSES = 8;

/** One histogram per byte of the keys of [start, end), in one sequential read. */
function histograms(hi: Uint32Array, lo: Uint32Array, counts: Uint32Array, start: number, end: number): void {
  for (let i = start; i < end; i++) {
    const l = lo[i]!;
    const h = hi[i]!;
    counts[l & 0xff]!++;
    counts[256 + ((l >>> 8) & 0xff)]!++;
    counts[512 + ((l >>> 16) & 0xff)]!++;
    counts[768 + (l >>> 24)]!++;
    counts[1024 + (h & 0xff)]!++;
    counts[1280 + ((h >>> 8) & 0xff)]!++;
    counts[1536 + ((h >>> 16) & 0xff)]!++;
    counts[1792 + (h >>> 24)]!++;
  }
}

/** Turns pass `pass`'s histogram into start offsets; false when every key has the same byte there. */
function offsets(counts: Uint32Array, pass: number, n: number): boolean {
  const base = pass * 256;
  let sum = 0;
  for (let d = 0; d < 256; d++) {
    const c = counts[base + d]!;
    if (c === n) return false;
    counts[base + d] = sum;
    sum += c;
  }
  return true;
}

function scatter(
  pass: number,
  counts: Uint32Array,
  from: readonly [Uint32Array, Uint32Array, Uint32Array],
  to: readonly [Uint32Array, Uint32Array, Uint32Array],
  start: number,
  end: number,
): void {
  const [hi, lo, rows] = from;
  const [hi2, lo2, rows2] = to;
  const base = pass * 256;
  const shift = (pass & 3) * 8;
  const keys = pass < 4 ? lo : hi;
  for (let i = start; i < end; i++) {
    const at = counts[base + ((keys[i]! >>> shift) & 0xff)]!++;
    hi2[at] = hi[i]!;
    lo2[at] = lo[i]!;
    rows2[at] = rows[i]!;
  }
}

/**
 * Sorts (hi, lo, rows) together by (hi, lo), stably, in place of the arrays given (the result may
 * be in fresh arrays: use the returned ones). Passes whose byte is the same for every key are
 * skipped (short ids leave the low bytes empty).
 */
export function* sortByDigitKeys(
  hi: Uint32Array,
  lo: Uint32Array,
  rows: Uint32Array,
): Steps<{ hi: Uint32Array; lo: Uint32Array; rows: Uint32Array }> {
  const n = rows.length;
  const counts = new Uint32Array(PASSES * 256);
  for (let start = 0; start < n; start += SLICE) {
    histograms(hi, lo, counts, start, Math.min(n, start + SLICE));
    yield;
  }
  let from: [Uint32Array, Uint32Array, Uint32Array] = [hi, lo, rows];
  let to: [Uint32Array, Uint32Array, Uint32Array] | undefined;
  for (let pass = 0; pass < PASSES; pass++) {
    if (!offsets(counts, pass, n)) continue;
    to ??= [new Uint32Array(n), new Uint32Array(n), new Uint32Array(n)];
    for (let start = 0; start < n; start += SLICE) {
      scatter(pass, counts, from, to, start, Math.min(n, start + SLICE));
      yield;
    }
    const t = from;
    from = to;
    to = t;
  }
  return { hi: from[0], lo: from[1], rows: from[2] };
}
