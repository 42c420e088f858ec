/**
 * The history's store: `<dataDir>/history.jsonl`, read and written by lowdb 7 through this adapter.
 *
 * Format: a header line `{"giftdrop":"history","version":2}`, then one draw record per line
 * (schemas.ts `storedRecordSchema`, compact JSON). A record saved again is appended again: the last
 * line of an id wins, and draws keep the order in which they first appeared.
 * Writing (`write`, what lowdb's `db.write()` calls): only the records that changed since the last
 * read or write are appended (those the repository marked with `touch`; without a mark, every
 * record that is a new object in `db.data.draws`, since the repository never edits a stored record
 * in place), then the file is synced (fdatasync) before the write resolves. So a save costs one record's bytes and one sync whatever the history's length. The
 * file itself is created (and compacted) whole by the disk protocol (temp, sync, rename, directory
 * sync), so its name is durable before anything is appended to it.
 * Compaction (`compact`): the log rewritten with one line per draw; the repository runs it when it
 * opens the folder and more than half the lines are superseded (a long session appends a few lines
 * per draw) or the last line is torn, never during a draw; and the write after a failed append
 * is one (a failed write or sync leaves unknown bytes at the end: never appended after).
 * Reading (`read`): a torn last line (a power cut in the middle of an append whose sync never
 * finished) is dropped quietly, and the opener compacts the log before anything is appended (so
 * the torn bytes never become a damaged line in the middle); an unreadable line
 * elsewhere is skipped with a warning naming the file and the line (the draw keeps its previous
 * saved version, if any) and reported in `notes`. A file without the header is refused with
 * STORAGE_CORRUPT naming it.
 * Does not: hold the draws (lowdb's `data` does), or read the history.json of older versions
 * (history-file.ts; the repository migrates it once).
 */
import type { Adapter } from 'lowdb';
import type { Logger } from 'pino';
import type { AppendFile, Disk } from './disk.js';
import { StorageError } from './errors.js';
import { HISTORY_VERSION, storedRecordSchema, type HistoryData } from './schemas.js';

/** The history log's file name in the data directory. */
export const HISTORY_LOG = 'history.jsonl';
const HEADER = JSON.stringify({ giftdrop: 'history', version: 2 });

type StoredRecord = HistoryData['draws'][number];

export class HistoryLog implements Adapter<HistoryData> {
  private handle: AppendFile | undefined;
  /** Per draw id, the record object last read or written (changed records are new objects). */
  private written = new Map<string, StoredRecord>();
  /** Records marked by `touch` for the next write. */
  private touched: StoredRecord[] = [];
  /** Record lines in the file (superseded ones included). */
  private lines = 0;
  private needsNewline = false;
  /** Whether `read` found a torn last line (the opener compacts it away before any append). */
  torn = false;
  /** An append failed: the next write rewrites the log whole (see `write`). */
  private failed = false;
  /** Unreadable lines found by `read`, one sentence each. */
  readonly notes: string[] = [];

  constructor(
    private readonly disk: Disk,
    readonly file: string,
    private readonly logger: Logger,
  ) {}

  async read(): Promise<HistoryData | null> {
    const text = await this.disk.readText(this.file);
    if (text === undefined) return null;
    const lines = text.split('\n');
    if (lines[0]?.trim() !== HEADER) {
      throw new StorageError(
        'STORAGE_CORRUPT',
        `${this.file} does not start with the giftdrop history header; it was left untouched`,
      );
    }
    const byId = new Map<string, StoredRecord>();
    this.lines = 0;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.trim() === '') continue;
      this.lines += 1;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch {
        raw = undefined;
      }
      const parsed = storedRecordSchema.safeParse(raw);
      if (parsed.success) {
        byId.set(parsed.data.id, parsed.data);
      } else if (i === lines.length - 1) {
        this.torn = true;
        this.logger.debug({ file: this.file }, 'dropped a torn last history line (a save interrupted before its sync)');
      } else {
        const note = `${this.file}: line ${i + 1} is unreadable and was skipped (the draw keeps its previous saved version, if any)`;
        this.logger.warn({ file: this.file, line: i + 1 }, note);
        this.notes.push(note);
      }
    }
    this.needsNewline = text.length > 0 && !text.endsWith('\n');
    this.written = new Map(byId);
    return { version: HISTORY_VERSION, draws: [...byId.values()] };
  }

  /** Marks `record` (now in `data.draws`) as the one the next `write` appends: no scan of the history. */
  touch(record: StoredRecord): void {
    this.touched.push(record);
  }

  async write(data: HistoryData): Promise<void> {
    const touched = this.touched;
    this.touched = [];
    // After a failed append (ENOSPC, or EIO on its sync: the bytes may or may not be on the disk
    // whatever a later sync says), the log is written whole instead of appended to.
    if (this.failed || (!this.handle && !(await this.disk.fs.exists(this.file)))) return this.compact(data);
    const changed = touched.length > 0 ? touched : data.draws.filter((d) => this.written.get(d.id) !== d);
    if (changed.length === 0) return;
    const text = (this.needsNewline ? '\n' : '') + changed.map((d) => JSON.stringify(d) + '\n').join('');
    try {
      this.handle ??= await this.disk.openAppend(this.file);
      await this.handle.append(Buffer.from(text, 'utf8'));
      await this.handle.datasync();
    } catch (err) {
      // Whatever part of the append reached the file is a torn line for the next one to end. The
      // records are not written again by a later write: the repository puts its history back to
      // what is on the disk and its caller saves again.
      this.needsNewline = true;
      this.failed = true;
      await this.handle?.close().catch(() => undefined);
      this.handle = undefined;
      throw err;
    }
    this.needsNewline = false;
    this.lines += changed.length;
    for (const d of changed) this.written.set(d.id, d);
  }

  /** Whether the log should be rewritten: a torn last line, or more than half its lines superseded. */
  needsCompaction(draws: number): boolean {
    return this.torn || this.lines > 2 * draws + 64;
  }

  /** Rewrites the log with one line per draw, by the disk protocol's whole-file write. */
  async compact(data: HistoryData): Promise<void> {
    await this.close();
    const chunks = [
      Buffer.from(HEADER + '\n'),
      ...data.draws.map((d) => Buffer.from(JSON.stringify(d) + '\n', 'utf8')),
    ];
    await this.disk.writeAtomic(this.file, chunks);
    this.written = new Map(data.draws.map((d) => [d.id, d]));
    this.lines = data.draws.length;
    this.needsNewline = false;
    this.torn = false;
    this.failed = false;
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }
}
