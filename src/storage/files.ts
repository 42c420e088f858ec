/**
 * Small file helpers shared by the storage adapters: atomic whole-file writes (temp file, fsync,
 * rename), JSON reads that fail with an error naming the file, and the reversible mapping from
 * draw ids to file names. Owns no state and knows nothing about draws.
 */
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { z } from 'zod';
import { StorageError } from './errors.js';

/** Longest accepted id, in UTF-8 bytes (keeps every derived file name well under 255 bytes). */
export const MAX_ID_BYTES = 150;

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
  if (stem.startsWith('~') && SAFE_ID.test(stem.slice(1))) return Buffer.from(stem.slice(1), 'base64url').toString('utf8');
  return undefined;
}

/**
 * Writes `data` (a string, or chunks written in order) to `file` atomically: a crash leaves either
 * the old or the new content.
 */
export async function writeFileAtomic(file: string, data: string | readonly Uint8Array[]): Promise<void> {
  const temp = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temp, 'w');
    try {
      if (typeof data === 'string') await handle.writeFile(data, 'utf8');
      else for (const chunk of data) await handle.writeFile(chunk);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw err;
  }
}

/** Reads a file as UTF-8; undefined when it does not exist. */
export async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Parses `text` as JSON and validates it, throwing STORAGE_CORRUPT naming `file` on any failure. */
export function parseJsonFile<T extends z.ZodType>(file: string, text: string, schema: T): z.output<T> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new StorageError('STORAGE_CORRUPT', `${file} is not valid JSON (${(err as Error).message}); it was left untouched`, {
      cause: err,
    });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'unexpected shape';
    throw new StorageError('STORAGE_CORRUPT', `${file} has an unexpected shape at ${where}; it was left untouched`);
  }
  return parsed.data;
}
