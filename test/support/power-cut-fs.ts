/**
 * A simulated disk for power-cut tests, in the spirit of SQLite's crash-test VFS and ALICE: an
 * in-memory FileSystem (src/storage/disk.ts) that records every operation the storage makes, and
 * rebuilds the states a real disk could hold if the power went off after any prefix of them.
 *
 * Model (what POSIX promises, nothing more):
 * - A file's bytes up to the length it had at its last successful sync/datasync survive. Its
 *   unsynced tail (written since, files are only ever appended to or written whole before their
 *   first sync) may survive whole, in part (cut at any byte), zero-filled to the new size (the
 *   size reached the disk, the data did not), or not at all; independently per file
 *   (`tailVariants` picks which of these a state gets).
 * - A name (create, mkdir, rename, link, unlink in a directory) survives once its directory was
 *   synced after it. An unsynced name change may or may not survive: each state applies a subset
 *   of them, in the order they were made (all subsets when there are at most MAX_FREE of them,
 *   otherwise each prefix in operation order, as a metadata journal commits them).
 * - A surviving name of a file points at that file's surviving bytes (so a rename that survived
 *   over a file whose data was never synced leaves an empty, short, torn or zero-filled file).
 * - Faults on demand (`failNext`): a sync that fails with EIO makes nothing durable (the bytes
 *   stay written, unsynced); a write that fails with ENOSPC writes a prefix of its bytes first (a
 *   short write) and throws.
 * - `syncDelay`: a recorded run's syncs take real time (as a disk's do), so a reply sent before a
 *   sync reaches its client before the sync is recorded.
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
  | { t: 'syncdir'; dir: string }
  | { t: 'fault'; ino: number; code: string; on: 'sync' | 'write' };

/** Unsynced name changes up to which every subset is tried (2^MAX_FREE states per cut). */
const MAX_FREE = 4;

const enoent = (path: string) => Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
const eexist = (path: string) => Object.assign(new Error(`EEXIST: ${path}`), { code: 'EEXIST' });

/** What the disk held when a test started: names and file contents (all durable). */
export interface DiskImage {
  names: Map<string, Entry>;
  files: Map<number, Buffer>;
}

/** A disk state after a cut, and how it was made (for the failure messages). */
export interface CutState {
  image: DiskImage;
  label: string;
}

/** What survives of one file's unsynced tail. */
export type Tail = 'none' | 'whole' | 'zeros' | { keep: number };

/** Which tail combinations a cut's states get (default 'torn': see statesAfter). */
export type TailMode = 'none' | 'torn';

export function emptyImage(dirs: string[]): DiskImage {
  const names = new Map<string, Entry>([['/', { kind: 'dir' }]]);
  for (const d of dirs) names.set(d, { kind: 'dir' });
  return { names, files: new Map() };
}

/** A fault `failNext` injects: the next `on` operation on a file whose path matches `path`. */
export interface Fault {
  on: 'sync' | 'write';
  path: RegExp;
  code: 'EIO' | 'ENOSPC';
}

/** A small deterministic generator (mulberry32), so every run tries the same torn states. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class PowerCutFs implements FileSystem {
  readonly ops: Op[] = [];
  private readonly names: Map<string, Entry>;
  private readonly data = new Map<number, Buffer>();
  /** The path each inode was created under (faults match on it). */
  private readonly pathOf = new Map<number, string>();
  private nextIno: number;
  private readonly base: DiskImage;
  private readonly faults: Fault[] = [];
  /** Awaited by every sync before it completes (recorded runs: a disk's sync takes time). */
  syncDelay: (() => Promise<void>) | undefined;

  constructor(image: DiskImage) {
    this.base = image;
    this.names = new Map(image.names);
    for (const [ino, bytes] of image.files) this.data.set(ino, Buffer.from(bytes));
    for (const [path, e] of image.names) if (e.kind === 'file') this.pathOf.set(e.ino, path);
    this.nextIno = Math.max(0, ...image.files.keys()) + 1;
  }

  /** Makes the next matching operation fail (see the module comment). */
  failNext(fault: Fault): void {
    this.faults.push(fault);
  }

  private takeFault(on: Fault['on'], ino: number): Fault | undefined {
    if (this.faults.length === 0) return undefined;
    // The file's names now (a file written whole was created under its temp name).
    const paths = [...this.names].filter(([, e]) => e.kind === 'file' && e.ino === ino).map(([p]) => p);
    const i = this.faults.findIndex((f) => f.on === on && paths.some((p) => f.path.test(p)));
    return i < 0 ? undefined : this.faults.splice(i, 1)[0];
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
    this.pathOf.set(ino, path);
    this.names.set(path, { kind: 'file', ino });
    this.ops.push({ t: 'create', dir: posix.dirname(path), path, ino });
    return ino;
  }

  private handle(ino: number): OpenFile {
    const sync = async () => {
      await this.syncDelay?.();
      const fault = this.takeFault('sync', ino);
      if (fault) {
        this.ops.push({ t: 'fault', ino, code: fault.code, on: 'sync' });
        throw Object.assign(new Error(`${fault.code}: i/o error, fsync`), { code: fault.code });
      }
      this.ops.push({ t: 'sync', ino });
    };
    return {
      write: async (bytes) => {
        const fault = this.takeFault('write', ino);
        const written = fault ? bytes.subarray(0, Math.floor(bytes.length / 2)) : bytes;
        if (written.length > 0) {
          this.data.set(ino, Buffer.concat([this.data.get(ino)!, written]));
          this.ops.push({ t: 'write', ino, bytes: written.length });
        }
        if (fault) {
          this.ops.push({ t: 'fault', ino, code: fault.code, on: 'write' });
          throw Object.assign(new Error(`${fault.code}: no space left on device, write`), { code: fault.code });
        }
      },
      sync,
      datasync: sync,
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
    if (posix.dirname(from) !== posix.dirname(to))
      throw new Error('PowerCutFs: renames across directories are not modelled');
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
    await this.syncDelay?.();
    this.ops.push({ t: 'syncdir', dir });
  }

  /** The length of file `ino` after the first `cut` operations: what was written, and what of it was synced. */
  lengths(ino: number, cut: number): { written: number; synced: number } {
    let written = this.base.files.get(ino)?.length ?? 0;
    let synced = written;
    for (let i = 0; i < cut; i++) {
      const op = this.ops[i]!;
      if (op.t === 'write' && op.ino === ino) written += op.bytes;
      else if (op.t === 'sync' && op.ino === ino) synced = written;
    }
    return { written, synced };
  }

  /** The synced length of file `ino` after the first `cut` operations. */
  syncedLength(ino: number, cut: number): number {
    return this.lengths(ino, cut).synced;
  }

  /** The first `length` bytes of file `ino`, as text. */
  readSynced(ino: number, length: number): string {
    return this.data.get(ino)!.subarray(0, length).toString('utf8');
  }

  /** The bytes of file `ino` that survive a cut after `cut` operations, with `tail` of its unsynced part. */
  private survivingBytes(ino: number, cut: number, tail: Tail): Buffer {
    const { written, synced } = this.lengths(ino, cut);
    const bytes = this.data.get(ino)!;
    if (tail === 'none' || written === synced) return bytes.subarray(0, synced);
    if (tail === 'whole') return bytes.subarray(0, written);
    if (tail === 'zeros') return Buffer.concat([bytes.subarray(0, synced), Buffer.alloc(written - synced)]);
    return bytes.subarray(0, synced + Math.min(tail.keep, written - synced));
  }

  /**
   * Every disk a power cut after the first `cut` operations could leave (see the module comment),
   * each a fresh image to start a new PowerCutFs on. Names: every subset (or prefix) of the
   * unsynced name changes. Tails (`tails` 'torn', the default): for the state where every unsynced
   * name change survived and the one where none did, every file's unsynced tail is lost, kept
   * whole, zero-filled, or cut at its first byte, its middle, its last byte and one byte chosen
   * by a generator seeded with the cut, one file at a time (the others lost), then all kept
   * whole, all zero-filled, and four mixes with each file's choice drawn independently; the other
   * name subsets lose every tail. `tails` 'none': only synced bytes survive (the old model).
   */
  statesAfter(cut: number, tails: TailMode = 'torn'): CutState[] {
    const done = this.ops.slice(0, cut);
    const lastDirSync = new Map<string, number>();
    done.forEach((op, i) => {
      if (op.t === 'syncdir') lastDirSync.set(op.dir, i);
    });
    const naming = (
      op: Op,
    ): op is Extract<Op, { dir: string }> & { t: 'create' | 'mkdir' | 'rename' | 'link' | 'unlink' } =>
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
    const out: CutState[] = [];
    subsets.forEach((chosen, k) => {
      const names = this.namesAfter(done, chosen);
      const extreme = k === 0 || k === subsets.length - 1;
      const combos = tails === 'torn' && extreme ? this.tailCombos(names, cut) : [new Map<number, Tail>()];
      for (const combo of combos)
        out.push({
          image: this.image(names, cut, combo),
          label: `cut after op ${cut}, names ${k + 1}/${subsets.length}, tails ${describe(combo)}`,
        });
    });
    return out;
  }

  /** The disks of `statesAfter`, without their labels. */
  imagesAfter(cut: number, tails: TailMode = 'torn'): DiskImage[] {
    return this.statesAfter(cut, tails).map((s) => s.image);
  }

  /** The tail combinations of `statesAfter` for the files under `names` with an unsynced tail. */
  private tailCombos(names: Map<string, Entry>, cut: number): Map<number, Tail>[] {
    const torn = new Map<number, number>();
    for (const e of names.values()) {
      if (e.kind !== 'file' || torn.has(e.ino)) continue;
      const { written, synced } = this.lengths(e.ino, cut);
      if (written > synced) torn.set(e.ino, written - synced);
    }
    const combos: Map<number, Tail>[] = [new Map()];
    if (torn.size === 0) return combos;
    const random = rng(cut * 7919 + torn.size);
    const choices = (length: number): Tail[] => {
      const keeps = [
        ...new Set([1, Math.floor(length / 2), length - 1, 1 + Math.floor(random() * (length - 1))]),
      ].filter((n) => n > 0 && n < length);
      return ['whole', 'zeros', ...keeps.map((keep) => ({ keep }))];
    };
    const options = new Map([...torn].map(([ino, length]) => [ino, choices(length)]));
    for (const [ino, list] of options) for (const tail of list) combos.push(new Map([[ino, tail]]));
    if (torn.size > 1) {
      combos.push(new Map([...torn.keys()].map((ino) => [ino, 'whole'])));
      combos.push(new Map([...torn.keys()].map((ino) => [ino, 'zeros'])));
      for (let n = 0; n < 4; n++) {
        combos.push(
          new Map(
            [...options].map(([ino, list]) => {
              const all: Tail[] = ['none', ...list];
              return [ino, all[Math.floor(random() * all.length)]!];
            }),
          ),
        );
      }
    }
    return combos;
  }

  /** The names a cut leaves when the unsynced name changes in `chosen` survived. */
  private namesAfter(done: Op[], chosen: Set<number>): Map<string, Entry> {
    const names = new Map(this.base.names);
    const lastDirSync = new Map<string, number>();
    done.forEach((op, i) => {
      if (op.t === 'syncdir') lastDirSync.set(op.dir, i);
    });
    done.forEach((op, i) => {
      if (op.t === 'write' || op.t === 'sync' || op.t === 'syncdir' || op.t === 'fault') return;
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
    return names;
  }

  private image(names: Map<string, Entry>, cut: number, tails: Map<number, Tail>): DiskImage {
    const files = new Map<number, Buffer>();
    for (const e of names.values()) {
      if (e.kind === 'file' && !files.has(e.ino))
        files.set(e.ino, Buffer.from(this.survivingBytes(e.ino, cut, tails.get(e.ino) ?? 'none')));
    }
    return { names: new Map(names), files };
  }

  /** The disk as it is now, every byte and name kept (a state to check after a run that did not cut). */
  current(): DiskImage {
    const files = new Map<number, Buffer>();
    for (const e of this.names.values()) if (e.kind === 'file') files.set(e.ino, Buffer.from(this.data.get(e.ino)!));
    return { names: new Map(this.names), files };
  }

  /** The path of every file (inode) this disk created or started with, current or not. */
  createdPath(ino: number): string | undefined {
    return this.pathOf.get(ino);
  }
}

function describe(combo: Map<number, Tail>): string {
  if (combo.size === 0) return 'lost';
  return [...combo].map(([ino, t]) => `#${ino}:${typeof t === 'string' ? t : `keep ${t.keep}`}`).join(',');
}
