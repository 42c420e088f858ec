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

/** Rows between clock checks, and how long a slice may run before it yields to I/O. */
const ROWS_PER_CHECK = 1_024;
const SLICE_MS = 8;

/** The entrants file of `drawId` holding `rows`, as UTF-8 chunks (yields every few ms). */
export async function entrantsFileChunks(drawId: string, rows: FrozenRows): Promise<Buffer[]> {
  const out = new ByteChunks();
  out.text(`{"version":1,"drawId":${JSON.stringify(drawId)},"entrants":[`);
  const n = rows.length;
  let sliceStart = performance.now();
  for (let i = 0; i < n; i++) {
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
    if (i % ROWS_PER_CHECK === ROWS_PER_CHECK - 1 && performance.now() - sliceStart >= SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
  out.text(']}');
  return out.end();
}
