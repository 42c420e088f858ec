/**
 * The entrant table's user-id index (id-index.ts) against a plain Map, over ids a flood brings:
 * decimal ids of 1-15 digits (leading zeros and prefixes of each other included), ids of 16+
 * digits, and ids that are not decimal at all, across many doublings of the hash table.
 */
import { describe, expect, it } from 'vitest';
import { IdIndex } from '../src/giveaway/entrants/id-index.js';
import { EntrantTable } from '../src/giveaway/entrants/entrant-table.js';

/** A seeded generator (mulberry32), so a failure names its case. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomId(next: () => number): string {
  const kind = next();
  if (kind < 0.7) {
    const digits = 1 + Math.floor(next() * 15);
    let id = '';
    for (let i = 0; i < digits; i++) id += String(Math.floor(next() * 10));
    return id;
  }
  if (kind < 0.8) return String(Math.floor(next() * 1e6)).padStart(16 + Math.floor(next() * 4), '0');
  if (kind < 0.9) return `u${Math.floor(next() * 5000)}`;
  return ['', ' 1', '1 ', '12a', '١٢٣', '+1', '-1', '1.0', '0x1', 'ＡＢ'][Math.floor(next() * 10)]!;
}

describe('IdIndex', () => {
  it('finds every id it was given, at its row, and nothing else (as a Map does)', () => {
    const next = rng(20261123);
    const index = new IdIndex();
    const reference = new Map<string, number>();
    for (let i = 0; i < 60_000; i++) {
      const id = randomId(next);
      const fresh = !reference.has(id);
      if (fresh) reference.set(id, reference.size);
      expect(index.add(id, fresh ? reference.get(id)! : 99_999_999)).toBe(fresh);
      if (i % 97 === 0) {
        const probe = randomId(next);
        expect(index.rowOf(probe)).toBe(reference.get(probe) ?? -1);
      }
    }
    expect(reference.size).toBeGreaterThan(30_000);
    for (const [id, row] of reference) expect(index.rowOf(id)).toBe(row);
  });

  /**
   * The !enter path: a look-up of `id` then add(id); or of `id`, of `other`, then add(id); or of
   * `other` then add(id). Every answer is checked against a Map, then every id's row.
   */
  function lookUpThenAdd(
    seed: number,
    inAlready: (index: IdIndex, reference: Map<string, number>, id: string) => void,
  ): void {
    const next = rng(seed);
    const index = new IdIndex();
    const reference = new Map<string, number>();
    for (let i = 0; i < 40_000; i++) {
      const id = randomId(next);
      const other = randomId(next);
      const kind = next();
      inAlready(index, reference, kind < 0.66 ? id : other);
      if (kind >= 0.33 && kind < 0.66) inAlready(index, reference, other);
      const fresh = !reference.has(id);
      if (fresh) reference.set(id, reference.size);
      expect(index.add(id, fresh ? reference.get(id)! : 99_999_999)).toBe(fresh);
    }
    expect(reference.size).toBeGreaterThan(20_000);
    for (const [id, row] of reference) {
      expect(index.has(id)).toBe(true);
      expect(index.rowOf(id)).toBe(row);
    }
  }

  it('an add right after a rowOf that missed (the !enter path) lands where a plain add would, and only for that id', () => {
    lookUpThenAdd(7, (index, reference, id) => expect(index.rowOf(id)).toBe(reference.get(id) ?? -1));
  });

  it('has() answers as the Map does, and an add right after a has() that missed lands where a plain add would', () => {
    lookUpThenAdd(11, (index, reference, id) => expect(index.has(id)).toBe(reference.has(id)));
  });

  it('keeps ids that differ only in leading zeros or length apart', () => {
    const index = new IdIndex();
    const ids = [
      '0',
      '00',
      '000000000000000',
      '1',
      '01',
      '10',
      '100',
      '123456789012345',
      '12345678901234',
      '1234567890123456',
      '99999999',
      '999999999',
    ];
    ids.forEach((id, row) => expect(index.add(id, row)).toBe(true));
    ids.forEach((id, row) => {
      expect(index.rowOf(id)).toBe(row);
      expect(index.add(id, 500)).toBe(false);
    });
    expect(index.rowOf('0000')).toBe(-1);
    expect(index.rowOf('')).toBe(-1);
  });

  it('an entrant table refuses a second entry of an id and a display name too long to keep, leaving no trace', () => {
    const table = new EntrantTable();
    const roles = {
      broadcaster: false,
      moderator: false,
      vip: false,
      subscriber: false,
      subMonths: 0,
      firstMessage: false,
    };
    const entrant = (userId: string, displayName = 'Viewer') => ({
      userId,
      login: 'viewer',
      displayName,
      weight: 1,
      roles,
      enteredAt: 1,
    });
    expect(table.add(entrant('42'))).toBe(true);
    expect(table.add(entrant('42', 'Other'))).toBe(false);
    expect(() => table.add(entrant('43', 'é'.repeat(40_000)))).toThrow(/display name too long/);
    expect(table.has('43')).toBe(false);
    expect(table.add(entrant('43'))).toBe(true);
    expect(table.size).toBe(2);
    expect(table.rowOfUser('43')).toBe(1);
    expect(table.get('42')?.displayName).toBe('Viewer');
  });
});
