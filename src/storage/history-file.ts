/**
 * history.json and its previous good generation, history.json.bak: the history as older versions
 * kept it, read only to migrate it to the history log (history-open.ts) and by the read-only CLIs
 * on a folder not migrated yet. The bot never saves a draw here.
 *
 * Writing (lowdb adapter, used only by the one-time seed migration of seed-migration.ts on such a
 * folder): every write goes through the disk protocol (disk.ts: temp, sync, rename, directory sync)
 * and first keeps the current file as `.bak` when that file is known good (it was read or written
 * by this process), so `.bak` only ever holds a good generation.
 * Reading: a readable history.json is used as is. An unreadable or truncated one (or a missing one
 * beside a `.bak`) is replaced by `.bak`, loudly: a warning naming both files, returned as a note
 * too; the damaged file is kept as `history.json.corrupt-<timestamp>` (writable mode only). When
 * neither is readable the error names both and nothing is changed.
 * Does not: validate records one by one, or hold the draws (repository.ts does).
 */
import type { Adapter } from 'lowdb';
import type { Logger } from 'pino';
import { StorageError } from './errors.js';
import type { Disk } from './disk.js';
import { parseJsonFile } from './files.js';
import { HISTORY_VERSION, historySchema, type HistoryData } from './schemas.js';

export interface LoadedHistory {
  data: HistoryData;
  /** Whether history.json on disk holds `data` (so it may become the next `.bak`). */
  currentGood: boolean;
  /** What was recovered, one sentence each (empty when history.json was fine). */
  notes: string[];
}

function tryParse(file: string, text: string | undefined): { data?: HistoryData; error?: Error } {
  if (text === undefined) return {};
  try {
    return { data: parseJsonFile(file, text, historySchema) };
  } catch (err) {
    return { error: err as Error };
  }
}

/** Loads the history, falling back to `.bak` as described in the module comment. */
export async function loadHistory(
  file: string,
  options: { disk: Disk; readOnly: boolean; logger: Logger; nowMs: number },
): Promise<LoadedHistory> {
  const backup = `${file}.bak`;
  const { disk } = options;
  const current = tryParse(file, await disk.readText(file));
  if (current.data) return { data: current.data, currentGood: true, notes: [] };
  const previous = tryParse(backup, await disk.readText(backup));
  if (!current.error && !previous.data && !previous.error) {
    return { data: { version: HISTORY_VERSION, draws: [] }, currentGood: false, notes: [] };
  }
  if (!previous.data) {
    if (!current.error) throw previous.error!;
    const why = previous.error
      ? `the previous generation ${backup} is unreadable too`
      : `there is no previous generation (${backup})`;
    const what = current.error.message.replace(/; it was left untouched$/, '');
    throw new StorageError('STORAGE_CORRUPT', `${what}, and ${why}; nothing was changed: repair or move them away`);
  }
  let note = current.error
    ? `${file} is unreadable (${current.error.message.replace(/; it was left untouched$/, '')}): started from the previous generation ${backup}`
    : `${file} is missing: started from the previous generation ${backup}`;
  if (current.error && !options.readOnly) {
    const kept = await disk.quarantine(file, options.nowMs);
    note += `; the damaged file is kept as ${kept}`;
  }
  note += `. The draws saved after ${backup} was written may be missing from the history.`;
  options.logger.warn({ file, backup }, note);
  return { data: previous.data, currentGood: false, notes: [note] };
}

/** lowdb adapter writing history.json durably and keeping the previous good generation. */
export class DurableHistoryFile implements Adapter<HistoryData> {
  constructor(
    private readonly disk: Disk,
    private readonly file: string,
    private currentGood: boolean,
  ) {}

  async read(): Promise<HistoryData | null> {
    throw new StorageError('STORAGE_INVALID', 'the history is loaded with loadHistory(), not read through lowdb');
  }

  async write(data: HistoryData): Promise<void> {
    await this.disk.writeAtomic(this.file, JSON.stringify(data, null, 2), { backup: this.currentGood });
    this.currentGood = true;
  }
}
