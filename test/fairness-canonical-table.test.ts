/**
 * The freeze over an entrant table's columns (canonical-table.ts, digit-keys.ts, the table's key
 * and login-byte columns) against the procedure as written in src/fairness/procedure.ts, computed here the plain
 * way (default string sort, one text line per entrant, SHA-256), and against the string path
 * (canonical.ts) over the same rows: same order, digest and digest bytes, for decimal ids of every
 * length with unicode logins, weights of several digits and rows whose login is kept as a string
 * only; the same errors; other ids fall back to the string path with the same result.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalise, type ListRows } from '../src/fairness/canonical.js';
import { runToEnd } from '../src/fairness/steps.js';
import { canonicaliseTable } from '../src/giveaway/entrants/canonical-table.js';
import { digitKey, sortByDigitKeys, writeDigits } from '../src/fairness/digit-keys.js';
import { EntrantTable } from '../src/giveaway/entrants/entrant-table.js';
import { freezeEntrantTable } from '../src/giveaway/entrants/freeze.js';
import type { Entrant } from '../src/giveaway/model.js';
import { mergeGiveawaySettings } from '../src/giveaway/settings.js';
import { noRoles } from '../src/shared/chat.js';
import { reference, rng } from './support/canonical-reference.js';

const LOGINS = ['viewer', 'zoë_ñ', '名前', 'emoji😀x', 'lone\ud800', 'q"uote', 'back\\slash', 'Ab'];

/** n entrants with distinct decimal ids of 1-15 digits and varied logins and weights. */
function decimalList(n: number, seed: number, digits?: number): Entrant[] {
  const next = rng(seed);
  const ids = new Set<string>();
  while (ids.size < n) {
    const len = digits ?? 1 + Math.floor(next() * 15);
    let id = '';
    for (let d = 0; d < len; d++) id += String(Math.floor(next() * 10));
    ids.add(id);
  }
  return [...ids].map((userId, i) => ({
    userId,
    login: `${LOGINS[i % LOGINS.length]}${i}`,
    displayName: `V${i}`,
    weight: i % 11 === 0 ? 1 + Math.floor(next() * 100_000) : 1 + (i % 3),
    roles: { ...noRoles },
    enteredAt: i,
  }));
}

function allRows(n: number): Uint32Array {
  return Uint32Array.from({ length: n }, (_, i) => i);
}

function tableRows(table: EntrantTable): ListRows {
  return {
    length: table.size,
    userId: (r) => table.userIdAt(r),
    login: (r) => table.loginAt(r),
    weight: (r) => table.weightAt(r),
  };
}

function columnar(list: Entrant[]) {
  const table = new EntrantTable(list);
  const got = runToEnd(canonicaliseTable(table, allRows(table.size)));
  return { table, got };
}

describe('digit keys', () => {
  it('order like code units, equal only for equal ids, and give the digits back', () => {
    const next = rng(3);
    const hi = new Uint32Array(2);
    const lo = new Uint32Array(2);
    const out = Buffer.alloc(15);
    const make = () =>
      Array.from({ length: 1 + Math.floor(next() * 15) }, () => String(Math.floor(next() * 10))).join('');
    for (let i = 0; i < 20_000; i++) {
      const a = i % 50 === 0 ? '0'.repeat(1 + (i % 15)) : make();
      const b = i % 7 === 0 ? a.slice(0, Math.max(1, a.length - 1)) : make();
      digitKey(a, hi, lo, 0);
      digitKey(b, hi, lo, 1);
      const byKey = hi[0]! !== hi[1]! ? Math.sign(hi[0]! - hi[1]!) : Math.sign(lo[0]! - lo[1]!);
      expect(byKey, `${a} vs ${b}`).toBe(a < b ? -1 : a > b ? 1 : 0);
      expect(out.toString('latin1', 0, writeDigits(out, 0, hi[0]!, lo[0]!))).toBe(a);
    }
    for (const id of ['', '1234567890123456', '12a', '١٢', ' 1']) {
      digitKey(id, hi, lo, 0);
      expect(hi[0], id).toBe(0);
    }
  });

  it('the radix sort is stable and sorts ids of one length (constant bytes skipped) and of mixed lengths', () => {
    for (const digits of [9, undefined]) {
      const list = decimalList(30_000, 5, digits);
      const n = list.length;
      const hi = new Uint32Array(n);
      const lo = new Uint32Array(n);
      list.forEach((e, i) => digitKey(e.userId, hi, lo, i));
      const sorted = runToEnd(sortByDigitKeys(hi, lo, allRows(n)));
      expect([...sorted.rows].map((r) => list[r]!.userId)).toEqual(list.map((e) => e.userId).sort());
    }
    const same = new Uint32Array(5).fill(7);
    expect([...runToEnd(sortByDigitKeys(same, new Uint32Array(5), allRows(5))).rows]).toEqual([0, 1, 2, 3, 4]);
  });
});

describe('canonical list over table columns', () => {
  it('equals the procedure and the string path: order, weights, digest and digest bytes', () => {
    const fixed = [
      '9',
      '10',
      '100',
      '09',
      '0',
      '1',
      '99999999999999',
      '123456789012345',
      '12',
      '1200',
      '000000000000000',
    ];
    const lists = [
      fixed.map((userId, i) => ({
        ...decimalList(1, 1)[0]!,
        userId,
        login: `${LOGINS[i % LOGINS.length]}`,
        weight: 10 ** (i % 6),
      })),
      decimalList(20_000, 7),
      decimalList(20_000, 8, 9),
      decimalList(1, 9),
      [],
    ];
    for (const list of lists) {
      const { table, got } = columnar(list);
      expect(got).toBeDefined();
      const want = reference(list);
      expect(got!.digest).toBe(want.digest);
      expect(Buffer.concat(got!.bytes).toString('utf8')).toBe(Buffer.from(want.text, 'utf8').toString('utf8'));
      expect([...got!.order].map((r) => table.userIdAt(r))).toEqual(want.frozen.map((e) => e.userId));
      expect([...got!.weights]).toEqual(want.frozen.map((e) => e.weight));
      const strings = runToEnd(canonicalise(tableRows(table)));
      expect(Buffer.concat(got!.bytes).equals(Buffer.concat(strings.bytes))).toBe(true);
      expect([...got!.order]).toEqual([...strings.order]);
    }
  });

  it('a subset of rows (the eligible ones) gives table rows in canonical order', () => {
    const list = decimalList(5_000, 12);
    const table = new EntrantTable(list);
    const rows = Uint32Array.from(list.map((_, i) => i).filter((i) => i % 3 !== 1));
    const want = reference([...rows].map((r) => list[r]!));
    const got = runToEnd(canonicaliseTable(table, rows.slice()))!;
    expect(got.digest).toBe(want.digest);
    expect([...got.order].map((r) => table.userIdAt(r))).toEqual(want.frozen.map((e) => e.userId));
  });

  it('falls back (undefined) for a non-decimal id or a login kept only as a string; the freeze still equals the procedure', async () => {
    const settings = mergeGiveawaySettings({});
    const id = { channelLogin: 'streamer', botLogin: 'giftbot' };
    for (const odd of [
      { userId: 'u-bob', login: 'bob' },
      { userId: '1234567890123456', login: 'long' },
      { userId: '5', login: 'é'.repeat(200) },
    ]) {
      const list = [
        ...decimalList(2_000, 4).filter((e) => e.userId !== odd.userId),
        { ...decimalList(1, 1)[0]!, ...odd },
      ];
      const table = new EntrantTable(list);
      expect(runToEnd(canonicaliseTable(table, allRows(table.size)))).toBeUndefined();
      const frozen = (await freezeEntrantTable(table, settings, id, new Set())).frozen;
      const want = reference(list);
      expect(frozen.digest).toBe(want.digest);
      expect(frozen.toArray()).toEqual(want.frozen);
    }
  });

  it('rejects what the string path rejects, with the same message', () => {
    const base = decimalList(50, 2);
    const cases: Partial<Entrant>[] = [
      { login: 'a\tb' },
      { login: 'x\ny' },
      { login: 'é\rb' },
      { login: 'a\té' },
      { login: '' },
      { weight: 0 },
      { weight: 1.5 },
    ];
    for (const change of cases) {
      const list = base.map((e, i) => (i === 17 ? { ...e, ...change } : e));
      const table = new EntrantTable(list);
      const strings = () => runToEnd(canonicalise(tableRows(table)));
      const columns = () => runToEnd(canonicaliseTable(table, allRows(table.size)));
      const message = (() => {
        try {
          strings();
        } catch (err) {
          return (err as Error).message;
        }
        return 'no error';
      })();
      expect(message, JSON.stringify(change)).toMatch(/^entrant 17: /);
      expect(columns).toThrow(message);
    }
    const heavy = base.slice(0, 2).map((e) => ({ ...e, weight: 2 ** 52 }));
    expect(() => runToEnd(canonicaliseTable(new EntrantTable(heavy), allRows(2)))).toThrow(/2\^53/);
  });
});

describe('eligibility over table columns (strings read only where the rules could exclude)', () => {
  it('equals applyEligibility for every rule, unicode logins, login lengths the rules name, and decimal or other ids', async () => {
    const { applyEligibility } = await import('../src/giveaway/eligibility.js');
    const { freezeEntrants } = await import('../src/fairness/procedure.js');
    const next = rng(31);
    const list: Entrant[] = decimalList(6_000, 33).map((e, i) => {
      const subscriber = next() < 0.4;
      return {
        ...e,
        login: i % 97 === 0 ? 'StreamerX' : i % 89 === 0 ? 'giftbot' : i % 83 === 0 ? 'İbad' : e.login,
        roles: {
          ...noRoles,
          subscriber,
          subMonths: subscriber ? Math.floor(next() * 30) : 0,
          moderator: next() < 0.05,
          firstMessage: next() < 0.1,
          broadcaster: i === 5,
        },
      };
    });
    list.push({ ...list[1]!, userId: 'u-odd', login: 'odd' });
    const ids = list.map((e) => e.userId);
    const rulesList = [
      {},
      { excludeModerators: true, excludeFirstTimeChatters: true },
      { subscribersOnly: true },
      { minSubMonths: 6, excludeLogins: ['@Viewer12', 'İBAD', 'x'.repeat(300)] },
      { subscribersOnly: true, minSubMonths: 3, excludeLogins: ['zoë_ñ1'] },
    ];
    const identities = [
      { channelLogin: 'streamerx', botLogin: 'GiftBot' },
      { channelLogin: 'streamerx', botLogin: 'giftbot', channelId: ids[7]! },
      { channelLogin: 'nobody', botLogin: 'giftbot', channelId: 'u-odd' },
    ];
    const recents = [new Set<string>(), new Set([ids[3]!, ids[4]!.slice(0, 8), 'u-odd'])];
    for (const eligibility of rulesList) {
      for (const id of identities) {
        for (const recent of recents) {
          const settings = mergeGiveawaySettings({ eligibility });
          const got = await freezeEntrantTable(new EntrantTable(list), settings, id, recent);
          const want = applyEligibility(list, settings, id, recent);
          expect(got.excluded).toEqual(want.excluded);
          expect(got.frozen.digest).toBe(freezeEntrants(want.eligible).digest);
        }
      }
    }
  });
});

describe('the picks weight tree built during the freeze', () => {
  it('gives the picks of the procedure (first picks and later ones)', async () => {
    const { pickSequence } = await import('../src/fairness/procedure.js');
    const { firstPicks } = await import('../src/giveaway/winner-picks.js');
    const list = decimalList(7_000, 41);
    const { frozen } = await freezeEntrantTable(
      new EntrantTable(list),
      mergeGiveawaySettings({}),
      { channelLogin: 'c', botLogin: 'b' },
      new Set(),
    );
    expect(frozen.fenwick).toHaveLength(list.length + 1);
    const want = reference(list);
    const seed = createHash('sha256').update('tree').digest();
    const expected = pickSequence(seed, want.digest, want.frozen, 300).map((i) => want.frozen[i]!.userId);
    expect(firstPicks(seed, frozen, 300).map((p) => p.entrant.userId)).toEqual(expected);
    // the tree is borrowed and put back as it was: asking again gives the same sequence
    const before = frozen.fenwick!.slice();
    expect(firstPicks(seed, frozen, 300).map((p) => p.entrant.userId)).toEqual(expected);
    expect(frozen.fenwick!.every((v, i) => v === before[i])).toBe(true);
  });
});
