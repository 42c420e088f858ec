/**
 * The storage adapters' public surface: the only door into src/storage for the rest of the bot.
 * The file-backed DrawRepository (the history, the open-draw journal, delivery states, processed
 * webhook ids), the channel-points reward id, the history export (JSON and CSV), the data
 * directory's lock, the disk protocol every file under DATA_DIR is written by (temp file, write,
 * sync, rename, directory sync) with its small helpers, and the storage error. The other files
 * here are its implementation.
 */
export { FileDrawRepository } from './repository.js';
export { StorageError } from './errors.js';
export { toCsv, toExport, type DrawExport } from './export.js';
export { acquireDataDirLock, DataDirLockedError, LOCK_FILE, type DataDirLock } from './lock.js';
export { nodeDisk, type AppendFile, type Disk, type FileSystem } from './disk.js';
export { checkPrivate, parseJsonFile, readIfExists, writeFileAtomic } from './files.js';
export { channelPointsFile } from './channel-points-file.js';
