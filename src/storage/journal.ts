/**
 * The append-only entry journal of open draws: `<dir>/<draw id stem>.jsonl`, one JSON entrant per
 * line (giveaway/entrants/journal-line.ts: a compact array, or the entrant object; both are read). Appends are
 * buffered in memory as UTF-8 bytes (encoded straight into one growing buffer per draw by
 * journal-line.ts, no string per line; written buffers are reused) and written (one append per
 * draw per flush, on a file kept open by the disk protocol, disk.ts: created 0600 with its
 * directory synced before any line in it is relied on) within `flushIntervalMs`, so the cost of an entry never
 * depends on the history size and a killed process loses at most the last interval. Reading
 * tolerates a torn last line (a crash in the middle of a write); a later append first terminates
 * such a line so it cannot swallow the next entry. After a failed append or sync (ENOSPC, EIO) the
 * file is cut back to its last synced size (rewritten by the whole-file protocol) before its lines
 * go again, so a line is never in it twice. `recover` (at
 * restore) repairs a journal: a torn last line is trimmed quietly; unreadable lines elsewhere, or
 * an unreadable file, are reported by draw id and line number, the damaged file is kept as
 * `<file>.corrupt-<timestamp>` and the journal goes on with every readable entrant. Each flush's
 * append is followed by one data sync (fdatasync) of that draw's file before the next flush is
 * written, so the guarantee holds against power loss too: at most the last interval plus one sync
 * is lost (the sync runs on libuv's thread pool, never on the event loop). Does not: deduplicate
 * (readers do), know draw statuses, or sync each entry on its own.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { EntrantRows } from '../giveaway/entrant-rows.js';
import type { Entrant } from '../giveaway/model.js';
import type { Clock, TimerHandle } from '../shared/clock.js';
import { LineBytes, entrantOfLine } from '../giveaway/entrants/index.js';
import { StorageError } from './errors.js';
import type { AppendFile, Disk } from './disk.js';
import { fileStem, idFromStem } from './files.js';
import { entrantSchema } from './schemas.js';

const SUFFIX = '.jsonl';

export interface JournalOptions {
  disk: Disk;
  dir: string;
  clock: Clock;
  logger: Logger;
  flushIntervalMs: number;
}

/** What `recover` found in a draw's journal. */
export interface JournalRecovery {
  /** Every readable entrant, in file order. */
  entrants: Entrant[];
  /** 1-based numbers of unreadable lines other than a torn last line. */
  badLines: number[];
  /** Where the damaged file was kept, when it was. */
  kept?: string;
  /** The report (draw id, line numbers, kept copy), when something but a torn last line was wrong. */
  note?: string;
}

/**
 * Parses a journal's text: the readable entrants, the numbers of unreadable lines, and whether the
 * last line is torn (unreadable and not newline-terminated: an interrupted write).
 */
export function parseJournal(text: string): { entrants: Entrant[]; badLines: number[]; tornLast: boolean } {
  const lines = text.split('\n');
  const entrants: Entrant[] = [];
  const badLines: number[] = [];
  let tornLast = false;
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = undefined;
    }
    const result = entrantSchema.safeParse(entrantOfLine(parsed));
    if (result.success) entrants.push(result.data);
    else if (i === lines.length - 1) tornLast = true;
    else badLines.push(i + 1);
  });
  return { entrants, badLines, tornLast };
}

const NEWLINE = Buffer.from('\n');

/** A draw's open journal file: whether its last line lacks its newline, and its size as last synced. */
interface JournalFile {
  handle: AppendFile;
  needsNewline: boolean;
  synced: number;
}
/** Line buffers kept for reuse once written (at most SPARE_MAX, each at most SPARE_BYTES): a fresh buffer costs page faults on every flush. */
const SPARE_MAX = 4;
const SPARE_BYTES = 1 << 20;

/**
 * A draw's lines not yet written: encoded bytes, then rows [from, to) of `rows` still to encode
 * (rows are encoded when the journal is written, in one pass, not one entrant at a time).
 */
interface Pending {
  lines: LineBytes;
  rows: EntrantRows | undefined;
  from: number;
  to: number;
}

function pending(lines: LineBytes): Pending {
  return { lines, rows: undefined, from: 0, to: 0 };
}

/** Encodes a pending row range into its bytes. */
function encodeRows(p: Pending): LineBytes {
  const rows = p.rows;
  if (rows) {
    p.lines.addRows(rows, p.from, p.to);
    p.rows = undefined;
  }
  return p.lines;
}

/** Per-draw append-only entry journals with a timed write-behind buffer. */
export class EntryJournal {
  private readonly disk: Disk;
  private readonly dir: string;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly flushIntervalMs: number;
  private buffers = new Map<string, Pending>();
  /** Written line buffers, emptied, for the next pending lines (see SPARE_MAX). */
  private readonly spare: LineBytes[] = [];
  private readonly handles = new Map<string, Promise<JournalFile>>();
  /** Draws whose last append or sync failed, with the size their file had synced (see handleOf). */
  private readonly damaged = new Map<string, number>();
  private chain: Promise<void> = Promise.resolve();
  private timer: TimerHandle | undefined;
  private closed = false;

  constructor(options: JournalOptions) {
    this.disk = options.disk;
    this.dir = options.dir;
    this.clock = options.clock;
    this.logger = options.logger;
    this.flushIntervalMs = options.flushIntervalMs;
  }

  private fileOf(drawId: string): string {
    return join(this.dir, fileStem(drawId) + SUFFIX);
  }

  /** Buffers one entrant line; it reaches the file within flushIntervalMs. */
  append(drawId: string, entrant: Entrant): void {
    encodeRows(this.pendingOf(drawId)).addEntrant(entrant);
  }

  /**
   * Buffers row `row` of `rows` (read when the journal is written; see EntrantRows); it reaches
   * the file within flushIntervalMs, in call order with every other line of the draw.
   */
  appendRow(drawId: string, rows: EntrantRows, row: number): void {
    const p = this.pendingOf(drawId);
    if (p.rows !== rows || p.to !== row) {
      encodeRows(p);
      p.rows = rows;
      p.from = row;
    }
    p.to = row + 1;
  }

  /** The draw's pending lines, with the write scheduled. */
  private pendingOf(drawId: string): Pending {
    if (this.closed) throw new StorageError('STORAGE_CLOSED', 'entry journal is closed');
    let p = this.buffers.get(drawId);
    if (!p) {
      fileStem(drawId); // the id is checked once per buffer, not per line
      this.buffers.set(drawId, (p = pending(this.spare.pop() ?? new LineBytes(16 * 1024))));
    }
    this.timer ??= this.clock.setTimeout(() => {
      this.timer = undefined;
      this.flush().catch((err: unknown) => {
        this.logger.error({ err }, 'writing the entry journal failed; will retry');
      });
    }, this.flushIntervalMs);
    return p;
  }

  /** Writes everything buffered so far; resolves once it is in the files. */
  flush(): Promise<void> {
    this.timer?.cancel();
    this.timer = undefined;
    const batch = new Map<string, LineBytes>();
    for (const [drawId, p] of this.buffers) batch.set(drawId, encodeRows(p));
    this.buffers = new Map();
    const run = this.chain.then(() => this.writeBatch(batch));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async writeBatch(batch: Map<string, LineBytes>): Promise<void> {
    let failure: unknown;
    for (const [drawId, lines] of batch) {
      let entry: JournalFile | undefined;
      try {
        entry = await this.handleOf(drawId);
        const bytes = lines.bytes();
        const out = entry.needsNewline ? Buffer.concat([NEWLINE, bytes]) : bytes;
        await entry.handle.append(out);
        // One data sync per draw per flush (not per entry): the batch is on the disk itself, not
        // only in the OS cache, before the next batch is written (a power loss loses at most the
        // last interval plus one sync).
        await entry.handle.datasync();
        entry.needsNewline = false;
        entry.synced += out.length;
        if (this.spare.length < SPARE_MAX && lines.buf.length <= SPARE_BYTES) {
          lines.clear();
          this.spare.push(lines);
        }
      } catch (err) {
        failure ??= err;
        this.handles.delete(drawId);
        if (entry) {
          // What reached the file past its synced size is unknown (a short write, or lines a
          // failed sync may or may not keep): cut back to it before the lines go again.
          this.damaged.set(drawId, entry.synced);
          await entry.handle.close().catch(() => undefined);
        }
        // The failed lines go back in front of any appended since, in order.
        const since = this.buffers.get(drawId);
        const later = since ? encodeRows(since) : undefined;
        const back = new LineBytes(lines.used + (later?.used ?? 0) + 1);
        lines.bytes().copy(back.buf, 0);
        back.used = lines.used;
        if (later) back.used += later.bytes().copy(back.buf, back.used);
        this.buffers.set(drawId, pending(back));
      }
    }
    if (failure !== undefined) {
      if (!this.closed) {
        this.timer ??= this.clock.setTimeout(() => {
          this.timer = undefined;
          this.flush().catch((err: unknown) =>
            this.logger.error({ err }, 'writing the entry journal failed; will retry'),
          );
        }, this.flushIntervalMs);
      }
      throw failure as Error; // (what the write threw, passed on as it was)
    }
  }

  private handleOf(drawId: string): Promise<JournalFile> {
    let entry = this.handles.get(drawId);
    if (!entry) {
      entry = (async () => {
        const file = this.fileOf(drawId);
        const good = this.damaged.get(drawId);
        if (good !== undefined) {
          const bytes = (await this.disk.readBytes(file)) ?? Buffer.alloc(0);
          await this.disk.writeAtomic(file, [bytes.subarray(0, good)]);
          this.damaged.delete(drawId);
        }
        const handle = await this.disk.openAppend(file);
        const size = await handle.size();
        const needsNewline = size > 0 && (await handle.read(size - 1, 1))[0] !== 0x0a;
        return { handle, needsNewline, synced: size };
      })();
      this.handles.set(drawId, entry);
      entry.catch(() => this.handles.delete(drawId));
    }
    return entry;
  }

  /** Drops a draw's buffer and deletes its journal (the draw reached a final state). */
  discard(drawId: string): Promise<void> {
    this.buffers.delete(drawId);
    const run = this.chain.then(async () => {
      await this.closeHandle(drawId);
      await this.disk.remove(this.fileOf(drawId));
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async closeHandle(drawId: string): Promise<void> {
    const entry = this.handles.get(drawId);
    this.handles.delete(drawId);
    if (entry) await (await entry).handle.close();
  }

  /**
   * The journaled entrants of a draw, in file order, including any still buffered. A torn last
   * line is skipped quietly; any other unreadable line is skipped with a warning naming the draw
   * and the line (`recover` repairs the file).
   */
  async read(drawId: string): Promise<Entrant[]> {
    await this.flush();
    const file = this.fileOf(drawId);
    const text = await this.disk.readText(file);
    if (text === undefined) return [];
    const parsed = parseJournal(text);
    if (parsed.tornLast) this.logger.debug({ drawId, file }, 'ignoring a torn last journal line (interrupted write)');
    for (const line of parsed.badLines) this.logger.warn({ drawId, file, line }, 'skipping an unreadable journal line');
    return parsed.entrants;
  }

  /**
   * Reads a draw's journal for a restore and repairs it (see the module comment). `note` is set,
   * naming the draw id and the line numbers, when anything but a torn last line was wrong.
   */
  async recover(drawId: string, nowMs: number): Promise<JournalRecovery> {
    await this.flush();
    const run = this.chain.then(() => this.recoverNow(drawId, nowMs));
    this.chain = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async recoverNow(drawId: string, nowMs: number): Promise<JournalRecovery> {
    const file = this.fileOf(drawId);
    let text: string | undefined;
    try {
      text = await this.disk.readText(file);
    } catch (err) {
      await this.closeHandle(drawId).catch(() => undefined);
      const kept = await this.disk.quarantine(file, nowMs);
      return {
        entrants: [],
        badLines: [],
        kept,
        note: `draw ${drawId}: its entry journal ${file} could not be read (${(err as Error).message}); kept as ${kept}. The draw resumes without its journaled entries`,
      };
    }
    if (text === undefined) return { entrants: [], badLines: [] };
    const parsed = parseJournal(text);
    if (!parsed.tornLast && parsed.badLines.length === 0) return { entrants: parsed.entrants, badLines: [] };
    // Rewritten with the readable lines only, so a later append cannot glue onto a torn line and
    // the damaged lines are reported once.
    await this.closeHandle(drawId);
    const readable = new LineBytes(64 * 1024);
    for (const e of parsed.entrants) readable.addEntrant(e);
    const body = [readable.bytes()];
    if (parsed.badLines.length === 0) {
      this.logger.debug({ drawId, file }, 'dropped a torn last journal line (interrupted write)');
      await this.disk.writeAtomic(file, body);
      return { entrants: parsed.entrants, badLines: [] };
    }
    const kept = await this.disk.replaceKeepingDamaged(file, body, nowMs);
    const lines = parsed.badLines.join(', ');
    return {
      entrants: parsed.entrants,
      badLines: parsed.badLines,
      kept,
      note:
        `draw ${drawId}: unreadable line(s) ${lines} in its entry journal ${file} (kept as ${kept}); ` +
        `the draw resumes with the other ${parsed.entrants.length} journaled entr${parsed.entrants.length === 1 ? 'y' : 'ies'}`,
    };
  }

  /** Draw ids that have a journal file. */
  async drawIds(): Promise<string[]> {
    const names = await this.disk.list(this.dir);
    const ids: string[] = [];
    for (const name of names) {
      if (!name.endsWith(SUFFIX)) continue;
      const id = idFromStem(name.slice(0, -SUFFIX.length));
      if (id !== undefined) ids.push(id);
    }
    return ids;
  }

  /** Flushes, closes every file and refuses further appends. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.flush();
    } finally {
      this.closed = true;
      await this.chain;
    }
    for (const drawId of [...this.handles.keys()]) await this.closeHandle(drawId).catch(() => undefined);
  }
}
