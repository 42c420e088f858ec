/**
 * The disk protocol: the only way the bot writes under DATA_DIR. What is on the disk after a power
 * cut is what was synced, so every write follows one of two shapes:
 * - whole files (`writeAtomic`): new temp file (0600) -> write -> sync -> close -> rename over the
 *   target -> sync of the directory. A crash leaves the old or the new content, never a mix; once
 *   the call resolves a power cut keeps the new content.
 * - appends (`openAppend`, the entry journal, the event-id log, the history log): the file is
 *   created if missing and its directory synced at once, before any line in it is relied on; each
 *   `append` is followed by a `datasync` of the caller's choosing (the journal: once per flush
 *   interval; the event-id and history logs: before the caller is answered).
 * New directories (`mkdirs`) are synced into their parent before anything is written in them.
 * Removals (`remove`) are not synced: a removed file that comes back after a power cut is one its
 * reader already ignores (a finished draw's journal or seed).
 *
 * Everything runs over an injected FileSystem (the operations below, nothing more), so a test can
 * record every operation and rebuild what a disk could hold after a power cut at any point (see
 * test/storage-power-cut.test.ts). The OS-specific parts (directory sync on Windows, rename retry
 * while an antivirus holds a file) are src/platform/files.ts, with the platform passed explicitly.
 * Does not: know what the files hold (the storage adapters do), lock the directory (lock.ts).
 */
import { randomBytes } from 'node:crypto';
import { link, lstat, mkdir, open, readdir, readFile, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { renameReplacing, syncDirectory } from '../platform/files.js';

/** Mode of every file the storage creates (owner read/write only). */
const FILE_MODE = 0o600;
/** Mode of every directory the storage creates (owner only). */
const DIR_MODE = 0o700;

/** An open file, as the disk protocol uses it. */
export interface OpenFile {
  /** Writes at the end of the file (an append handle) or after the previous write (a new file). */
  write(data: Uint8Array): Promise<void>;
  /** fsync: data and metadata on the disk. */
  sync(): Promise<void>;
  /** fdatasync: data (and the size) on the disk. */
  datasync(): Promise<void>;
  size(): Promise<number>;
  /** `length` bytes from `position`. */
  read(position: number, length: number): Promise<Buffer>;
  close(): Promise<void>;
}

/** The file-system operations the protocol runs on (injected; `nodeFileSystem` for the real one). */
export interface FileSystem {
  /** Throws ENOENT when missing. */
  readFile(path: string): Promise<Buffer>;
  /** Names in `dir`; throws ENOENT when missing. */
  readdir(dir: string): Promise<string[]>;
  exists(path: string): Promise<boolean>;
  /** Creates one directory (its parent exists); false when it was already there. */
  mkdir(dir: string): Promise<boolean>;
  /** Creates `path` (throws EEXIST when it exists) for writing. */
  openNew(path: string): Promise<OpenFile>;
  /** Opens `path` for appending, creating it when missing. */
  openAppend(path: string): Promise<OpenFile>;
  rename(from: string, to: string): Promise<void>;
  /** A second name for a file; throws when the file system has no hard links (EPERM, ENOTSUP, ...). */
  link(existing: string, newPath: string): Promise<void>;
  /** Removes a file; a missing one is fine. */
  unlink(path: string): Promise<void>;
  /** Makes the names created, renamed or removed in `dir` durable (where the OS can). */
  syncDir(dir: string): Promise<void>;
}

function nodeOpenFile(handle: FileHandle): OpenFile {
  return {
    write: async (data) => {
      await handle.write(data);
    },
    sync: () => handle.sync(),
    datasync: () => handle.datasync(),
    size: async () => (await handle.stat()).size,
    read: async (position, length) => {
      const buf = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buf, 0, length, position);
      return buf.subarray(0, bytesRead);
    },
    close: () => handle.close(),
  };
}

/** The real file system of this machine, with `platform`'s directory sync and rename rules. */
export function nodeFileSystem(platform: NodeJS.Platform): FileSystem {
  return {
    readFile: (path) => readFile(path),
    readdir: (dir) => readdir(dir),
    exists: (path) =>
      lstat(path).then(
        () => true,
        () => false,
      ),
    mkdir: async (dir) => {
      try {
        await mkdir(dir, { mode: DIR_MODE });
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw err;
      }
    },
    openNew: async (path) => nodeOpenFile(await open(path, 'wx', FILE_MODE)),
    openAppend: async (path) => nodeOpenFile(await open(path, 'a+', FILE_MODE)),
    rename: (from, to) => renameReplacing(from, to, platform),
    link: (existing, newPath) => link(existing, newPath),
    unlink: (path) => rm(path, { force: true }),
    syncDir: (dir) => syncDirectory(dir, platform),
  };
}

const TEMP_NAME = /^\..+\.[0-9a-f]{12}\.tmp$/;

function tempName(file: string): string {
  return join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
}

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ENOENT';
}

/** A timestamp usable in file names: `2026-05-01T20-15-03-123Z`. */
function fileTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[:.]/g, '-');
}

/** A file opened for appending (module comment): append, then datasync when the lines must hold. */
export interface AppendFile {
  append(data: Uint8Array): Promise<void>;
  datasync(): Promise<void>;
  size(): Promise<number>;
  read(position: number, length: number): Promise<Buffer>;
  close(): Promise<void>;
}

export interface AtomicWriteOptions {
  /**
   * Keep the file's current content as `<file>.bak` (a hard link to the synced current file, or
   * a synced copy where there are no hard links) before replacing it.
   */
  backup?: boolean;
}

/** The disk protocol over one FileSystem (module comment). */
export class Disk {
  constructor(readonly fs: FileSystem) {}

  /** Writes `data` (a string, or chunks in order) to `file` by the whole-file protocol. */
  async writeAtomic(
    file: string,
    data: string | readonly Uint8Array[],
    options: AtomicWriteOptions = {},
  ): Promise<void> {
    const temp = tempName(file);
    try {
      await this.writeSynced(temp, data);
      if (options.backup) await this.keepBackup(file);
      await this.fs.rename(temp, file);
    } catch (err) {
      await this.fs.unlink(temp).catch(() => undefined);
      throw err;
    }
    await this.fs.syncDir(dirname(file));
  }

  /** Creates `file` with `data` by the whole-file protocol unless it exists; true when it wrote it. */
  async createOnce(file: string, data: string): Promise<boolean> {
    if (await this.fs.exists(file)) return false;
    await this.writeAtomic(file, data);
    return true;
  }

  /** A new file (0600) holding `data`, synced and closed. */
  private async writeSynced(path: string, data: string | readonly Uint8Array[]): Promise<void> {
    const handle = await this.fs.openNew(path);
    try {
      for (const chunk of typeof data === 'string' ? [Buffer.from(data, 'utf8')] : data) await handle.write(chunk);
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  /** `<file>.bak` becomes the current, synced `<file>` (absent file: nothing to keep). */
  private async keepBackup(file: string): Promise<void> {
    const temp = tempName(`${file}.bak`);
    try {
      await this.fs.link(file, temp);
    } catch (err) {
      if (isMissing(err)) return;
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV' && code !== 'EMLINK') throw err;
      // A file system without hard links: a synced copy instead.
      const bytes = await this.readBytes(file);
      if (bytes === undefined) return;
      await this.writeSynced(temp, [bytes]);
    }
    try {
      await this.fs.rename(temp, `${file}.bak`);
    } catch (err) {
      await this.fs.unlink(temp).catch(() => undefined);
      throw err;
    }
  }

  /** Opens `file` for appending (created 0600 when missing) with its directory synced. */
  async openAppend(file: string): Promise<AppendFile> {
    const handle = await this.fs.openAppend(file);
    try {
      // Whether this process created it or a previous one did (and died before syncing its
      // directory), the name is made durable before any line in the file is relied on.
      await this.fs.syncDir(dirname(file));
    } catch (err) {
      await handle.close();
      throw err;
    }
    return {
      append: (data) => handle.write(data),
      datasync: () => handle.datasync(),
      size: () => handle.size(),
      read: (position, length) => handle.read(position, length),
      close: () => handle.close(),
    };
  }

  /** Creates `dir` and its missing parents (0700), each synced into its parent. */
  async mkdirs(dir: string): Promise<void> {
    if (await this.fs.exists(dir)) return;
    const parent = dirname(dir);
    if (parent !== dir) await this.mkdirs(parent);
    if (await this.fs.mkdir(dir)) await this.fs.syncDir(parent);
  }

  /** Reads a file; undefined when it does not exist. */
  async readBytes(file: string): Promise<Buffer | undefined> {
    try {
      return await this.fs.readFile(file);
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  /** Reads a file as UTF-8; undefined when it does not exist. */
  async readText(file: string): Promise<string | undefined> {
    return (await this.readBytes(file))?.toString('utf8');
  }

  /** Names in `dir`; empty when it does not exist. */
  async list(dir: string): Promise<string[]> {
    try {
      return await this.fs.readdir(dir);
    } catch (err) {
      if (isMissing(err)) return [];
      throw err;
    }
  }

  /** Removes `file` (missing is fine); not synced (module comment). */
  remove(file: string): Promise<void> {
    return this.fs.unlink(file);
  }

  /**
   * Renames a damaged `file` to `<file>.corrupt-<timestamp>` (kept for inspection, never deleted),
   * durably, and returns the new path.
   */
  async quarantine(file: string, nowMs: number): Promise<string> {
    const target = await this.quarantineName(file, nowMs);
    await this.renameDurably(file, target);
    return target;
  }

  /** Renames `from` to `to` (same directory) and syncs the directory. */
  async renameDurably(from: string, to: string): Promise<void> {
    await this.fs.rename(from, to);
    await this.fs.syncDir(dirname(from));
  }

  private async quarantineName(file: string, nowMs: number): Promise<string> {
    let target = `${file}.corrupt-${fileTimestamp(nowMs)}`;
    for (let n = 2; await this.fs.exists(target); n++) target = `${file}.corrupt-${fileTimestamp(nowMs)}-${n}`;
    return target;
  }

  /**
   * Replaces a damaged `file` by `data` (by the whole-file protocol) and keeps the damaged content
   * as `<file>.corrupt-<timestamp>` (also by the protocol); at no moment is `file` missing.
   * Returns the kept copy's path.
   */
  async replaceKeepingDamaged(file: string, data: string | readonly Uint8Array[], nowMs: number): Promise<string> {
    const target = await this.quarantineName(file, nowMs);
    const damaged = await this.readBytes(file);
    await this.writeAtomic(target, damaged ? [damaged] : []);
    await this.writeAtomic(file, data);
    return target;
  }

  /** Deletes temp files a killed writer left in `dir` (names made by writeAtomic only). */
  async removeStaleTemps(dir: string): Promise<void> {
    for (const name of await this.list(dir)) if (TEMP_NAME.test(name)) await this.fs.unlink(join(dir, name));
  }
}

/** The protocol on this machine's file system (the bot's; tests inject their own FileSystem). */
export const nodeDisk = new Disk(nodeFileSystem(process.platform));
