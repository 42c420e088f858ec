/**
 * The frozen entrant list of a closed draw on disk: `<dataDir>/draws/<id>.entrants.tsv`, format
 * version 2, and the reading of version 1 (`<id>.entrants.json`, written before version 2).
 *
 *   version 2: one header line, then the canonical lines of fairness/procedure.ts step 3, exactly the bytes
 *              the entrants digest hashes (so SHA-256 of everything after the first LF is the
 *              record's entrantsDigest):
 *                giftdrop-entrants\t2\t<draw id as a JSON string>\t<count>\n
 *                <userId>\t<login>\t<weight>\n   (one per entrant, canonical order)
 *   version 1: `{"version":1,"drawId":...,"entrants":[[userId, login, weight], ...]}`.
 *
 * Contract: `entrantsFileChunks` builds a version 2 file as UTF-8 chunks ready to be written; when
 * the list still holds the bytes its digest hashed (a list frozen this run) they are written as
 * they are, otherwise the lines are serialised from the rows in slices that yield to I/O.
 * `parseEntrantsFile` reads either version into [userId, login, weight] rows and throws
 * STORAGE_CORRUPT naming the file on anything malformed. Does not: validate fairness (verify
 * recomputes the digest), read or write files, or know about draws beyond the id.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { writeLine } from '../fairness/index.js';
import { runSliced, runToEnd, type Steps } from '../fairness/steps.js';
import type { FrozenEntrant, FrozenRows } from '../giveaway/model.js';
import { ByteChunks } from '../shared/byte-chunks.js';
import { StorageError } from './errors.js';
import { parseJsonFile } from './files.js';
import { entrantsFileSchema } from './schemas.js';

const ENTRANTS_FILE_VERSION = 2;
/** File name suffixes, by version. */
export const ENTRANTS_SUFFIX = '.entrants.tsv';
export const ENTRANTS_SUFFIX_V1 = '.entrants.json';

const MAGIC = 'giftdrop-entrants';
/** Rows per slice; the driver yields to I/O once a slice has run SLICE_MS. */
const ROWS_PER_SLICE = 4_096;
const SLICE_MS = 8;

/** Rows [start, end) as canonical lines (a plain function, so V8 optimises its loop). */
function writeRows(out: ByteChunks, rows: FrozenRows, start: number, end: number): void {
  for (let i = start; i < end; i++) writeLine(out, rows.userId(i), rows.login(i), rows.weight(i));
}

/** The version 2 entrants file of `drawId` holding `rows`, as UTF-8 chunks (yields every few ms). */
export async function entrantsFileChunks(drawId: string, rows: FrozenRows): Promise<Buffer[]> {
  const header = Buffer.from(`${MAGIC}\t${ENTRANTS_FILE_VERSION}\t${JSON.stringify(drawId)}\t${rows.length}\n`, 'utf8');
  const built = rows.takeCanonicalBytes?.();
  if (built) return [header, ...built];
  const out = new ByteChunks();
  out.chunks.push(header);
  const n = rows.length;
  let sliceStart = performance.now();
  for (let start = 0; start < n; start += ROWS_PER_SLICE) {
    writeRows(out, rows, start, Math.min(n, start + ROWS_PER_SLICE));
    if (performance.now() - sliceStart >= SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
  return out.end();
}

function corrupt(file: string, what: string): StorageError {
  return new StorageError('STORAGE_CORRUPT', `${file} ${what}; it was left untouched`);
}

/** Entrants per step of `version2Steps` (a slice of the event loop runs several steps). */
const LINES_PER_STEP = 4096;

/**
 * A version 2 body: the canonical lines after the header, checked against the header's count; in
 * steps (fairness/steps.ts), so `parseEntrantsFileSliced` reads a big list without holding the loop.
 */
function* version2Steps(file: string, text: string): Steps<FrozenEntrant[]> {
  const eol = text.indexOf('\n');
  const header = (eol < 0 ? text : text.slice(0, eol)).split('\t');
  if (header.length !== 4 || header[0] !== MAGIC) throw corrupt(file, 'has no giftdrop-entrants header');
  if (header[1] !== String(ENTRANTS_FILE_VERSION)) throw corrupt(file, `has unknown version ${header[1]}`);
  const count = Number(header[3]);
  if (!Number.isSafeInteger(count) || count < 0) throw corrupt(file, 'has a bad entrant count in its header');
  const entrants = new Array<FrozenEntrant>(count);
  let at = eol + 1;
  for (let i = 0; i < count; i++) {
    const end = text.indexOf('\n', at);
    if (end < 0) throw corrupt(file, `ends after ${i} of ${count} entrants`);
    const tab1 = text.indexOf('\t', at);
    const tab2 = tab1 < 0 || tab1 > end ? -1 : text.indexOf('\t', tab1 + 1);
    const tab3 = tab2 < 0 || tab2 > end ? -1 : text.indexOf('\t', tab2 + 1);
    if (tab2 < 0 || tab2 > end || (tab3 >= 0 && tab3 < end)) {
      throw corrupt(file, `line ${i + 2} is not userId<TAB>login<TAB>weight`);
    }
    const weightText = text.slice(tab2 + 1, end);
    const weight = Number(weightText);
    if (!/^[1-9][0-9]*$/.test(weightText) || !Number.isSafeInteger(weight)) {
      throw corrupt(file, `line ${i + 2} has a weight that is not a positive integer`);
    }
    entrants[i] = { userId: text.slice(at, tab1), login: text.slice(tab1 + 1, tab2), weight };
    at = end + 1;
    if (i % LINES_PER_STEP === LINES_PER_STEP - 1) yield;
  }
  if (at !== text.length) throw corrupt(file, `has more lines than the ${count} entrants its header counts`);
  return entrants;
}

/** The entrants of an entrants file of either version (told apart by its first byte). */
export function parseEntrantsFile(file: string, text: string): FrozenEntrant[] {
  if (text.startsWith('{')) return parseVersion1(file, text);
  return runToEnd(version2Steps(file, text));
}

/** `parseEntrantsFile` on the event loop, a slice at a time (a version 2 file: the bot's own). */
export function parseEntrantsFileSliced(file: string, text: string): Promise<FrozenEntrant[]> {
  if (text.startsWith('{')) return Promise.resolve(parseVersion1(file, text));
  return runSliced(version2Steps(file, text));
}

function parseVersion1(file: string, text: string): FrozenEntrant[] {
  const body = parseJsonFile(file, text, entrantsFileSchema);
  return body.entrants.map(([userId, login, weight]) => ({ userId, login, weight }));
}
