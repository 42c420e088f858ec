/**
 * The journal's entrant lines (src/giveaway/entrants/journal-line.ts): a standard entrant is written as the compact
 * array `JSON.stringify([userId, login, displayName, weight, roleBits, subMonths, enteredAt])`,
 * anything else as `JSON.stringify(entrant)`; the bytes LineBytes writes are exactly those lines
 * in UTF-8 (plain, escaped, non-ASCII and odd-number entrants, across buffer growth, and from an
 * entrant table's rows, one by one and copied from its stored bytes), and the journal's own parser reads both formats back to the same entrants.
 */
import { describe, expect, it } from 'vitest';
import { EntrantTable } from '../src/giveaway/entrants/entrant-table.js';
import type { Entrant } from '../src/giveaway/model.js';
import { LineBytes, entrantLine } from '../src/giveaway/entrants/journal-line.js';
import { parseJournal } from '../src/storage/journal.js';

const roles = { broadcaster: false, moderator: true, vip: false, subscriber: true, subMonths: 7, firstMessage: false };

function entrant(over: Partial<Entrant> = {}): Entrant {
  return {
    userId: '123456789',
    login: 'viewer_1',
    displayName: 'Viewer_1',
    weight: 2,
    roles,
    enteredAt: 1_767_300_000_123,
    ...over,
  };
}

/** The compact line written out plainly (the format's definition). */
function compact(e: Entrant): string {
  const r = e.roles;
  const bits =
    (r.broadcaster ? 1 : 0) |
    (r.moderator ? 2 : 0) |
    (r.vip ? 4 : 0) |
    (r.subscriber ? 8 : 0) |
    (r.firstMessage ? 16 : 0);
  return JSON.stringify([e.userId, e.login, e.displayName, e.weight, bits, r.subMonths, e.enteredAt]);
}

const standard: Entrant[] = [
  entrant(),
  entrant({
    weight: 1,
    roles: { broadcaster: true, moderator: false, vip: true, subscriber: false, subMonths: 0, firstMessage: true },
  }),
  entrant({ login: 'a"b', displayName: 'back\\slash' }),
  entrant({ displayName: 'Ünïcødé ✓ 🎁' }),
  entrant({ displayName: 'tab\there\nline\u0001ctl\u007f' }),
  entrant({ userId: '\ud800lone', displayName: 'x\udfffy' }),
  entrant({ displayName: '' }),
  entrant({ weight: 1.5, enteredAt: 0 }),
  entrant({ weight: 10, enteredAt: Number.MAX_SAFE_INTEGER }),
  entrant({ weight: 3, enteredAt: 1e21 }),
  entrant({ enteredAt: -5, roles: { ...roles, subMonths: 0.25 } }),
  entrant({ displayName: 'x'.repeat(70_000) }),
  // around the 8-digit halves the number writer works in
  ...[9, 10, 99_999_999, 100_000_000, 100_000_001, 1_000_000_007, 4_294_967_296, 1e15, 9_007_199_254_740_990].map(
    (n, i) => entrant({ weight: n, enteredAt: n + i, roles: { ...roles, subMonths: i * 1111 } }),
  ),
];
/** Not standard: written as the whole object. */
const other: Entrant[] = [
  entrant({ enteredAt: Number.NaN }),
  { ...entrant(), note: 'an extra field' } as Entrant,
  entrant({ roles: { ...roles, vip: 'yes' as unknown as boolean } }),
  entrant({ roles: { ...roles, badge: 'extra' } as unknown as Entrant['roles'] }),
];

describe('entrant journal lines', () => {
  it('a standard entrant is the compact array, anything else the whole object', () => {
    for (const e of standard) expect(entrantLine(e)).toBe(compact(e));
    for (const e of other) expect(entrantLine(e)).toBe(JSON.stringify(e));
    // about a quarter of the object line
    expect(entrantLine(entrant()).length).toBeLessThan(JSON.stringify(entrant()).length / 3);
  });

  it('LineBytes writes the line and a newline, byte for byte', () => {
    for (const e of [...standard, ...other]) {
      const lines = new LineBytes(8);
      lines.addEntrant(e);
      expect(lines.bytes().toString('utf8')).toBe(`${entrantLine(e)}\n`);
    }
  });

  it('a table row is written as its entrant is', () => {
    const table = new EntrantTable();
    const rows = standard.filter(
      (e) => Number.isInteger(e.weight) && e.weight > 0 && e.enteredAt >= 0 && e.displayName.length < 100,
    );
    // logins the table cannot keep as plain bytes, or whose bytes need escaping
    const logins = ['Ünï', 'tab\there', '', 'q"uote', 'back\\slash', 'l'.repeat(300), 'same_as_name'];
    for (const login of logins)
      rows.push(entrant({ login, displayName: login }), entrant({ login, displayName: 'Other"Name' }));
    rows.forEach((e, i) =>
      table.add({ ...e, userId: `${i}${e.userId}`, roles: { ...e.roles, subMonths: Math.floor(e.roles.subMonths) } }),
    );
    const byRow = new LineBytes(8);
    const byObject = new LineBytes(8);
    for (let row = 0; row < table.size; row++) {
      byRow.addRow(table, row);
      byObject.addEntrant(table.entrant(row));
    }
    expect(table.size).toBe(rows.length);
    expect(byRow.bytes().toString('utf8')).toBe(byObject.bytes().toString('utf8'));
    // the journal's path: runs of rows copied from the table's stored bytes, across buffer growth
    const byRows = new LineBytes(8);
    byRows.addRows(table, 0, 3);
    byRows.addRows(table, 3, table.size);
    expect(byRows.bytes().toString('utf8')).toBe(byObject.bytes().toString('utf8'));
  });

  it('keeps every line across buffer growth and the journal parser reads them back as they were', () => {
    const lines = new LineBytes(16);
    const all: Entrant[] = [];
    const cases = [...standard, ...other];
    for (let i = 0; i < 2_000; i++) {
      const e = cases[i % cases.length]!;
      const one = { ...e, userId: `${i}-${e.userId}` };
      all.push(one);
      lines.addEntrant(one);
    }
    const text = lines.bytes().toString('utf8');
    expect(text).toBe(all.map((e) => `${entrantLine(e)}\n`).join(''));
    const parsed = parseJournal(text);
    // NaN is written as null (JSON) and fails the schema; so do weights that are not positive integers.
    const readable = all.filter(
      (e) => Number.isFinite(e.enteredAt) && Number.isInteger(e.weight) && typeof e.roles.vip === 'boolean',
    );
    expect(parsed.entrants).toEqual(readable);
    expect(parsed.badLines).toHaveLength(all.length - readable.length);
  });

  it('reads a journal an older version wrote (object lines) with compact lines appended after it', () => {
    const old = [entrant({ userId: '1' }), entrant({ userId: '2', displayName: 'Zwei' })];
    const added = [entrant({ userId: '3' }), entrant({ userId: '4', login: 'vier' })];
    const lines = new LineBytes(8);
    for (const e of added) lines.addEntrant(e);
    const text = old.map((e) => `${JSON.stringify(e)}\n`).join('') + lines.bytes().toString('utf8');
    expect(parseJournal(text)).toEqual({ entrants: [...old, ...added], badLines: [], tornLast: false });
  });

  it('a torn compact line never reads as an entrant', () => {
    const line = entrantLine(entrant());
    for (let cut = 1; cut < line.length; cut++) {
      const parsed = parseJournal(line.slice(0, cut));
      expect(parsed.entrants).toEqual([]);
      expect(parsed.tornLast).toBe(true);
    }
    // arrays of another shape are unreadable lines, not entrants
    const odd = ['["1","a","A",1,0,0]', '["1","a","A",1,32,0,5]', '["1","a","A",1,1.5,0,5]', '[]'];
    expect(parseJournal(`${odd.join('\n')}\n`)).toEqual({ entrants: [], badLines: [1, 2, 3, 4], tornLast: false });
  });
});
