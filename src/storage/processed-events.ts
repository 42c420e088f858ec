/**
 * The bounded set of processed webhook event ids, persisted so a redelivery after a restart is
 * still recognised. Stored as `<file>`: one JSON string per line, appended per new id (cost
 * independent of the set size); when the file holds more than twice the bound it is rewritten
 * by the disk protocol's whole-file write with only the newest `max` ids. Appends go through the
 * disk protocol (file created 0600, its directory synced before use) and are synced before `mark`
 * resolves; ids marked while a write is under way share one append and one sync (group commit).
 * After a failed append or sync (ENOSPC, EIO) the next write rewrites the file whole, so neither
 * a short write's fragment nor an id whose sync failed is ever appended after.
 * The oldest ids are evicted first. Does not: expire
 * ids by time, or interpret them.
 */
import type { Logger } from 'pino';
import type { AppendFile, Disk } from './disk.js';
import { StorageError } from './errors.js';

/** Persistent, bounded, insertion-ordered set of processed event ids. */
export class ProcessedEvents {
  private readonly file: string;
  private readonly max: number;
  private readonly logger: Logger;
  private readonly ids = new Set<string>();
  private linesInFile = 0;
  private needsNewline = false;
  /** An append failed: the next write rewrites the file whole (see `persist`). */
  private failed = false;
  private handle: AppendFile | undefined;
  private chain: Promise<void> = Promise.resolve();
  /** Ids marked since the last write started, and the write that will carry them. */
  private queued: string[] = [];
  private nextWrite: Promise<void> | undefined;

  private constructor(
    private readonly disk: Disk,
    file: string,
    max: number,
    logger: Logger,
  ) {
    this.file = file;
    this.max = max;
    this.logger = logger;
  }

  /** Loads the set from `file` (absent file: empty set). A torn last line is ignored. */
  static async load(disk: Disk, file: string, max: number, logger: Logger): Promise<ProcessedEvents> {
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new StorageError('STORAGE_INVALID', `maxProcessedEvents must be a positive integer, got ${max}`);
    }
    const events = new ProcessedEvents(disk, file, max, logger);
    const text = await disk.readText(file);
    if (text !== undefined) {
      const lines = text.split('\n');
      lines.forEach((line, i) => {
        if (line.trim() === '') return;
        events.linesInFile += 1;
        let id: unknown;
        try {
          id = JSON.parse(line);
        } catch {
          id = undefined;
        }
        if (typeof id === 'string') {
          events.remember(id);
        } else {
          const torn = i === lines.length - 1;
          logger.warn(
            { file, line: i + 1 },
            torn
              ? 'ignoring a torn last line in the processed events file'
              : 'skipping an unreadable line in the processed events file',
          );
        }
      });
      events.needsNewline = text.length > 0 && !text.endsWith('\n');
    }
    return events;
  }

  private remember(id: string): void {
    this.ids.delete(id);
    this.ids.add(id);
    while (this.ids.size > this.max) {
      const oldest = this.ids.values().next().value as string;
      this.ids.delete(oldest);
    }
  }

  /** Whether `id` is in the set. */
  has(id: string): boolean {
    return this.ids.has(id);
  }

  get size(): number {
    return this.ids.size;
  }

  /**
   * Records `id`. Returns false (and writes nothing) if it was already there. Resolves once the id
   * is synced to the file (ids marked while a write is under way share the next append and sync);
   * if writing fails the id is forgotten again and the error is thrown.
   */
  mark(id: string): Promise<boolean> {
    if (typeof id !== 'string' || id.length === 0) {
      return Promise.reject(new StorageError('STORAGE_INVALID', 'event id must be a non-empty string'));
    }
    if (this.ids.has(id)) return Promise.resolve(false);
    this.remember(id);
    this.queued.push(id);
    const run = (this.nextWrite ??= this.chain.then(() => {
      this.nextWrite = undefined;
      const batch = this.queued;
      this.queued = [];
      return this.persist(batch);
    }));
    this.chain = run.catch(() => undefined);
    return run.then(
      () => true,
      (err: unknown) => {
        this.ids.delete(id);
        throw err;
      },
    );
  }

  private async persist(batch: string[]): Promise<void> {
    if (this.failed || this.linesInFile + batch.length > 2 * this.max) {
      await this.handle?.close();
      this.handle = undefined;
      const ids = [...this.ids];
      await this.disk.writeAtomic(this.file, ids.map((x) => JSON.stringify(x) + '\n').join(''));
      this.linesInFile = ids.length;
      this.needsNewline = false;
      this.failed = false;
      this.logger.debug({ kept: ids.length }, 'compacted the processed events file');
      return;
    }
    this.handle ??= await this.disk.openAppend(this.file);
    const text = (this.needsNewline ? '\n' : '') + batch.map((x) => JSON.stringify(x) + '\n').join('');
    try {
      await this.handle.append(Buffer.from(text, 'utf8'));
      // Synced before the caller is answered: the webhook is acknowledged only once its id would
      // survive a power cut (concurrent webhooks share one sync).
      await this.handle.datasync();
    } catch (err) {
      // What reached the file is unknown (a short write, or bytes a failed sync may or may not
      // keep): the next write rewrites the file whole, from the ids in memory.
      this.failed = true;
      await this.handle.close().catch(() => undefined);
      this.handle = undefined;
      throw err;
    }
    this.needsNewline = false;
    this.linesInFile += batch.length;
  }

  /** Waits for pending writes. */
  async flush(): Promise<void> {
    await this.chain;
  }

  async close(): Promise<void> {
    await this.chain;
    await this.handle?.close();
    this.handle = undefined;
  }
}
