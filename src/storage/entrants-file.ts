/**
 * The bytes of `<dataDir>/draws/<id>.entrants.json` (format version 1, see schemas.ts), built
 * from a frozen list read by position, in slices that yield to I/O, as UTF-8 chunks ready to be
 * written. The output is byte-identical to `JSON.stringify({ version: 1, drawId, entrants: [[userId,
 * login, weight], ...] })`, so readers (`npm run verify`, the history export) see the same file as
 * before; it is just never built as one big string or one array of rows.
 *
 * Contract: pure serialisation; the caller writes the chunks (atomically). Does not: validate the
 * list (the engine froze it), read files, or know about draws beyond the id.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FrozenRows } from '../giveaway/ports.js';
import { ByteChunks } from '../shared/byte-chunks.js';

/** Rows per slice; the driver yields to I/O once a slice has run SLICE_MS. */
const ROWS_PER_SLICE = 4_096;
const SLICE_MS = 8;

/** Rows [start, end) as JSON array rows (a plain function, so V8 optimises its loop). */
function writeRows(out: ByteChunks, rows: FrozenRows, start: number, end: number): void {
  for (let i = start; i < end; i++) {
    if (i > 0) out.byte(0x2c);
    out.byte(0x5b);
    out.jsonString(rows.userId(i));
    out.byte(0x2c);
    out.jsonString(rows.login(i));
    out.byte(0x2c);
    const w = rows.weight(i);
    if (w < 10) out.byte(0x30 + w);
    else out.text(String(w));
    out.byte(0x5d);
  }
}

/** The entrants file of `drawId` holding `rows`, as UTF-8 chunks (yields every few ms). */
export async function entrantsFileChunks(drawId: string, rows: FrozenRows): Promise<Buffer[]> {
  const out = new ByteChunks();
  out.text(`{"version":1,"drawId":${JSON.stringify(drawId)},"entrants":[`);
  const n = rows.length;
  let sliceStart = performance.now();
  for (let start = 0; start < n; start += ROWS_PER_SLICE) {
    writeRows(out, rows, start, Math.min(n, start + ROWS_PER_SLICE));
    if (performance.now() - sliceStart >= SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
  out.text(']}');
  return out.end();
}
