/**
 * A simulated disk for power-cut tests, in the spirit of SQLite's crash-test VFS and ALICE: an
 * in-memory FileSystem (src/storage/disk.ts) that records every operation the storage makes, and
 * rebuilds the states a real disk could hold if the power went off after any prefix of them.
 *
 * Model (what POSIX promises, nothing more):
 * - A file's bytes survive up to the length it had at its last sync/datasync; unsynced bytes are
 *   lost (files are only ever appended to, or written whole before their first sync).
 * - A name (create, mkdir, rename, link, unlink in a directory) survives once its directory was
 *   synced after it. An unsynced name change may or may not survive: each state applies a subset
 *   of them, in the order they were made (all subsets when there are at most MAX_FREE of them,
 *   otherwise each prefix in operation order, as a metadata journal commits them).
 * - A surviving name of a file points at that file's surviving bytes (so a rename that survived
 *   over a file whose data was never synced leaves an empty or short file).
 */
import { posix } from 'node:path';
import type { FileSystem, OpenFile } from '../../src/storage/disk.js';

type Entry = { kind: 'dir' } | { kind: 'file'; ino: number };

export type Op =
  | { t: 'create'; dir: string; path: string; ino: number }
  | { t: 'mkdir'; dir: string; path: string }
  | { t: 'write'; ino: number; bytes: number }
  | { t: 'sync'; ino: number }
  | { t: 'rename'; dir: string; from: string; to: string }
  | { t: 'link'; dir: string; existing: string; path: string }
  | { t: 'unlink'; dir: string; path: string }
  | { t: 'syncdir'; dir: string };

/** Unsynced name changes up to which every subset is tried (2^MAX_FREE states per cut). */
const MAX_FREE = 4;

const enoent = (path: string) => Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
const eexist = (path: string) => Object.assign(new Error(`EEXIST: ${path}`), { code: 'EEXIST' });

/** What the disk held when a test started: names and file contents (all durable). */
export interface DiskImage {
  names: Map<string, Entry>;
  files: Map<number, Buffer>;
}

export function emptyImage(dirs: string[]): DiskImage {
  const names = new Map<string, Entry>([['/', { kind: 'dir' }]]);
  for (const d of dirs) names.set(d, { kind: 'dir' });
  return { names, files: new Map() };
}

export class PowerCutFs implements FileSystem {
  readonly ops: Op[] = [];
  private readonly names: Map<string, Entry>;
  private readonly data = new Map<number, Buffer>();
  private nextIno: number;
  private readonly base: DiskImage;

  constructor(image: DiskImage) {
    this.base = image;
    this.names = new Map(image.names);
    for (const [ino, bytes] of image.files) this.data.set(ino, Buffer.from(bytes));
    this.nextIno = Math.max(0, ...image.files.keys()) + 1;
  }

  private file(path: string): number {
    const e = this.names.get(path);
    if (!e) throw enoent(path);
    if (e.kind !== 'file') throw Object.assign(new Error(`EISDIR: ${path}`), { code: 'EISDIR' });
    return e.ino;
  }

  private parentExists(path: string): void {
    if (this.names.get(posix.dirname(path))?.kind !== 'dir') throw enoent(path);
  }

  async readFile(path: string): Promise<Buffer> {
    return Buffer.from(this.data.get(this.file(path))!);
  }

  async readdir(dir: string): Promise<string[]> {
    if (this.names.get(dir)?.kind !== 'dir') throw enoent(dir);
    const out: string[] = [];
    for (const p of this.names.keys()) if (p !== dir && posix.dirname(p) === dir) out.push(posix.basename(p));
    return out.sort();
  }

  async exists(path: string): Promise<boolean> {
    return this.names.has(path);
  }

  async mkdir(dir: string): Promise<boolean> {
    if (this.names.has(dir)) return false;
    this.parentExists(dir);
    this.names.set(dir, { kind: 'dir' });
    this.ops.push({ t: 'mkdir', dir: posix.dirname(dir), path: dir });
    return true;
  }

  private create(path: string): number {
    this.parentExists(path);
    const ino = this.nextIno++;
    this.data.set(ino, Buffer.alloc(0));
    this.names.set(path, { kind: 'file', ino });
    this.ops.push({ t: 'create', dir: posix.dirname(path), path, ino });
    return ino;
  }

  private handle(ino: number): OpenFile {
    return {
      write: async (bytes) => {
        this.data.set(ino, Buffer.concat([this.data.get(ino)!, bytes]));
        this.ops.push({ t: 'write', ino, bytes: bytes.length });
      },
      sync: async () => {
        this.ops.push({ t: 'sync', ino });
      },
      datasync: async () => {
        this.ops.push({ t: 'sync', ino });
      },
      size: async () => this.data.get(ino)!.length,
      read: async (position, length) => Buffer.from(this.data.get(ino)!.subarray(position, position + length)),
      close: async () => undefined,
    };
  }

  async openNew(path: string): Promise<OpenFile> {
    if (this.names.has(path)) throw eexist(path);
    return this.handle(this.create(path));
  }

  async openAppend(path: string): Promise<OpenFile> {
    return this.handle(this.names.has(path) ? this.file(path) : this.create(path));
  }

  async rename(from: string, to: string): Promise<void> {
    const e = this.names.get(from);
    if (!e) throw enoent(from);
    this.parentExists(to);
    if (posix.dirname(from) !== posix.dirname(to)) throw new Error('PowerCutFs: renames across directories are not modelled');
    this.names.delete(from);
    this.names.set(to, e);
    this.ops.push({ t: 'rename', dir: posix.dirname(from), from, to });
  }

  async link(existing: string, path: string): Promise<void> {
    const ino = this.file(existing);
    if (this.names.has(path)) throw eexist(path);
    this.names.set(path, { kind: 'file', ino });
    this.ops.push({ t: 'link', dir: posix.dirname(path), existing, path });
  }

  async unlink(path: string): Promise<void> {
    if (!this.names.has(path)) return;
    this.names.delete(path);
    this.ops.push({ t: 'unlink', dir: posix.dirname(path), path });
  }

  async syncDir(dir: string): Promise<void> {
    if (this.names.get(dir)?.kind !== 'dir') throw enoent(dir);
    this.ops.push({ t: 'syncdir', dir });
  }

  /** The synced length of file `ino` after the first `cut` operations. */
  syncedLength(ino: number, cut: number): number {
    let written = 0;
    let synced = 0;
    for (let i = 0; i < cut; i++) {
      const op = this.ops[i]!;
      if (op.t === 'write' && op.ino === ino) written += op.bytes;
      else if (op.t === 'sync' && op.ino === ino) synced = written;
    }
    return (this.base.files.get(ino)?.length ?? 0) + synced;
  }

  /** The first `length` bytes of file `ino`, as text. */
  readSynced(ino: number, length: number): string {
    return this.data.get(ino)!.subarray(0, length).toString('utf8');
  }

  /** The bytes of file `ino` that survive a cut after `cut` operations. */
  private survivingBytes(ino: number, cut: number): Buffer {
    return this.data.get(ino)!.subarray(0, this.syncedLength(ino, cut));
  }

  /**
   * Every disk a power cut after the first `cut` operations could leave (see the module comment).
   * Each is a fresh image to start a new PowerCutFs on.
   */
  imagesAfter(cut: number): DiskImage[] {
    const done = this.ops.slice(0, cut);
    const lastDirSync = new Map<string, number>();
    done.forEach((op, i) => {
      if (op.t === 'syncdir') lastDirSync.set(op.dir, i);
    });
    const naming = (op: Op): op is Extract<Op, { dir: string }> & { t: 'create' | 'mkdir' | 'rename' | 'link' | 'unlink' } =>
      op.t === 'create' || op.t === 'mkdir' || op.t === 'rename' || op.t === 'link' || op.t === 'unlink';
    const free: number[] = [];
    done.forEach((op, i) => {
      if (naming(op) && !((lastDirSync.get(op.dir) ?? -1) > i)) free.push(i);
    });
    const subsets: Set<number>[] = [];
    if (free.length <= MAX_FREE) {
      for (let mask = 0; mask < 1 << free.length; mask++) subsets.push(new Set(free.filter((_, b) => mask & (1 << b))));
    } else {
      for (let n = 0; n <= free.length; n++) subsets.push(new Set(free.slice(0, n)));
    }
    return subsets.map((chosen) => this.image(done, cut, chosen));
  }

  private image(done: Op[], cut: number, chosen: Set<number>): DiskImage {
    const names = new Map(this.base.names);
    const lastDirSync = new Map<string, number>();
    done.forEach((op, i) => {
      if (op.t === 'syncdir') lastDirSync.set(op.dir, i);
    });
    done.forEach((op, i) => {
      if (op.t === 'write' || op.t === 'sync' || op.t === 'syncdir') return;
      const durable = (lastDirSync.get(op.dir) ?? -1) > i || chosen.has(i);
      if (!durable || names.get(op.dir)?.kind !== 'dir') return;
      if (op.t === 'create') names.set(op.path, { kind: 'file', ino: op.ino });
      else if (op.t === 'mkdir') names.set(op.path, { kind: 'dir' });
      else if (op.t === 'unlink') names.delete(op.path);
      else if (op.t === 'link') {
        const e = names.get(op.existing);
        if (e) names.set(op.path, e);
      } else {
        const e = names.get(op.from);
        if (!e) return;
        names.delete(op.from);
        names.set(op.to, e);
      }
    });
    // Names whose directory did not survive are gone with it.
    for (const p of [...names.keys()]) {
      for (let d = posix.dirname(p); d !== '/'; d = posix.dirname(d)) {
        if (names.get(d)?.kind !== 'dir') {
          names.delete(p);
          break;
        }
      }
    }
    const files = new Map<number, Buffer>();
    for (const e of names.values()) if (e.kind === 'file' && !files.has(e.ino)) files.set(e.ino, Buffer.from(this.survivingBytes(e.ino, cut)));
    return { names, files };
  }
}
