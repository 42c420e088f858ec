/**
 * The entrants file (storage/entrants-file.ts) through the real FileDrawRepository on a temp data
 * directory: version 2 is the header line plus the exact bytes the digest hashed, whether the list
 * was frozen this run (bytes handed over) or loaded and saved again (serialised from the rows);
 * version 1 JSON files written before it still load, verify, and are replaced (not left beside)
 * when the list is saved again; malformed version 2 files are reported, never half-read.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FrozenList } from '../src/giveaway/entrants/frozen-list.js';
import { frozenRowsOf, type FrozenEntrant } from '../src/giveaway/model.js';
import { verifyDraw } from '../src/fairness/verify.js';
import { entrantsFileChunks, parseEntrantsFile } from '../src/storage/entrants-file.js';
import { FileDrawRepository } from '../src/storage/index.js';
import { finishedRecord } from './support/fairness-records.js';
import { tempDataDir } from './support/storage-helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDataDir());
});
afterEach(() => cleanup());

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function bodyOf(file: Buffer): { header: string; body: Buffer } {
  const eol = file.indexOf(0x0a);
  return { header: file.subarray(0, eol).toString('utf8'), body: file.subarray(eol + 1) };
}

const odd: FrozenEntrant[] = [
  { userId: '1', login: 'a', weight: 1 },
  { userId: '77', login: 'ünïcode✓', weight: 12 },
  { userId: 'q"uote', login: 'back\\slash', weight: 3 },
];

describe('entrants file version 2', () => {
  it('a list frozen this run is written as the bytes its digest hashed; a loaded list serialises to the same bytes', async () => {
    const frozen = FrozenList.freeze(odd);
    const first = Buffer.concat(await entrantsFileChunks('gdr_x/y', frozen));
    const { header, body } = bodyOf(first);
    expect(header).toBe('giftdrop-entrants\t2\t"gdr_x/y"\t3');
    expect(sha256(body)).toBe(frozen.digest);
    expect(body.toString('utf8')).toBe('1\ta\t1\n77\tünïcode✓\t12\nq"uote\tback\\slash\t3\n');
    // handed over once: the next save serialises from the rows, to the same bytes
    expect(frozen.takeCanonicalBytes()).toBeUndefined();
    expect(Buffer.concat(await entrantsFileChunks('gdr_x/y', frozen)).equals(first)).toBe(true);
    const again = frozenRowsOf(parseEntrantsFile('f', first.toString('utf8')));
    expect(Buffer.concat(await entrantsFileChunks('gdr_x/y', again)).equals(first)).toBe(true);
    expect(parseEntrantsFile('f', first.toString('utf8'))).toEqual(frozen.toArray());
  });

  it('an empty list is the header alone', async () => {
    const file = Buffer.concat(await entrantsFileChunks('e', FrozenList.freeze([]))).toString('utf8');
    expect(file).toBe('giftdrop-entrants\t2\t"e"\t0\n');
    expect(parseEntrantsFile('f', file)).toEqual([]);
  });

  it('rejects a malformed file naming it: no header, unknown version, truncated, extra lines, bad fields', () => {
    const cases: [string, RegExp][] = [
      ['1\ta\t1\n', /has no giftdrop-entrants header/],
      ['giftdrop-entrants\t3\t"d"\t1\n1\ta\t1\n', /unknown version 3/],
      ['giftdrop-entrants\t2\t"d"\tx\n', /bad entrant count/],
      ['giftdrop-entrants\t2\t"d"\t2\n1\ta\t1\n', /ends after 1 of 2 entrants/],
      ['giftdrop-entrants\t2\t"d"\t2\n1\ta\t1\n2\tb\t1', /ends after 1 of 2 entrants/],
      ['giftdrop-entrants\t2\t"d"\t1\n1\ta\t1\n2\tb\t1\n', /more lines than the 1 entrants/],
      ['giftdrop-entrants\t2\t"d"\t1\n1\ta\n', /line 2 is not userId<TAB>login<TAB>weight/],
      ['giftdrop-entrants\t2\t"d"\t1\n1\ta\t1\t9\n', /line 2 is not userId<TAB>login<TAB>weight/],
      ['giftdrop-entrants\t2\t"d"\t1\n1\ta\t0\n', /line 2 has a weight that is not a positive integer/],
      ['giftdrop-entrants\t2\t"d"\t1\n1\ta\t01\n', /line 2 has a weight that is not a positive integer/],
    ];
    for (const [text, message] of cases) {
      expect(() => parseEntrantsFile('/data/draws/d.entrants.tsv', text), text).toThrow(message);
      expect(() => parseEntrantsFile('/data/draws/d.entrants.tsv', text)).toThrow(/^\/data\/draws\/d\.entrants\.tsv /);
    }
  });
});

describe('entrants files written before version 2', () => {
  async function storeAsVersion1(id: string): Promise<ReturnType<typeof finishedRecord>> {
    const record = finishedRecord({ id, entrants: 30, winners: 2 });
    const repo = await FileDrawRepository.open(dir);
    await repo.saveDraw(record);
    await repo.close();
    const entrants = record.frozenEntrants!.map((e) => [e.userId, e.login, e.weight]);
    await rm(join(dir, 'draws', `${id}.entrants.tsv`));
    await writeFile(join(dir, 'draws', `${id}.entrants.json`), JSON.stringify({ version: 1, drawId: id, entrants }));
    return record;
  }

  it('load and verify, read-only too (npm run verify)', async () => {
    const record = await storeAsVersion1('old');
    const reader = await FileDrawRepository.open(dir, { readOnly: true });
    const loaded = await reader.getDraw('old');
    expect(loaded!.frozenEntrants).toEqual(record.frozenEntrants);
    expect(verifyDraw(loaded!).ok).toBe(true);
    await reader.close();
  });

  it('are replaced by a version 2 file when the list is saved again, with the same digest input', async () => {
    const record = await storeAsVersion1('resaved');
    const repo = await FileDrawRepository.open(dir);
    const loaded = (await repo.getDraw('resaved'))!;
    await repo.saveDraw({ ...loaded, winners: loaded.winners.map((w) => ({ ...w, claimed: true })) });
    await repo.close();
    expect(existsSync(join(dir, 'draws', 'resaved.entrants.json'))).toBe(false);
    expect((await readdir(join(dir, 'draws'))).filter((n) => n.startsWith('resaved'))).toEqual([
      'resaved.entrants.tsv',
    ]);
    const { body } = bodyOf(await readFile(join(dir, 'draws', 'resaved.entrants.tsv')));
    expect(sha256(body)).toBe(record.fairness.entrantsDigest);
    const again = await FileDrawRepository.open(dir, { readOnly: true });
    expect(verifyDraw((await again.getDraw('resaved'))!).ok).toBe(true);
    await again.close();
  });
});
