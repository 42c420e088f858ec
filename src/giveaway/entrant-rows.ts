/**
 * The views of an open draw's entrants that storage reads (the entry journal): by row, in entry
 * order, rows never changing once added. EntrantTable (entrant-table.ts) implements them; the
 * DrawRepository port (ports.ts) takes them. Types only; imports only shared/.
 */
import type { ChatRoles } from '../shared/chat.js';

/**
 * A draw's entrants by row as storage reads them (EntrantTable): rows are appended in entry order
 * and never change.
 */
export interface EntrantRows {
  userIdAt(row: number): string;
  loginAt(row: number): string;
  displayNameAt(row: number): string;
  weightAt(row: number): number;
  rolesAt(row: number): ChatRoles;
  enteredAtOf(row: number): number;
  /** The columns behind the rows, for writers that copy stored bytes (the journal); optional. */
  rowBytes?(): EntrantRowBytes;
}

/**
 * An entrant table's columns by row, read-only, valid until the next row is added: a decimal user
 * id's digit keys (digit-keys.ts; keyHi 0: read userIdAt); a login's UTF-8 bytes at
 * loginBytes[loginStart .. + loginLen) when its loginFlags are 0 (else read loginAt); a display
 * name unlike the login at names[nameAt .. + nameLen) (nameLen 0: same as the login).
 */
export interface EntrantRowBytes {
  keyHi: Uint32Array;
  keyLo: Uint32Array;
  loginBytes: Uint8Array;
  loginStart: Float64Array;
  loginLen: Uint8Array;
  loginFlags: Uint8Array;
  names: Uint8Array;
  nameAt: Float64Array;
  nameLen: Uint16Array;
  weights: Float64Array;
  /** packRoles bits (entrant-table.ts). */
  roleBits: Uint8Array;
  /** Subscription months. */
  months: Uint16Array;
  enteredAt: Float64Array;
}
