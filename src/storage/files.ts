/**
 * Small file helpers shared by the storage adapters: durable whole-file writes (temp file, fsync,
 * rename, fsync of the directory), owner-only modes (files 0600, directories 0700), quarantine of a
 * damaged file (renamed `<name>.corrupt-<timestamp>`, never deleted), the start-up refusal of a
 * secret file that other users can write (`checkPrivate`, per OS: platform/protection.ts), JSON reads that fail with an
 * error naming the file, and the reversible mapping from draw ids to file names. Owns no state and
 * knows nothing about draws.
 */
import { randomBytes } from 'node:crypto';
import { copyFile, link, lstat, mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { z } from 'zod';
import { privacyProblem } from '../platform/protection.js';
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
  if (stem.startsWith('~') && SAFE_ID.test(stem.slice(1))) return Buffer.from(stem.slice(1), 'base64url').toString('utf8');
  return undefined;
}

/** Mode of every file the storage creates (owner read/write only). */
export const FILE_MODE = 0o600;
/** Mode of every directory the storage creates (owner only). */
const DIR_MODE = 0o700;

/** Creates `dir` (and missing parents) owner-only; an existing directory is left as it is. */
export async function mkdirPrivate(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
}

/** Throws StorageError('STORAGE_UNSAFE') with platform/protection.ts `privacyProblem`'s line when there is one (never on Windows). */
export async function checkPrivate(path: string, what: string): Promise<void> {
  const problem = privacyProblem(path, what, process.platform);
  if (problem) throw new StorageError('STORAGE_UNSAFE', problem);
}

const TEMP_NAME = /^\..+\.[0-9a-f]{12}\.tmp$/;

function tempName(file: string): string {
  return join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
}

/** Flushes a directory's entries (a rename in it) to disk; a no-op where directories cannot be opened. */
export async function fsyncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
  } catch {
    return;
  }
  try {
    await handle.sync();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'EPERM' && code !== 'EISDIR' && code !== 'EBADF') throw err;
  } finally {
    await handle.close();
  }
}

export interface WriteOptions {
  /**
   * Keep the file's current content as `<file>.bak` (hard link, no copy) before replacing it.
   * Only set it when the current file is known good, so `.bak` is always a good generation.
   */
  backup?: boolean;
}

/**
 * Writes `data` (a string, or chunks written in order) to `file` durably: temp file (0600), fsync,
 * rename over `file`, fsync of the directory. A crash leaves either the old or the new content,
 * and a power cut after it resolves keeps the new one.
 */
export async function writeFileAtomic(file: string, data: string | readonly Uint8Array[], options: WriteOptions = {}): Promise<void> {
  const temp = tempName(file);
  try {
    const handle = await open(temp, 'wx', FILE_MODE);
    try {
      if (typeof data === 'string') await handle.writeFile(data, 'utf8');
      else for (const chunk of data) await handle.writeFile(chunk);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (options.backup) await keepBackup(file);
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw err;
  }
  await fsyncDir(dirname(file));
}

/** `<file>.bak` becomes the current `<file>` (atomically replaced; absent file: nothing to keep). */
async function keepBackup(file: string): Promise<void> {
  const temp = tempName(`${file}.bak`);
  try {
    await link(file, temp);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV' && code !== 'EMLINK') throw err;
    // A file system without hard links: copy durably instead.
    const text = await readIfExists(file);
    if (text === undefined) return;
    const handle = await open(temp, 'wx', FILE_MODE);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
  try {
    await rename(temp, `${file}.bak`);
  } catch (err) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw err;
  }
}

/** A timestamp usable in file names: `2026-05-01T20-15-03-123Z`. */
function fileTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[:.]/g, '-');
}

/**
 * Renames a damaged `file` to `<file>.corrupt-<timestamp>` (kept for inspection, never deleted)
 * and returns the new path.
 */
export async function quarantineFile(file: string, nowMs: number): Promise<string> {
  const target = await quarantineName(file, nowMs);
  await rename(file, target);
  await fsyncDir(dirname(file));
  return target;
}

async function quarantineName(file: string, nowMs: number): Promise<string> {
  let target = `${file}.corrupt-${fileTimestamp(nowMs)}`;
  const taken = (path: string) => lstat(path).then(() => true, () => false);
  for (let n = 2; await taken(target); n++) target = `${file}.corrupt-${fileTimestamp(nowMs)}-${n}`;
  return target;
}

/**
 * Replaces a damaged `file` by `data` (durably) and keeps the damaged content as
 * `<file>.corrupt-<timestamp>`; at no moment is `file` missing. Returns the kept copy's path.
 */
export async function replaceKeepingDamaged(file: string, data: string | readonly Uint8Array[], nowMs: number): Promise<string> {
  const target = await quarantineName(file, nowMs);
  try {
    await link(file, target);
  } catch {
    await copyFile(file, target);
  }
  await writeFileAtomic(file, data);
  return target;
}

/** Deletes temp files a killed writer left in `dir` (names made by writeFileAtomic only). */
export async function removeStaleTemps(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) if (TEMP_NAME.test(name)) await rm(join(dir, name), { force: true });
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
