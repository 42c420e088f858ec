/**
 * Small file helpers shared by the storage adapters: the disk protocol's whole-file write and read
 * on this machine for writers outside the repository (disk.ts owns the protocol), the start-up refusal of a
 * secret file that other users can write (`checkPrivate`, per OS: platform/protection.ts), JSON reads that fail with an
 * error naming the file, and the reversible mapping from draw ids to file names. Owns no state and
 * knows nothing about draws.
 */
import type { z } from 'zod';
import { privacyProblem } from '../platform/protection.js';
import { nodeDisk } from './disk.js';
import { StorageError } from './errors.js';

/** Longest accepted id, in UTF-8 bytes (keeps every derived file name well under 255 bytes). */
const MAX_ID_BYTES = 150;

const SAFE_ID = /^[A-Za-z0-9_-]+$/;

/**
 * The file-name stem for an id: the id itself when it is made of `[A-Za-z0-9_-]`, otherwise `~`
 * followed by the base64url of its UTF-8 bytes. Throws StorageError for empty or too long ids.
 */
export function fileStem(id: string): string {
  if (typeof id !== 'string' || id.length === 0 || Buffer.byteLength(id) > MAX_ID_BYTES) {
    throw new StorageError('STORAGE_INVALID', `id must be 1-${MAX_ID_BYTES} bytes`);
  }
  return SAFE_ID.test(id) ? id : `~${Buffer.from(id, 'utf8').toString('base64url')}`;
}

/** Inverse of fileStem; undefined for names fileStem never produces. */
export function idFromStem(stem: string): string | undefined {
  if (SAFE_ID.test(stem)) return stem;
  if (stem.startsWith('~') && SAFE_ID.test(stem.slice(1)))
    return Buffer.from(stem.slice(1), 'base64url').toString('utf8');
  return undefined;
}

/** Throws StorageError('STORAGE_UNSAFE') with platform/protection.ts `privacyProblem`'s line when there is one (never on Windows). */
export async function checkPrivate(path: string, what: string): Promise<void> {
  const problem = privacyProblem(path, what, process.platform);
  if (problem) throw new StorageError('STORAGE_UNSAFE', problem);
}

/**
 * Writes `data` to `file` by the disk protocol's whole-file shape (disk.ts `writeAtomic`) on this
 * machine's file system: for writers outside the repository (merch train, whisper queue).
 */
export function writeFileAtomic(file: string, data: string | readonly Uint8Array[]): Promise<void> {
  return nodeDisk.writeAtomic(file, data);
}

/** Reads a file as UTF-8 from this machine's file system; undefined when it does not exist. */
export function readIfExists(file: string): Promise<string | undefined> {
  return nodeDisk.readText(file);
}

/** Parses `text` as JSON and validates it, throwing STORAGE_CORRUPT naming `file` on any failure. */
export function parseJsonFile<T extends z.ZodType>(file: string, text: string, schema: T): z.output<T> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new StorageError(
      'STORAGE_CORRUPT',
      `${file} is not valid JSON (${(err as Error).message}); it was left untouched`,
      {
        cause: err,
      },
    );
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'unexpected shape';
    throw new StorageError('STORAGE_CORRUPT', `${file} has an unexpected shape at ${where}; it was left untouched`);
  }
  return parsed.data;
}
