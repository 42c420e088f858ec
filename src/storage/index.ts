/**
 * The storage adapters' public surface: the file-backed DrawRepository, the history export and
 * the storage error. Everything else in storage/ is an implementation detail.
 */
export { FileDrawRepository } from './repository.js';
export { StorageError } from './errors.js';
export { toExport } from './export.js';
