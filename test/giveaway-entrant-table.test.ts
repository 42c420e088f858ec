/**
 * The entrant table (entrant-table.ts) keeps no string per entrant in the common case: decimal
 * ids live only as digit keys and logins only as UTF-8 bytes. These tests check that every string
 * read back is the one added, for the ids and logins chat can bring (leading zeros, 15 and 16+
 * digits, non-decimal ids, unicode, lone surrogates, over-long and empty logins), and that the
 * side strings are kept only for the odd rows.
 */
import { describe, expect, it } from 'vitest';
import {
  EntrantTable,
  LOGIN_KEEPS_STRING,
  LOGIN_NON_ASCII,
  LOGIN_STRING_ONLY,
} from '../src/giveaway/entrants/entrant-table.js';
import { noRoles } from '../src/shared/chat.js';
import type { Entrant } from '../src/giveaway/model.js';

const IDS = [
  '0',
  '007',
  '42',
  '123456789012345',
  '000000000000000',
  '1234567890123456',
  'u-bob',
  '',
  ' 1',
  '١٢٣',
  '12a',
];
const LOGINS = [
  'viewer',
  'Ab',
  'zoë_ñ',
  '名前',
  'emoji😀x',
  'lone\ud800',
  'x\udc00y',
  'q"uote',
  'back\\slash',
  'a\tb',
  '',
  'é'.repeat(200),
  'a'.repeat(255),
  'a'.repeat(256),
];

function entrants(): Entrant[] {
  const out: Entrant[] = [];
  IDS.forEach((userId, i) => {
    const login = LOGINS[i % LOGINS.length]!;
    out.push({
      userId,
      login,
      displayName: i % 2 ? login : `D${login}`,
      weight: 1 + i,
      roles: { ...noRoles, subscriber: i % 3 === 0, subMonths: i },
      enteredAt: 1_700_000_000_000 + i,
    });
  });
  LOGINS.forEach((login, i) => {
    out.push({
      userId: String(900_000 + i),
      login,
      displayName: login,
      weight: 1,
      roles: { ...noRoles },
      enteredAt: i,
    });
  });
  return out;
}

describe('EntrantTable', () => {
  it('gives back every id, login, display name and entrant exactly as added', () => {
    const list = entrants();
    const table = new EntrantTable(list);
    expect(table.size).toBe(list.length);
    list.forEach((e, row) => {
      expect(table.userIdAt(row), `row ${row}`).toBe(e.userId);
      expect(table.loginAt(row), `row ${row}`).toBe(e.login);
      expect(table.displayNameAt(row), `row ${row}`).toBe(e.displayName);
      expect(table.entrant(row)).toEqual(e);
      expect(table.get(e.userId)).toEqual(e);
      expect(table.rowOfUser(e.userId)).toBe(row);
    });
    expect([...table.values()]).toEqual(list);
    expect(table.findByLogin('ZOË_Ñ')?.login).toBe('zoë_ñ');
    expect(table.findByLogin('AB')?.userId).toBe('007');
    expect(table.findByLogin('nobody')).toBeUndefined();
  });

  it('flags the logins bytes cannot give back and keeps their strings; plain ones stay bytes', () => {
    const table = new EntrantTable(entrants());
    const flagsOf = (login: string) => {
      const row = entrants().findIndex((e) => e.login === login && /^9/.test(e.userId));
      return table.columns().loginFlags[row]!;
    };
    expect(flagsOf('viewer')).toBe(0);
    expect(flagsOf('zoë_ñ')).toBe(LOGIN_NON_ASCII);
    expect(flagsOf('lone\ud800') & LOGIN_KEEPS_STRING).toBe(LOGIN_KEEPS_STRING);
    expect(flagsOf('x\udc00y') & LOGIN_KEEPS_STRING).toBe(LOGIN_KEEPS_STRING);
    expect(flagsOf('emoji😀x') & LOGIN_KEEPS_STRING).toBe(0);
    expect(flagsOf('a'.repeat(255)) & LOGIN_STRING_ONLY).toBe(0);
    expect(flagsOf('a'.repeat(256)) & LOGIN_STRING_ONLY).toBe(LOGIN_STRING_ONLY);
    expect(flagsOf('é'.repeat(200)) & LOGIN_STRING_ONLY).toBe(LOGIN_STRING_ONLY);
  });

  it('a decimal id has a digit key and no side string; any other id keeps its string', () => {
    const table = new EntrantTable(entrants());
    const { keyHi } = table.columns();
    IDS.forEach((id, row) => {
      expect(keyHi[row] !== 0, id).toBe(/^\d{1,15}$/.test(id));
    });
  });

  it('a row outside the table is an error, not a wrong entrant', () => {
    const table = new EntrantTable(entrants().slice(0, 3));
    expect(() => table.userIdAt(3)).toThrow(/no entrant row 3/);
    expect(() => table.loginAt(-1)).toThrow(/no entrant row -1/);
  });
});
