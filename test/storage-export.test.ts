import { describe, expect, it } from 'vitest';
import { csvCell, toCsv, toExport } from '../src/storage/export.js';
import { finishedRecord } from './support/fairness-records.js';
import { openRecord } from './support/storage-helpers.js';

describe('history export', () => {
  it('maps a record to the contract shape, with extras but without secrets of open draws or internals', () => {
    const record = {
      ...finishedRecord({ id: 'x', winners: 2, rerollPicks: [0] }),
      pendingSeed: 'f'.repeat(64),
      finishInFlight: false,
      giftIds: ['gft_1'],
      failure: undefined,
      rules: { minAccountAgeDays: 7 },
    };
    record.source = { ...record.source, giftPurchaseId: 'gp_1' };
    const out = toExport(record);
    expect(out).toEqual({
      mode: 'live',
      id: 'x',
      kind: 'link-giveaway',
      status: 'finished',
      source: { packageId: 'pkg_x' },
      offer: { id: 'prod_1', name: 'Sticker pack' },
      gifts: 2,
      openedAt: record.openedAt,
      closesAt: record.closesAt,
      closedAt: record.closedAt,
      entrants: 20,
      winners: record.winners.map(({ userId, login, displayName, redeemUrl, pick }) => ({
        userId,
        login,
        displayName,
        redeemUrl,
        pick,
      })),
      fairness: { ...record.fairness },
      rerolls: record.rerolls,
      rules: { minAccountAgeDays: 7 },
    });
    expect(JSON.stringify(out)).not.toContain('f'.repeat(64));
    const open = toExport({ ...openRecord('o'), pendingSeed: 'e'.repeat(64) });
    expect(open.fairness.seed).toBeUndefined();
    expect('closedAt' in open).toBe(false);
    expect(JSON.stringify(open)).not.toContain('e'.repeat(64));
  });

  it('quotes CSV cells per RFC 4180 and defuses spreadsheet formulas', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell(' padded')).toBe('" padded"');
    expect(csvCell('=HYPERLINK("http://x")')).toBe('"\'=HYPERLINK(""http://x"")"');
    expect(csvCell('@cmd')).toBe("'@cmd");
    expect(csvCell(undefined)).toBe('');
    expect(csvCell(true)).toBe('true');
  });

  it('turns terminal escapes (ESC, C1 CSI, bidi overrides) in names into U+FFFD, so `history --csv` cannot drive the terminal', () => {
    expect(csvCell('\u001b[2J\u001b]0;pwned\u0007name')).toBe('\ufffd[2J\ufffd]0;pwned\ufffdname');
    expect(csvCell('a\u009b31mb')).toBe('a\ufffd31mb');
    expect(csvCell('evil\u202egnp.exe')).toBe('evil\ufffdgnp.exe');
    expect(csvCell('tab\there')).toBe('tab\there');
  });

  it('writes one row per winner and none for draws without winners', () => {
    const csv = toCsv([
      finishedRecord({ id: 'a', winners: 3 }),
      openRecord('b'),
      finishedRecord({ id: 'c', winners: 1 }),
    ]);
    const rows = csv.split('\r\n').filter(Boolean);
    expect(rows).toHaveLength(1 + 3 + 1);
    expect(rows.slice(1).map((r) => r.split(',')[0])).toEqual(['a', 'a', 'a', 'c']);
  });
});
