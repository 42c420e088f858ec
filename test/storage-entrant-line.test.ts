/**
 * The journal's entrant lines written as bytes (entrant-line.ts LineBytes): the same bytes as
 * `JSON.stringify(entrant) + '\n'` in UTF-8 for plain, escaped, non-ASCII and odd-number entrants,
 * across buffer growth, and read back by the journal's own parser.
 */
import { describe, expect, it } from 'vitest';
import type { Entrant } from '../src/giveaway/ports.js';
import { LineBytes, entrantLine } from '../src/storage/entrant-line.js';
import { parseJournal } from '../src/storage/journal.js';

const roles = { broadcaster: false, moderator: true, vip: false, subscriber: true, subMonths: 7, firstMessage: false };

function entrant(over: Partial<Entrant> = {}): Entrant {
  return { userId: '123456789', login: 'viewer_1', displayName: 'Viewer_1', weight: 2, roles, enteredAt: 1_767_300_000_123, ...over };
}

const cases: Entrant[] = [
  entrant(),
  entrant({ weight: 1, roles: { broadcaster: true, moderator: false, vip: true, subscriber: false, subMonths: 0, firstMessage: true } }),
  entrant({ login: 'a"b', displayName: 'back\\slash' }),
  entrant({ displayName: 'Ünïcødé ✓ 🎁' }),
  entrant({ displayName: 'tab\there\nline\u0001ctl\u007f' }),
  entrant({ userId: '\ud800lone', displayName: 'x\udfffy' }),
  entrant({ displayName: '' }),
  entrant({ weight: 1.5, enteredAt: 0 }),
  entrant({ weight: 10, enteredAt: Number.MAX_SAFE_INTEGER }),
  entrant({ weight: 3, enteredAt: 1e21 }),
  entrant({ enteredAt: -5, roles: { ...roles, subMonths: 0.25 } }),
  entrant({ enteredAt: Number.NaN }),
  entrant({ displayName: 'x'.repeat(70_000) }),
  { ...entrant(), note: 'an extra field' } as Entrant,
];

describe('LineBytes.addEntrant', () => {
  it('writes JSON.stringify(entrant) and a newline, byte for byte', () => {
    for (const e of cases) {
      const lines = new LineBytes(8);
      lines.addEntrant(e);
      expect(lines.bytes().toString('utf8')).toBe(`${JSON.stringify(e)}\n`);
      expect(entrantLine(e)).toBe(JSON.stringify(e));
    }
  });

  it('keeps every line across buffer growth and the journal parser reads them back', () => {
    const lines = new LineBytes(16);
    const all: Entrant[] = [];
    for (let i = 0; i < 2_000; i++) {
      const e = cases[i % cases.length]!;
      const one = { ...e, userId: `${i}-${e.userId}` };
      all.push(one);
      lines.addEntrant(one);
    }
    const text = lines.bytes().toString('utf8');
    expect(text).toBe(all.map((e) => `${JSON.stringify(e)}\n`).join(''));
    const parsed = parseJournal(text);
    // NaN is written as null (JSON) and fails the schema, as with JSON.stringify before.
    const readable = all.filter((e) => Number.isFinite(e.enteredAt) && Number.isInteger(e.weight));
    expect(parsed.entrants.map((e) => e.userId)).toEqual(readable.map((e) => e.userId));
  });
});
