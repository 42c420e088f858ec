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

const ROWS_PER_CHUNK = 8192;
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** A JSON string literal of `s` (JSON.stringify's, with a fast path for plain ASCII). */
function quote(s: string): string {
  return PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
}

/** The entrants file of `drawId` holding `rows`, as UTF-8 chunks (yields between chunks). */
export async function entrantsFileChunks(drawId: string, rows: FrozenRows): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  let text = `{"version":1,"drawId":${JSON.stringify(drawId)},"entrants":[`;
  const n = rows.length;
  for (let start = 0; start < n; start += ROWS_PER_CHUNK) {
    const end = Math.min(n, start + ROWS_PER_CHUNK);
    for (let i = start; i < end; i++) {
      text += `${i === 0 ? '' : ','}[${quote(rows.userId(i))},${quote(rows.login(i))},${rows.weight(i)}]`;
    }
    chunks.push(Buffer.from(text, 'utf8'));
    text = '';
    if (end < n) await nextTurn();
  }
  chunks.push(Buffer.from(`${text}]}`, 'utf8'));
  return chunks;
}
