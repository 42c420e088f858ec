/**
 * The canonical frozen list (canonical.ts, frozen-list.ts, freeze.ts) against the procedure as
 * written in src/fairness/procedure.ts, computed here the plain way (default string sort, one text line per
 * entrant, SHA-256): same order, same digest, same picks, for decimal Twitch ids (packed-key radix
 * path) and for any other ids (merge-sort path); the sliced run equals the synchronous one and
 * really lets other work run between slices; the close-time freeze over an entrant table equals
 * applyEligibility + freezeEntrants; the entrants file is the digested text behind a header line.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FairnessError, canonicalise } from '../src/fairness/canonical.js';
import { runSliced, runToEnd } from '../src/fairness/steps.js';
import { readDigitKey } from '../src/fairness/digit-keys.js';
import { applyEligibility } from '../src/giveaway/eligibility.js';
import { EntrantTable } from '../src/giveaway/entrants/entrant-table.js';
import { freezeEntrants, pickSequence } from '../src/fairness/procedure.js';
import { freezeEntrantTable } from '../src/giveaway/entrants/freeze.js';
import { FrozenList } from '../src/giveaway/entrants/frozen-list.js';
import { firstPicks } from '../src/giveaway/winner-picks.js';
import { frozenRowsOf, type Entrant, type FrozenEntrant } from '../src/giveaway/model.js';
import { mergeGiveawaySettings } from '../src/giveaway/settings.js';
import { noRoles } from '../src/shared/chat.js';
import { reference, rng } from './support/canonical-reference.js';
import { entrantsFileChunks } from '../src/storage/entrants-file.js';
import { entrantLine } from '../src/giveaway/entrants/journal-line.js';

function decimalEntrants(n: number, seed: number): FrozenEntrant[] {
  const next = rng(seed);
  const ids = new Set<string>();
  while (ids.size < n) {
    const digits = 1 + Math.floor(next() * 15);
    let id = '';
    for (let d = 0; d < digits; d++) id += String(Math.floor(next() * 10));
    ids.add(id);
  }
  return [...ids].map((userId, i) => ({ userId, login: `viewer_${i}`, weight: 1 + Math.floor(next() * 5) }));
}

const SEED = createHash('sha256').update('canonical-test').digest();

describe('canonical list: same order and digest as the procedure', () => {
  it('decimal ids of 1-15 digits (prefixes, leading zeros, "10" < "9") take the packed-key path', () => {
    const fixed: FrozenEntrant[] = [
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
    ].map((userId, i) => ({ userId, login: `l${i}`, weight: i + 1 }));
    const many = decimalEntrants(20_000, 7);
    for (const list of [fixed, many]) {
      const want = reference(list);
      const got = freezeEntrants(list);
      expect(got.frozen).toEqual(want.frozen);
      expect(got.digest).toBe(want.digest);
    }
    expect(freezeEntrants(fixed).frozen.map((e) => e.userId)).toEqual([
      '0',
      '09',
      '1',
      '10',
      '100',
      '12',
      '1200',
      '123456789012345',
      '9',
      '99999999999999',
    ]);
  });

  it('any other ids (letters, 16+ digits, non-ASCII logins) take the string path with the same result', () => {
    const list: FrozenEntrant[] = [
      { userId: 'u-bob', login: 'bob', weight: 2 },
      { userId: '1234567890123456', login: 'long', weight: 1 },
      { userId: '42-x', login: 'zoë_ñ', weight: 3 },
      { userId: 'U-alice', login: 'ålice', weight: 1 },
      { userId: '41a', login: '名前', weight: 7 },
      ...decimalEntrants(3_000, 11),
    ];
    const want = reference(list);
    const got = freezeEntrants(list);
    expect(got.frozen).toEqual(want.frozen);
    expect(got.digest).toBe(want.digest);
  });

  it('digit keys (the sort keys of decimal ids) order like code units for random digit strings', () => {
    /** The key as one number (hi * 2^32 + lo: exact, and ordered as the pair), or -1 for no key. */
    const packedKey = (id: string): number => {
      const key = new Uint32Array(2);
      return readDigitKey(id, key) ? key[0]! * 2 ** 32 + key[1]! : -1;
    };
    const next = rng(3);
    for (let i = 0; i < 5_000; i++) {
      const make = () =>
        Array.from({ length: 1 + Math.floor(next() * 15) }, () => String(Math.floor(next() * 10))).join('');
      const a = make();
      const b = make();
      const byString = a < b ? -1 : a > b ? 1 : 0;
      expect(Math.sign(packedKey(a) - packedKey(b))).toBe(byString);
    }
    expect(packedKey('1234567890123456')).toBe(-1);
    expect(packedKey('12a')).toBe(-1);
    expect(packedKey('')).toBe(-1);
  });

  it('the picks over the compact list are the picks over the plain list', () => {
    const list = decimalEntrants(5_000, 5);
    const plain = reference(list);
    const compact = FrozenList.freeze(list);
    expect(compact.digest).toBe(plain.digest);
    expect(compact.toArray()).toEqual(plain.frozen);
    const want = pickSequence(SEED, plain.digest, plain.frozen, 50).map((i) => plain.frozen[i]!.userId);
    expect(firstPicks(SEED, compact, 50).map((p) => p.entrant.userId)).toEqual(want);
    const stored = FrozenList.fromStored(plain.frozen, plain.digest);
    expect(firstPicks(SEED, stored, 50).map((p) => p.entrant.userId)).toEqual(want);
  });

  it('rejects what the procedure rejects', () => {
    const bad = (list: FrozenEntrant[]) => () => freezeEntrants(list);
    expect(
      bad([
        { userId: '1', login: 'a', weight: 1 },
        { userId: '1', login: 'b', weight: 1 },
      ]),
    ).toThrow(/duplicate entrant userId 1/);
    expect(
      bad([
        { userId: 'x', login: 'a', weight: 1 },
        { userId: 'x', login: 'b', weight: 1 },
      ]),
    ).toThrow(FairnessError);
    expect(bad([{ userId: '1', login: 'a\tb', weight: 1 }])).toThrow(/TAB, CR or LF/);
    expect(bad([{ userId: '', login: 'a', weight: 1 }])).toThrow(/non-empty/);
    expect(bad([{ userId: '1', login: 'a', weight: 0 }])).toThrow(/positive safe integer/);
    expect(
      bad([
        { userId: '1', login: 'a', weight: 2 ** 52 },
        { userId: '2', login: 'b', weight: 2 ** 52 },
      ]),
    ).toThrow(/2\^53/);
  });
});

describe('sliced runs', () => {
  it('runSliced gives the synchronous result and lets other callbacks run between slices', async () => {
    const rows = frozenRowsOf(decimalEntrants(30_000, 9));
    const sync = runToEnd(canonicalise(rows));
    let other = 0;
    const tick = () => {
      other += 1;
      if (other < 1_000) setImmediate(tick);
    };
    setImmediate(tick);
    const sliced = await runSliced(canonicalise(rows), 0);
    expect(sliced.digest).toBe(sync.digest);
    expect([...sliced.order]).toEqual([...sync.order]);
    expect(other).toBeGreaterThan(1);
  });
});

describe('freeze at close over an entrant table', () => {
  function entrants(n: number): Entrant[] {
    const next = rng(21);
    return decimalEntrants(n, 13).map((e, i) => {
      const subscriber = next() < 0.3;
      return {
        userId: e.userId,
        login: e.login,
        displayName: i % 3 === 0 ? e.login : `Viewer_${i}`,
        weight: subscriber ? 2 : 1,
        roles: {
          ...noRoles,
          subscriber,
          subMonths: subscriber ? Math.floor(next() * 30) : 0,
          moderator: next() < 0.05,
          firstMessage: next() < 0.1,
        },
        enteredAt: 1_000 + i,
      };
    });
  }

  it('equals applyEligibility + freezeEntrants: eligible set, order, digest, exclusions and rules', async () => {
    const list = entrants(8_000);
    const taken = new Set(list.map((e) => e.userId));
    let streamerId = 5;
    while (taken.has(String(streamerId))) streamerId += 1;
    list.push({ ...list[0]!, userId: String(streamerId), login: 'streamer', roles: { ...noRoles } });
    const settings = mergeGiveawaySettings({
      eligibility: {
        excludeModerators: true,
        minSubMonths: 0,
        excludeLogins: ['@viewer_7', 'VIEWER_8'],
        excludeFirstTimeChatters: true,
      },
    });
    const id = { channelLogin: 'streamer', botLogin: 'giftbot' };
    const recent = new Set([list[10]!.userId]);
    const table = new EntrantTable(list);
    const got = await freezeEntrantTable(table, settings, id, recent);
    const elig = applyEligibility(list, settings, id, recent);
    const want = freezeEntrants(elig.eligible.map((e) => ({ userId: e.userId, login: e.login, weight: e.weight })));
    expect(got.frozen.digest).toBe(want.digest);
    expect(got.frozen.toArray()).toEqual(want.frozen);
    expect(got.excluded).toEqual(elig.excluded);
    expect(got.rules).toEqual(elig.rules);
    expect(got.excluded).toMatchObject({ broadcaster: 1, 'winner-cooldown': 1 });
    expect(got.excluded['excluded-login']).toBeGreaterThan(0);
  });

  it('the table keeps each user id once, in entry order, and gives every field back', () => {
    const list = entrants(100);
    const table = new EntrantTable();
    for (const e of list) expect(table.add(e)).toBe(true);
    expect(table.add({ ...list[3]!, login: 'someone_else' })).toBe(false);
    expect(table.size).toBe(100);
    for (let row = 0; row < list.length; row++) expect(table.entrant(row)).toEqual(list[row]);
    expect(table.get(list[5]!.userId)).toEqual(list[5]);
    expect(table.displayNameOf(list[6]!.userId)).toBe(list[6]!.displayName);
    expect(table.findByLogin(list[7]!.login.toUpperCase())).toEqual(list[7]);
    expect(table.get('nobody')).toBeUndefined();
  });
});

describe('storage formats stay byte-identical', () => {
  it('the entrants file is a header line and the exact text the procedure hashes, built once or from rows', async () => {
    const list: FrozenEntrant[] = [
      ...decimalEntrants(40_000, 17),
      { userId: 'q"uote', login: 'back\\slash', weight: 12 },
      { userId: '77x', login: 'ünïcode✓', weight: 3 },
    ];
    const { frozen, digest } = reference(list);
    const text = frozen.map((e) => `${e.userId}\t${e.login}\t${e.weight}\n`).join('');
    const want = `giftdrop-entrants\t2\t"gdr_x/y"\t${list.length}\n${text}`;
    const built = FrozenList.freeze(list);
    expect(built.digest).toBe(digest);
    expect(Buffer.concat(await entrantsFileChunks('gdr_x/y', built)).toString('utf8')).toBe(want);
    expect(Buffer.concat(await entrantsFileChunks('gdr_x/y', frozenRowsOf(frozen))).toString('utf8')).toBe(want);
  });

  it('a journal line is the compact array of a standard entrant, the whole object otherwise', () => {
    const e: Entrant = {
      userId: '123',
      login: 'a"b',
      displayName: 'Ünï',
      weight: 2,
      roles: { broadcaster: false, moderator: true, vip: false, subscriber: true, subMonths: 7, firstMessage: false },
      enteredAt: 1_767_300_000_123,
    };
    expect(entrantLine(e)).toBe(JSON.stringify(['123', 'a"b', 'Ünï', 2, 2 | 8, 7, 1_767_300_000_123]));
    const extra = { ...e, note: 'kept' } as Entrant;
    expect(entrantLine(extra)).toBe(JSON.stringify(extra));
    const { userId, ...rest } = e;
    const reordered = { ...rest, userId };
    expect(entrantLine(reordered)).toBe(entrantLine(e));
  });
});
