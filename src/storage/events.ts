/**
 * The bounded set of processed webhook event ids, persisted so a redelivery after a restart is
 * still recognised. Stored as `<file>`: one JSON string per line, appended per new id (cost
 * independent of the set size); when the file holds more than twice the bound it is rewritten
 * atomically (durably) with only the newest `max` ids. The file is created 0600; appends are not
 * fsynced one by one (see persist). The oldest ids are evicted first. Does not: expire
 * ids by time, or interpret them.
 */
import { open, type FileHandle } from 'node:fs/promises';
import type { Logger } from 'pino';
import { StorageError } from './errors.js';
import { dirname } from 'node:path';
import { FILE_MODE, fsyncDir, readIfExists, writeFileAtomic } from './files.js';

/** Persistent, bounded, insertion-ordered set of processed event ids. */
export class ProcessedEvents {
  private readonly file: string;
  private readonly max: number;
  private readonly logger: Logger;
  private readonly ids = new Set<string>();
  private linesInFile = 0;
  private needsNewline = false;
  private handle: FileHandle | undefined;
  private chain: Promise<void> = Promise.resolve();

  private constructor(file: string, max: number, logger: Logger) {
    this.file = file;
    this.max = max;
    this.logger = logger;
  }

  /** Loads the set from `file` (absent file: empty set). A torn last line is ignored. */
  static async load(file: string, max: number, logger: Logger): Promise<ProcessedEvents> {
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new StorageError('STORAGE_INVALID', `maxProcessedEvents must be a positive integer, got ${max}`);
    }
    const events = new ProcessedEvents(file, max, logger);
    const text = await readIfExists(file);
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
          logger.warn({ file, line: i + 1 }, torn ? 'ignoring a torn last line in the processed events file' : 'skipping an unreadable line in the processed events file');
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
   * is in the file; if writing fails the id is forgotten again and the error is thrown.
   */
  mark(id: string): Promise<boolean> {
    if (typeof id !== 'string' || id.length === 0) {
      return Promise.reject(new StorageError('STORAGE_INVALID', 'event id must be a non-empty string'));
    }
    if (this.ids.has(id)) return Promise.resolve(false);
    this.remember(id);
    const run = this.chain.then(() => this.persist(id));
    this.chain = run.catch(() => undefined);
    return run.then(
      () => true,
      (err: unknown) => {
        this.ids.delete(id);
        throw err;
      },
    );
  }

  private async persist(id: string): Promise<void> {
    if (this.linesInFile + 1 > 2 * this.max) {
      await this.handle?.close();
      this.handle = undefined;
      const ids = [...this.ids];
      await writeFileAtomic(this.file, ids.map((x) => JSON.stringify(x) + '\n').join(''));
      this.linesInFile = ids.length;
      this.logger.debug({ kept: ids.length }, 'compacted the processed events file');
      return;
    }
    if (!this.handle) {
      this.handle = await open(this.file, 'a', FILE_MODE);
      await fsyncDir(dirname(this.file));
    }
    // Not fsynced per id: the webhook acknowledgement waits for this write, and a flush per id
    // slowed the ack sharply in `npm run bench -- webhook`. A power cut can forget the last ids;
    // the engine still ignores a draw id it already has.
    await this.handle.appendFile((this.needsNewline ? '\n' : '') + JSON.stringify(id) + '\n', 'utf8');
    this.needsNewline = false;
    this.linesInFile += 1;
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
