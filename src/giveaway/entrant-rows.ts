/**
 * The view of an open draw's entrants that storage reads (the entry journal): by row, in entry
 * order, rows never changing once added. The entrant store (entrants/, EntrantTable) implements
 * it; the DrawRepository port (ports.ts) takes it. Types only; imports only shared/ (ports.ts
 * imports it, so it stays outside entrants/, whose files import ports.ts).
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
  /** The Shared Chat partner channel the row's entrant entered from; undefined for this channel's viewers. */
  partnerChannelAt(row: number): string | undefined;
}
