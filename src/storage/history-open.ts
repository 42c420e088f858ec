/**
 * Opening the history: the lowdb document over the history log (history-log.ts), and the one-time
 * migration of a data folder written by older versions (`history.json`, history-file.ts).
 *
 * Contract of `openHistory`:
 * - `history.jsonl` exists: lowdb reads it; when more than half its lines are superseded it is
 *   compacted (writable mode only). A `history.json` still beside it (a migration cut short after
 *   the log was written) is then moved to its backup name.
 * - only `history.json` (and/or its `.bak`) exists, writable mode: it is loaded as before (falling
 *   back to `.bak`, loudly), seeds older versions kept in it move to the seed vault, the log is
 *   written whole (disk protocol), and only then is `history.json` renamed to `history.v1.json`
 *   (kept as the backup, never read again); a note says so. This happens once: the next open finds
 *   the log.
 * - read-only mode (the CLIs) changes nothing: an unmigrated folder is read from `history.json`.
 * - nothing exists: an empty history (the log is created by the first save).
 * Does not: write records (the repository does, through lowdb).
 */
import { join } from 'node:path';
import { Low } from 'lowdb';
import type { Logger } from 'pino';
import type { Disk } from './disk.js';
import { DurableHistoryFile, loadHistory } from './history-file.js';
import { HISTORY_LOG, HistoryLog } from './history-log.js';
import { migratePendingSeeds } from './seed-migration.js';
import { SeedVault } from './seeds.js';
import { HISTORY_VERSION, type HistoryData } from './schemas.js';

/** The history document of older versions, and the name it is kept under once migrated. */
const LEGACY = 'history.json';
const LEGACY_BACKUP = 'history.v1.json';

export interface OpenedHistory {
  db: Low<HistoryData>;
  /** The file the history is read from (the log, or history.json in an unmigrated read-only open). */
  file: string;
  log: HistoryLog;
  notes: string[];
}

export async function openHistory(
  dataDir: string,
  options: { disk: Disk; readOnly: boolean; logger: Logger; nowMs: number },
): Promise<OpenedHistory> {
  const { disk, readOnly, logger } = options;
  const logFile = join(dataDir, HISTORY_LOG);
  const legacy = join(dataDir, LEGACY);
  const log = new HistoryLog(disk, logFile, logger);
  const db = new Low<HistoryData>(log, { version: HISTORY_VERSION, draws: [] });
  if (await disk.fs.exists(logFile)) {
    await db.read();
    if (!readOnly) {
      if (log.needsCompaction(db.data.draws.length)) await log.compact(db.data);
      if ((await disk.fs.exists(legacy)) && !(await disk.fs.exists(join(dataDir, LEGACY_BACKUP)))) {
        await disk.renameDurably(legacy, join(dataDir, LEGACY_BACKUP));
      }
    }
    return { db, file: logFile, log, notes: [...log.notes] };
  }
  if (!(await disk.fs.exists(legacy)) && !(await disk.fs.exists(`${legacy}.bak`)))
    return { db, file: logFile, log, notes: [] };

  const loaded = await loadHistory(legacy, options);
  const old = new Low<HistoryData>(new DurableHistoryFile(disk, legacy, loaded.currentGood), loaded.data);
  await migratePendingSeeds(old, new SeedVault(disk, dataDir), readOnly);
  db.data = old.data;
  if (readOnly) return { db, file: legacy, log, notes: loaded.notes };
  await disk.mkdirs(dataDir);
  await log.compact(db.data);
  const notes = [...loaded.notes];
  const kept = join(dataDir, LEGACY_BACKUP);
  if (await disk.fs.exists(legacy)) await disk.renameDurably(legacy, kept);
  const note = `the history (${db.data.draws.length} draws) moved to ${logFile}, where a save appends one record; the previous ${legacy} is kept as ${kept}`;
  logger.info({ file: logFile, backup: kept, draws: db.data.draws.length }, note);
  notes.push(note);
  return { db, file: logFile, log, notes };
}
