/**
 * Errors raised by the file storage adapters. Every error about a file names that file; none
 * carries file contents (they may hold secrets such as redeem links).
 */
import { GiftdropError } from '../shared/errors.js';

export type StorageErrorCode =
  'STORAGE_CORRUPT' | 'STORAGE_CLOSED' | 'STORAGE_READ_ONLY' | 'STORAGE_INVALID' | 'STORAGE_UNSAFE';

/** A storage failure with a stable code: corrupt file, closed/read-only repository, invalid input. */
export class StorageError extends GiftdropError {
  constructor(code: StorageErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
