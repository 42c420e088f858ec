/**
 * The storage adapters' public surface: the file-backed DrawRepository, the history export and
 * the storage error. Everything else in storage/ is an implementation detail.
 */
export { FileDrawRepository, type FileDrawRepositoryOptions } from './repository.js';
export { StorageError, type StorageErrorCode } from './errors.js';
export { toExport, toCsv, type DrawExport } from './export.js';
