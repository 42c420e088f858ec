/**
 * FileDrawRepository: the DrawRepository port on local files under one data directory.
 *
 *   history.jsonl                  the history: lowdb over an append-only log (history-log.ts; opened
 *                                  and migrated by history-open.ts); records without their entrant lists
 *   history.v1.json                the history.json of an older version, kept once migrated
 *   draws/<id>.entrants.tsv        a closed draw's frozen entrant list (entrants-file.ts), written once
 *                                  per distinct list, loaded lazily; `.entrants.json` (version 1) still read
 *   journal/<id>.jsonl             an open draw's entry journal (journal.ts), deleted when it ends
 *   journal/<id>.tickets.jsonl     its ticket grants (ticket-journal.ts), synced before they resolve
 *   events.jsonl                   processed webhook ids, bounded (processed-events.ts)
 *   delivery.json                  each winner's delivery state (delivery-file.ts), only through
 *                                  updateDelivery, attached to every record read
 *   seeds/<id>.seed                an open draw's unrevealed seed, 0600 (seeds.ts), deleted once revealed
 *
 * Contract: every file goes through the disk protocol (disk.ts), so what a save, an event mark or a
 * journal flush resolved survives a power cut (test/storage-power-cut.test.ts); the journal is synced
 * once per flush (flushIntervalMs). Records are stamped with the repository's `mode`. A damaged
 * entrants file or journal is kept aside and reported by draw id while the other draws carry on
 * (`notes`); a damaged history or events file is a StorageError naming it. Read-only mode (the CLIs)
 * never creates or changes a file. Does not: lock the directory (lock.ts, taken by the entry points
 * before they open it).
 */
import { join } from 'node:path';
import { Low } from 'lowdb';
import type { Logger } from 'pino';
import type { EntrantRows } from '../giveaway/entrant-rows.js';
import {
  frozenRowsOf,
  type Delivery,
  type DrawRecord,
  type Entrant,
  type FrozenEntrant,
  type FrozenRows,
  type TicketGrant,
} from '../giveaway/model.js';
import { type DrawRepository } from '../giveaway/ports.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { silentLogger } from '../logging/index.js';
import { StorageError } from './errors.js';
import { ProcessedEvents } from './processed-events.js';
import { Disk, nodeDisk, type FileSystem } from './disk.js';
import { fileStem } from './files.js';
import { openHistory } from './history-open.js';
import type { HistoryLog } from './history-log.js';
import { ENTRANTS_SUFFIX, ENTRANTS_SUFFIX_V1, entrantsFileChunks, parseEntrantsFileSliced } from './entrants-file.js';
import { EntryJournal } from './journal.js';
import { TicketJournal } from './ticket-journal.js';
import { SeedVault } from './seeds.js';
import { DeliveryFile } from './delivery-file.js';
import { storedRecordSchema, type HistoryData } from './schemas.js';

export interface FileDrawRepositoryOptions {
  clock?: Clock;
  logger?: Logger;
  /** Longest wait before buffered journal entries are written. Default 10 ms (a crash loses at most that; rows are encoded while still cached). */
  flushIntervalMs?: number;
  /** How many processed webhook ids are remembered. Default 10,000. */
  maxProcessedEvents?: number;
  /** Open without creating or modifying anything (CLIs). Writes throw STORAGE_READ_ONLY. */
  readOnly?: boolean;
  /** Stamped on every saved record that has none. Default 'live'. */
  mode?: 'live' | 'sandbox';
  /** The file system under the disk protocol (tests record or simulate one). Default: this machine's. */
  fileSystem?: FileSystem;
}

type StoredRecord = HistoryData['draws'][number];

const FINAL_STATUSES = new Set<DrawRecord['status']>(['finished', 'cancelled', 'failed']);
const ACTIVE_STATUSES = new Set<DrawRecord['status']>(['open', 'drawing']);
/** seedFiles marker: the draw's vault file was removed (revealed or final). */
const GONE = '';

/** Draw storage on local files: lowdb history, per-draw entry journals, frozen entrant files. */
export class FileDrawRepository implements DrawRepository {
  /** Absolute path of the history document. */
  readonly historyFile: string;
  private readonly dataDir: string;
  private readonly db: Low<HistoryData>;
  private readonly journal: EntryJournal;
  private readonly tickets: TicketJournal;
  private readonly events: ProcessedEvents | undefined;
  private readonly logger: Logger;
  private readonly readOnly: boolean;
  private readonly mode: 'live' | 'sandbox';
  private readonly clock: Clock;
  /** What was recovered while opening or reading (a migration, a history from its .bak, quarantined files). */
  readonly notes: string[];
  private readonly byId = new Map<string, StoredRecord>();
  /** Each draw's index in `db.data.draws` (a save replaces it there without a scan). */
  private readonly positions = new Map<string, number>();
  private readonly seeds: SeedVault;
  /** Per draw: the seed known to be in its vault file, or GONE once the file was removed. */
  private readonly seedFiles = new Map<string, string>();
  /** Key (digest:length or array identity) of the entrants file last written, per draw. */
  private readonly frozenWritten = new Map<string, string | FrozenRows>();
  private saves: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly deliveries: DeliveryFile;
  private readonly disk: Disk;
  private readonly log: HistoryLog;

  private constructor(
    dataDir: string,
    db: Low<HistoryData>,
    journal: EntryJournal,
    events: ProcessedEvents | undefined,
    logger: Logger,
    readOnly: boolean,
    options: {
      historyFile: string;
      log: HistoryLog;
      disk: Disk;
      mode: 'live' | 'sandbox';
      clock: Clock;
      notes: string[];
      deliveries: DeliveryFile;
    },
  ) {
    this.disk = options.disk;
    this.deliveries = options.deliveries;
    this.dataDir = dataDir;
    this.mode = options.mode;
    this.clock = options.clock;
    this.notes = options.notes;
    this.historyFile = options.historyFile;
    this.log = options.log;
    this.db = db;
    this.journal = journal;
    this.events = events;
    this.logger = logger;
    this.readOnly = readOnly;
    this.seeds = new SeedVault(options.disk, dataDir);
    this.tickets = new TicketJournal({ disk: options.disk, dir: join(dataDir, 'journal'), logger });
    db.data.draws.forEach((record, i) => {
      this.byId.set(record.id, record);
      this.positions.set(record.id, i);
    });
  }

  /**
   * Opens (creating unless read-only) the data directory and loads the history. Throws STORAGE_CORRUPT
   * naming the file when history.json or the events file is damaged (nothing is rewritten then).
   * Opening writable removes the temp files a killed writeFileAtomic left (its own name pattern only)
   * in the data directory, draws/, seeds/ and journal/: the entry points open the repository only
   * after taking the data-directory lock (app/data-lock.ts), so no live writer's temp is taken.
   */
  static async open(dataDir: string, options: FileDrawRepositoryOptions = {}): Promise<FileDrawRepository> {
    const logger = (options.logger ?? silentLogger()).child({ module: 'storage' });
    const readOnly = options.readOnly ?? false;
    const flushIntervalMs = options.flushIntervalMs ?? 10;
    if (!Number.isFinite(flushIntervalMs) || flushIntervalMs < 0) {
      throw new StorageError(
        'STORAGE_INVALID',
        `flushIntervalMs must be a non-negative number, got ${flushIntervalMs}`,
      );
    }
    const clock = options.clock ?? systemClock;
    const disk = options.fileSystem ? new Disk(options.fileSystem) : nodeDisk;
    // The history first: a damaged one stops the start before anything is created.
    const history = await openHistory(dataDir, { disk, readOnly, logger, nowMs: clock.now() });
    if (!readOnly) {
      await disk.mkdirs(join(dataDir, 'journal'));
      await disk.mkdirs(join(dataDir, 'draws'));
      // Every folder writeAtomic writes in (history, events, merch train; entrants; seeds;
      // journal repairs): temps of an interrupted write, by our own temp-name pattern only.
      for (const sub of ['', 'draws', 'seeds', 'journal']) await disk.removeStaleTemps(join(dataDir, sub));
    }
    const db = history.db;
    const journal = new EntryJournal({
      disk,
      dir: join(dataDir, 'journal'),
      clock,
      logger,
      flushIntervalMs,
    });
    const events = readOnly
      ? undefined
      : await ProcessedEvents.load(disk, join(dataDir, 'events.jsonl'), options.maxProcessedEvents ?? 10_000, logger);
    const deliveries = await DeliveryFile.load(disk, join(dataDir, 'delivery.json'));
    return new FileDrawRepository(dataDir, db, journal, events, logger, readOnly, {
      disk,
      mode: options.mode ?? 'live',
      clock,
      notes: history.notes,
      historyFile: history.file,
      log: history.log,
      deliveries,
    });
  }

  private assertWritable(): void {
    if (this.closed) throw new StorageError('STORAGE_CLOSED', 'the draw repository is closed');
    if (this.readOnly) throw new StorageError('STORAGE_READ_ONLY', 'the draw repository was opened read-only');
  }

  /** Ids made of `[A-Za-z0-9_-]` are file names as they are; others are base64url behind `~` (fileStem). */
  private entrantsFile(id: string, suffix = ENTRANTS_SUFFIX): string {
    return join(this.dataDir, 'draws', `${fileStem(id)}${suffix}`);
  }

  /**
   * Creates or replaces a record. Its frozen entrant list, if any, goes to its own file (rewritten
   * only when the list changes); saving a record without one keeps the stored list. Reaching
   * finished/cancelled/failed deletes the draw's entry journal. Saves are applied in call order.
   * `pendingSeed` goes to the seed vault (seeds/), once (the first save that carries it), and is
   * read back by getDraw/openDraws; an old history.json still holding it is migrated when opened
   * (seed-migration.ts). A saved record's own `delivery` is dropped (delivery.json holds it).
   */
  saveDraw(record: DrawRecord, frozenRows?: FrozenRows): Promise<void> {
    try {
      this.assertWritable();
    } catch (err) {
      return Promise.reject(err);
    }
    const { frozenEntrants, pendingSeed, ...rest } = record;
    const parsed = storedRecordSchema.safeParse(rest);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : '?';
      return Promise.reject(new StorageError('STORAGE_INVALID', `draw record is invalid at ${where}`));
    }
    const stored = parsed.data;
    stored.mode ??= this.mode;
    // Delivery state has its own file (updateDelivery); a record's copy of it may be stale.
    for (const w of stored.winners) delete w['delivery'];
    for (const rr of stored.rerolls ?? []) delete rr['delivery'];
    try {
      fileStem(stored.id);
    } catch (err) {
      return Promise.reject(err);
    }
    const frozen = frozenRows ?? (frozenEntrants ? frozenRowsOf(frozenEntrants) : undefined);
    const run = this.saves.then(() => this.applySave(stored, frozen, pendingSeed));
    this.saves = run.catch(() => undefined);
    return run;
  }

  private async applySave(stored: StoredRecord, frozen: FrozenRows | undefined, pendingSeed?: string): Promise<void> {
    const sealed = stored.fairness.seed !== undefined || FINAL_STATUSES.has(stored.status);
    // Written once: a later save of the same draw (every state change) finds it in place.
    if (pendingSeed !== undefined && !sealed && this.seedFiles.get(stored.id) !== pendingSeed) {
      if ((await this.seeds.get(stored.id)) !== pendingSeed) await this.seeds.put(stored.id, pendingSeed);
      this.seedFiles.set(stored.id, pendingSeed);
    }
    if (frozen) {
      const key = stored.fairness.entrantsDigest ? `${stored.fairness.entrantsDigest}:${frozen.length}` : frozen;
      if (this.frozenWritten.get(stored.id) !== key) {
        await this.disk.writeAtomic(this.entrantsFile(stored.id), await entrantsFileChunks(stored.id, frozen));
        await this.disk.remove(this.entrantsFile(stored.id, ENTRANTS_SUFFIX_V1));
        this.frozenWritten.set(stored.id, key);
      }
    }
    const draws = this.db.data.draws;
    const at = this.positions.get(stored.id);
    const previous = this.byId.get(stored.id);
    if (at !== undefined) draws[at] = stored;
    else this.positions.set(stored.id, draws.push(stored) - 1);
    this.byId.set(stored.id, stored);
    this.log.touch(stored);
    try {
      await this.db.write();
    } catch (err) {
      // Not on the disk: the history in memory goes back to what is (the caller retries the save,
      // and a draw whose first save failed is not "already known" to a retry of its event).
      if (previous && at !== undefined) {
        draws[at] = previous;
        this.byId.set(stored.id, previous);
      } else {
        draws.pop();
        this.positions.delete(stored.id);
        this.byId.delete(stored.id);
      }
      throw err;
    }
    if (sealed && this.seedFiles.get(stored.id) !== GONE) {
      await this.seeds.discard(stored.id);
      this.seedFiles.set(stored.id, GONE);
    }
    if (FINAL_STATUSES.has(stored.status)) {
      await this.journal.discard(stored.id);
      await this.tickets.discard(stored.id);
    }
  }

  /**
   * The frozen list of a draw. A damaged file: read-only mode throws STORAGE_CORRUPT naming it;
   * otherwise it is quarantined, reported by draw id, and the draw goes on without a frozen list.
   */
  private async loadFrozen(id: string): Promise<FrozenEntrant[] | undefined> {
    let file = this.entrantsFile(id);
    try {
      let text = await this.disk.readText(file);
      if (text === undefined) {
        file = this.entrantsFile(id, ENTRANTS_SUFFIX_V1);
        text = await this.disk.readText(file);
      }
      if (text === undefined) return undefined;
      return await parseEntrantsFileSliced(file, text);
    } catch (err) {
      if (this.readOnly) throw err;
      const kept = await this.disk.quarantine(file, this.clock.now());
      const note = `draw ${id}: its entrant list ${file} is damaged (${(err as Error).message.replace(/; it was left untouched$/, '')}); kept as ${kept}`;
      this.logger.error({ drawId: id, file, kept }, note);
      this.notes.push(note);
      this.frozenWritten.delete(id);
      return undefined;
    }
  }

  private async full(stored: StoredRecord): Promise<DrawRecord> {
    const record = this.withDelivery(structuredClone(stored) as DrawRecord);
    record.mode ??= 'live';
    const frozen = await this.loadFrozen(stored.id);
    if (frozen) record.frozenEntrants = frozen;
    if (ACTIVE_STATUSES.has(record.status) && record.fairness.seed === undefined && record.pendingSeed === undefined) {
      const seed = await this.seeds.get(stored.id);
      if (seed) record.pendingSeed = seed;
    }
    return record;
  }

  /** The record with its frozen entrant list (when one was saved); a copy. */
  async getDraw(id: string): Promise<DrawRecord | undefined> {
    const stored = this.byId.get(id);
    return stored ? this.full(stored) : undefined;
  }

  /**
   * Open/drawing records (with frozen lists when saved) and their journaled entrants, deduplicated
   * by userId (first entry wins). Also deletes journals left behind by draws that already reached
   * a final state (a crash between the two writes), unless read-only.
   */
  async openDraws(): Promise<{ record: DrawRecord; entrants: Entrant[]; grants: TicketGrant[] }[]> {
    if (this.closed) throw new StorageError('STORAGE_CLOSED', 'the draw repository is closed');
    await this.saves;
    const out: { record: DrawRecord; entrants: Entrant[]; grants: TicketGrant[] }[] = [];
    for (const stored of this.db.data.draws) {
      if (!ACTIVE_STATUSES.has(stored.status)) continue;
      const seen = new Set<string>();
      const entrants: Entrant[] = [];
      const journaled = this.readOnly ? await this.journal.read(stored.id) : await this.recoverJournal(stored.id);
      for (const e of journaled) {
        if (seen.has(e.userId)) continue;
        seen.add(e.userId);
        entrants.push(e);
      }
      out.push({ record: await this.full(stored), entrants, grants: await this.tickets.read(stored.id) });
    }
    if (!this.readOnly) {
      for (const id of await this.journal.drawIds()) {
        const stored = this.byId.get(id);
        if (stored && FINAL_STATUSES.has(stored.status)) {
          this.logger.info({ drawId: id }, 'removing the entry journal of a draw that already ended');
          await this.journal.discard(id);
        } else if (!stored) {
          this.logger.warn({ drawId: id }, 'entry journal without a draw record; kept');
        }
      }
      for (const id of await this.tickets.drawIds()) {
        const stored = this.byId.get(id);
        if (stored && FINAL_STATUSES.has(stored.status)) await this.tickets.discard(id);
      }
    }
    return out;
  }

  /**
   * A draw's journal, repaired first when it has unreadable lines or is unreadable (a copy of the
   * damaged file kept), reported by draw id and line; its other entrants carry on.
   */
  private async recoverJournal(drawId: string): Promise<Entrant[]> {
    const result = await this.journal.recover(drawId, this.clock.now());
    if (result.note) {
      this.logger.error({ drawId, lines: result.badLines, kept: result.kept }, result.note);
      this.notes.push(result.note);
    }
    return result.entrants;
  }

  /**
   * Journals an entrant object (tools, tests; the engine journals rows) within flushIntervalMs.
   * Entries for a draw that already ended are dropped (debug log). Throws STORAGE_CLOSED,
   * STORAGE_READ_ONLY, or STORAGE_INVALID for an invalid draw id or entrant.
   */
  appendEntrant(drawId: string, entrant: Entrant): void {
    this.assertWritable();
    if (!entrant || typeof entrant.userId !== 'string' || entrant.userId.length === 0) {
      throw new StorageError('STORAGE_INVALID', 'entrant must have a non-empty userId');
    }
    if (this.journalable(drawId)) this.journal.append(drawId, entrant);
  }

  appendEntrantRow(drawId: string, rows: EntrantRows, row: number): void {
    this.assertWritable();
    if (this.journalable(drawId)) this.journal.appendRow(drawId, rows, row);
  }

  /** Journals a ticket grant and syncs it (see the port); a grant for a draw that already ended is dropped. */
  async appendTicketGrant(drawId: string, grant: TicketGrant): Promise<void> {
    this.assertWritable();
    if (this.journalable(drawId)) await this.tickets.append(drawId, grant);
  }

  /** False (debug log) for a draw that already ended: its entries are dropped. */
  private journalable(drawId: string): boolean {
    const status = this.byId.get(drawId)?.status;
    if (status === undefined || !FINAL_STATUSES.has(status)) return true;
    this.logger.debug({ drawId, status }, 'entry for a draw that already ended; dropped');
    return false;
  }

  /** Newest first (by openedAt; later saved first on ties). Records come without frozen lists. */
  async listDraws(options: { limit?: number } = {}): Promise<DrawRecord[]> {
    const draws = this.db.data.draws.map((record, order) => ({ record, order, at: Date.parse(record.openedAt) || 0 }));
    draws.sort((a, b) => b.at - a.at || b.order - a.order);
    const limit = options.limit === undefined ? draws.length : Math.max(0, Math.floor(options.limit));
    const out = draws
      .slice(0, limit)
      .map((d) => this.withDelivery({ ...structuredClone(d.record), mode: d.record.mode ?? 'live' } as DrawRecord));
    // An open draw's entries live in its journal until it closes: count them there.
    for (const record of out) {
      if (!ACTIVE_STATUSES.has(record.status)) continue;
      const journaled = new Set((await this.journal.read(record.id)).map((e) => e.userId)).size;
      record.entrants = Math.max(record.entrants, journaled);
    }
    return out;
  }

  /** `record` with each winner's delivery state attached (from delivery.json). */
  private withDelivery(record: DrawRecord): DrawRecord {
    for (const w of record.winners) {
      const d = this.deliveries.get(record.id, w.userId);
      if (d) w.delivery = d;
      else delete w.delivery;
    }
    // A replaced winner who kept the link they had seen (giveaway/reroll.ts) still holds a prize.
    for (const rr of record.rerolls ?? []) {
      const d = rr.kept ? this.deliveries.get(record.id, rr.replacedUserId) : undefined;
      if (d) rr.delivery = d;
      else delete rr.delivery;
    }
    return record;
  }

  /** One winner's stored delivery state (a copy), if any. */
  deliveryOf(drawId: string, userId: string): Delivery | undefined {
    return this.deliveries.get(drawId, userId);
  }

  /**
   * Changes one winner's delivery state (the delivery tracker's only way in); `announcedAt` in
   * `patch` creates it. Resolves with the new state once it is on disk (undefined: nothing to change).
   */
  updateDelivery(drawId: string, userId: string, patch: Partial<Delivery>): Promise<Delivery | undefined> {
    try {
      this.assertWritable();
    } catch (err) {
      return Promise.reject(err);
    }
    return this.deliveries.update(drawId, userId, patch);
  }

  /** User ids of the winners of finished draws closed at or after `sinceMs`. */
  async recentWinnerIds(sinceMs: number): Promise<Set<string>> {
    const ids = new Set<string>();
    for (const record of this.db.data.draws) {
      if (record.status !== 'finished' || !record.closedAt) continue;
      if (Date.parse(record.closedAt) < sinceMs) continue;
      for (const w of record.winners) ids.add(w.userId);
    }
    return ids;
  }

  /** False if `eventId` was already processed; otherwise records it durably and returns true. */
  async isEventProcessed(eventId: string): Promise<boolean> {
    return this.events?.has(eventId) ?? false;
  }

  async markEventProcessed(eventId: string): Promise<boolean> {
    this.assertWritable();
    return this.events!.mark(eventId);
  }

  /** Writes buffered journal entries and waits for pending record and event writes. */
  async flush(): Promise<void> {
    if (this.closed) return;
    await Promise.all([this.journal.flush(), this.saves, this.events?.flush(), this.deliveries.flush()]);
  }

  /** Flushes and closes every file. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.flush();
    } finally {
      this.closed = true;
      await this.journal.close();
      await this.tickets.close();
      await this.events?.close();
      await this.log.close();
    }
  }
}
