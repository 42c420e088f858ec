import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile, readdir, rmdir, writeFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { createLogger } from '../src/logging/index.js';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileDrawRepository, StorageError } from '../src/storage/index.js';
import { parseJournal } from '../src/storage/journal.js';
import { entrantLine } from '../src/giveaway/entrants/journal-line.js';
import { ManualClock } from '../src/shared/clock.js';
import { verifyDraw } from '../src/fairness/verify.js';
import { finishedRecord, makeEntrant } from './support/fairness-records.js';
import { openRecord, readHistoryLog, tempDataDir, waitFor } from './support/storage-helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
const repos: FileDrawRepository[] = [];

async function openRepo(options: Parameters<typeof FileDrawRepository.open>[1] = {}): Promise<FileDrawRepository> {
  const repo = await FileDrawRepository.open(dir, options);
  repos.push(repo);
  return repo;
}

beforeEach(async () => {
  ({ dir, cleanup } = await tempDataDir());
});
afterEach(async () => {
  for (const r of repos.splice(0)) await r.close().catch(() => undefined);
  await cleanup();
});

describe('FileDrawRepository: records', () => {
  it('round-trips a finished draw; the frozen list lives in its own file and still verifies after reopening', async () => {
    const repo = await openRepo();
    const record = finishedRecord({ id: 'lg_one', entrants: 40, winners: 3, rerollPicks: [1] });
    await repo.saveDraw(record);
    const history = await readHistoryLog(dir);
    expect(history.header).toEqual({ giftdrop: 'history', version: 2 });
    expect(history.draws[0]!['id']).toBe('lg_one');
    expect(history.draws[0]!['frozenEntrants']).toBeUndefined();
    const body = await readFile(join(dir, 'draws', 'lg_one.entrants.tsv'));
    const eol = body.indexOf(0x0a);
    expect(body.subarray(0, eol).toString('utf8')).toBe('giftdrop-entrants\t2\t"lg_one"\t40');
    // the body is exactly what the entrants digest hashes
    expect(
      createHash('sha256')
        .update(body.subarray(eol + 1))
        .digest('hex'),
    ).toBe(record.fairness.entrantsDigest);
    await repo.close();

    const again = await openRepo();
    const loaded = await again.getDraw('lg_one');
    expect(loaded).toEqual({ ...record, mode: 'live' });
    expect(verifyDraw(loaded!).ok).toBe(true);
    expect(await again.getDraw('nope')).toBeUndefined();
  });

  it('lists newest first with a limit, and finds recent winners of finished draws only', async () => {
    const repo = await openRepo();
    await repo.saveDraw(finishedRecord({ id: 'old', openedAt: '2026-01-01T00:00:00.000Z' }));
    await repo.saveDraw(finishedRecord({ id: 'new', openedAt: '2026-01-03T00:00:00.000Z' }));
    await repo.saveDraw(finishedRecord({ id: 'mid', openedAt: '2026-01-02T00:00:00.000Z' }));
    const cancelled = {
      ...finishedRecord({ id: 'cxl', openedAt: '2026-01-02T12:00:00.000Z' }),
      status: 'cancelled' as const,
    };
    await repo.saveDraw(cancelled);
    expect((await repo.listDraws()).map((r) => r.id)).toEqual(['new', 'cxl', 'mid', 'old']);
    expect((await repo.listDraws({ limit: 2 })).map((r) => r.id)).toEqual(['new', 'cxl']);
    const listed = await repo.listDraws();
    expect(listed[0]!.frozenEntrants).toBeUndefined();

    const since = Date.parse('2026-01-02T00:00:00.000Z');
    const ids = await repo.recentWinnerIds(since);
    const expected = new Set([
      ...finishedRecord({ id: 'new', openedAt: '2026-01-03T00:00:00.000Z' }).winners.map((w) => w.userId),
      ...finishedRecord({ id: 'mid', openedAt: '2026-01-02T00:00:00.000Z' }).winners.map((w) => w.userId),
    ]);
    expect(ids).toEqual(expected);
  });

  it('replaces a record in place; saving without the frozen list keeps it; unchanged lists are not rewritten', async () => {
    const repo = await openRepo();
    const record = finishedRecord({ id: 'keep' });
    await repo.saveDraw(record);
    const file = join(dir, 'draws', 'keep.entrants.tsv');
    await writeFile(file, (await readFile(file, 'utf8')).replace('\t"keep"\t', '\t"keep" \t'));
    const marker = await readFile(file, 'utf8');
    await repo.saveDraw({ ...record, winners: record.winners.map((w) => ({ ...w, claimed: true })) });
    expect(await readFile(file, 'utf8')).toBe(marker);
    const { frozenEntrants: _dropped, ...withoutList } = record;
    await repo.saveDraw({ ...withoutList, status: 'finished' });
    const loaded = await repo.getDraw('keep');
    expect(loaded!.frozenEntrants).toEqual(record.frozenEntrants);
    expect(loaded!.winners.every((w) => w.claimed === undefined)).toBe(true);
    expect((await repo.listDraws()).length).toBe(1);
  });

  it('rejects an invalid record with a clear error and keeps what was stored', async () => {
    const repo = await openRepo();
    await repo.saveDraw(finishedRecord({ id: 'good' }));
    const bad = { ...finishedRecord({ id: 'bad' }), status: 'weird' } as unknown as Parameters<typeof repo.saveDraw>[0];
    await expect(repo.saveDraw(bad)).rejects.toMatchObject({
      code: 'STORAGE_INVALID',
      message: expect.stringContaining('status'),
    });
    await expect(repo.saveDraw({ ...finishedRecord({ id: 'x' }), id: 'x'.repeat(200) })).rejects.toMatchObject({
      code: 'STORAGE_INVALID',
    });
    await repo.saveDraw(finishedRecord({ id: 'good2' }));
    expect((await repo.listDraws()).map((r) => r.id).sort()).toEqual(['good', 'good2']);
  });

  it('stores ids that are not file-name safe under an encoded name', async () => {
    const repo = await openRepo();
    const id = '../../etc/passwd ünï';
    await repo.saveDraw({ ...finishedRecord({ id: 'tmp' }), id });
    const names = await readdir(join(dir, 'draws'));
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/^~[A-Za-z0-9_-]+\.entrants\.tsv$/);
    expect((await repo.getDraw(id))!.frozenEntrants).toHaveLength(20);
  });

  it('reports a corrupt history.json naming the file and never overwrites it', async () => {
    const file = join(dir, 'history.json');
    await writeFile(file, '{"version":1,"draws":[{"id":"x"');
    const err = await FileDrawRepository.open(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect(err).toMatchObject({ code: 'STORAGE_CORRUPT', message: expect.stringContaining(file) });
    await writeFile(file, JSON.stringify({ version: 1, draws: [{ id: 'x', kind: 'nonsense' }] }));
    await expect(FileDrawRepository.open(dir)).rejects.toMatchObject({
      code: 'STORAGE_CORRUPT',
      message: expect.stringMatching(/history\.json has an unexpected shape at draws\.0\./),
    });
    expect(await readFile(file, 'utf8')).toBe(JSON.stringify({ version: 1, draws: [{ id: 'x', kind: 'nonsense' }] }));
  });

  it('a corrupt entrants file: read-only names it; the bot quarantines it, reports the draw id, and the draw loads without it', async () => {
    const repo = await openRepo();
    await repo.saveDraw(finishedRecord({ id: 'dmg' }));
    await repo.saveDraw(finishedRecord({ id: 'fine' }));
    const file = join(dir, 'draws', 'dmg.entrants.tsv');
    const damaged = 'giftdrop-entrants\t2\t"dmg"\t1\n1\ta\t0\n';
    await writeFile(file, damaged);
    const reader = await openRepo({ readOnly: true });
    await expect(reader.getDraw('dmg')).rejects.toMatchObject({
      code: 'STORAGE_CORRUPT',
      message: expect.stringContaining(file),
    });
    expect(await readFile(file, 'utf8')).toBe(damaged);

    const loaded = await repo.getDraw('dmg');
    expect(loaded!.status).toBe('finished');
    expect(loaded!.frozenEntrants).toBeUndefined();
    expect(existsSync(file)).toBe(false);
    const kept = (await readdir(join(dir, 'draws'))).filter((n) => n.startsWith('dmg.entrants.tsv.corrupt-'));
    expect(kept).toHaveLength(1);
    expect(await readFile(join(dir, 'draws', kept[0]!), 'utf8')).toBe(damaged);
    expect(repo.notes.join('\n')).toMatch(
      /^draw dmg: its entrant list .*dmg\.entrants\.tsv is damaged .*kept as .*corrupt-/m,
    );
    expect((await repo.getDraw('fine'))!.frozenEntrants).toHaveLength(20);
  });

  it('read-only mode creates nothing and refuses writes', async () => {
    const missing = join(dir, 'not-there');
    const repo = await FileDrawRepository.open(missing, { readOnly: true });
    expect(await repo.listDraws()).toEqual([]);
    expect(existsSync(missing)).toBe(false);
    await expect(repo.saveDraw(finishedRecord({ id: 'r' }))).rejects.toMatchObject({ code: 'STORAGE_READ_ONLY' });
    expect(() => repo.appendEntrant('r', makeEntrant(1))).toThrow(/read-only/);
    await repo.close();
  });
});

describe('FileDrawRepository: entry journal', () => {
  it('writes buffered entries when the flush interval elapses, not per entry', async () => {
    const clock = new ManualClock();
    const repo = await openRepo({ clock, flushIntervalMs: 50 });
    await repo.saveDraw(openRecord('d1'));
    const journal = join(dir, 'journal', 'd1.jsonl');
    for (let i = 0; i < 5; i++) repo.appendEntrant('d1', makeEntrant(i));
    expect(existsSync(journal)).toBe(false);
    clock.advance(49);
    expect(existsSync(journal)).toBe(false);
    clock.advance(1);
    await waitFor(async () => existsSync(journal) && (await readFile(journal, 'utf8')).split('\n').length === 6);
    const lines = parseJournal(await readFile(journal, 'utf8')).entrants;
    expect(lines.map((l) => l.userId)).toEqual([0, 1, 2, 3, 4].map((i) => makeEntrant(i).userId));
    expect(clock.pending()).toBe(0);
  });

  it('keeps every line exact across many flushes of two draws (written line buffers are reused)', async () => {
    const repo = await openRepo();
    await repo.saveDraw(openRecord('d1'));
    await repo.saveDraw(openRecord('d2'));
    const expected = new Map<string, string[]>([
      ['d1', []],
      ['d2', []],
    ]);
    // longer batches after shorter ones and the other way round, so a reused buffer holds older, longer bytes
    for (const [round, count] of [3, 400, 1, 250, 2].entries()) {
      for (let i = 0; i < count; i++) {
        const drawId = i % 3 === 0 ? 'd2' : 'd1';
        const e = { ...makeEntrant(round * 1000 + i), displayName: `Round${round}_${'x'.repeat(i % 40)}` };
        repo.appendEntrant(drawId, e);
        expected.get(drawId)!.push(entrantLine(e));
      }
      await repo.flush();
    }
    for (const [drawId, lines] of expected) {
      expect(await readFile(join(dir, 'journal', `${drawId}.jsonl`), 'utf8')).toBe(lines.map((l) => l + '\n').join(''));
    }
    await repo.close();
  });

  it('gives open draws back with their entrants, deduplicated, after a reopen', async () => {
    const repo = await openRepo();
    await repo.saveDraw(openRecord('d1'));
    await repo.saveDraw({ ...openRecord('d2'), status: 'drawing' });
    await repo.saveDraw(finishedRecord({ id: 'done' }));
    repo.appendEntrant('d1', makeEntrant(1));
    repo.appendEntrant('d1', makeEntrant(2));
    repo.appendEntrant('d1', { ...makeEntrant(1), displayName: 'again' });
    repo.appendEntrant('d2', makeEntrant(3));
    await repo.close();

    const again = await openRepo();
    const open = await again.openDraws();
    expect(open.map((o) => [o.record.id, o.record.status])).toEqual([
      ['d1', 'open'],
      ['d2', 'drawing'],
    ]);
    expect(open[0]!.entrants).toEqual([makeEntrant(1), makeEntrant(2)]);
    expect(open[1]!.entrants).toEqual([makeEntrant(3)]);
    // the listing (npm run history) counts an open draw's journaled entrants, deduplicated
    const listed = new Map((await again.listDraws()).map((r) => [r.id, r.entrants]));
    expect(listed.get('d1')).toBe(2);
    expect(listed.get('d2')).toBe(1);
  });

  it('removes the journal when the draw ends and ignores later entries for it', async () => {
    const repo = await openRepo();
    await repo.saveDraw(openRecord('d1'));
    repo.appendEntrant('d1', makeEntrant(1));
    await repo.flush();
    const journal = join(dir, 'journal', 'd1.jsonl');
    expect(existsSync(journal)).toBe(true);
    repo.appendEntrant('d1', makeEntrant(2));
    await repo.saveDraw({ ...openRecord('d1'), status: 'cancelled' });
    expect(existsSync(journal)).toBe(false);
    repo.appendEntrant('d1', makeEntrant(3));
    await repo.flush();
    expect(existsSync(journal)).toBe(false);
    expect(await repo.openDraws()).toEqual([]);
  });

  it('tolerates a torn last line, and a later append does not merge into it', async () => {
    const first = await openRepo();
    await first.saveDraw(openRecord('d1'));
    first.appendEntrant('d1', makeEntrant(1));
    first.appendEntrant('d1', makeEntrant(2));
    await first.close();
    const journal = join(dir, 'journal', 'd1.jsonl');
    await appendFile(journal, JSON.stringify(makeEntrant(3)).slice(0, 25));

    const logged: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        logged.push(chunk.toString());
        done();
      },
    });
    const second = await openRepo({ logger: createLogger({ destination, level: 'debug' }) });
    expect((await second.openDraws())[0]!.entrants.map((e) => e.login)).toEqual(['viewer1', 'viewer2']);
    // Dropped quietly (debug only), the file trimmed, nothing quarantined.
    await waitFor(() => logged.some((l) => l.includes('torn last journal line')));
    expect(logged.filter((l) => /"level":(40|50)/.test(l))).toEqual([]);
    expect(second.notes).toEqual([]);
    // (rewritten with the readable lines, in the journal's compact line format)
    expect(await readFile(journal, 'utf8')).toBe([1, 2].map((i) => entrantLine(makeEntrant(i)) + '\n').join(''));
    expect((await readdir(join(dir, 'journal'))).sort()).toEqual(['d1.jsonl']);
    second.appendEntrant('d1', makeEntrant(4));
    await second.close();

    const third = await openRepo();
    expect((await third.openDraws())[0]!.entrants.map((e) => e.login)).toEqual(['viewer1', 'viewer2', 'viewer4']);
  });

  it('cleans up journals left by draws that had already ended (crash between the two writes)', async () => {
    const repo = await openRepo();
    await repo.saveDraw(finishedRecord({ id: 'ended' }));
    await writeFile(join(dir, 'journal', 'ended.jsonl'), JSON.stringify(makeEntrant(1)) + '\n');
    await writeFile(join(dir, 'journal', 'orphan.jsonl'), JSON.stringify(makeEntrant(1)) + '\n');
    await repo.openDraws();
    expect((await readdir(join(dir, 'journal'))).sort()).toEqual(['orphan.jsonl']);
  });

  it('keeps buffered entries when a write fails and writes them on the next flush', async () => {
    const repo = await openRepo();
    await repo.saveDraw(openRecord('d1'));
    const journal = join(dir, 'journal', 'd1.jsonl');
    await mkdir(journal); // a directory where the journal file should be: opening it fails
    repo.appendEntrant('d1', makeEntrant(1));
    repo.appendEntrant('d1', makeEntrant(2));
    await expect(repo.flush()).rejects.toMatchObject({ code: 'EISDIR' });
    await rmdir(journal);
    repo.appendEntrant('d1', makeEntrant(3));
    await repo.flush();
    const ids = parseJournal(await readFile(journal, 'utf8')).entrants.map((e) => e.userId);
    expect(ids).toEqual([1, 2, 3].map((i) => makeEntrant(i).userId));
  });

  it('refuses appends after close', async () => {
    const repo = await openRepo();
    await repo.close();
    expect(() => repo.appendEntrant('d1', makeEntrant(1))).toThrow(StorageError);
  });
});

describe('FileDrawRepository: processed events', () => {
  it('remembers ids across restarts and evicts the oldest beyond the bound', async () => {
    const repo = await openRepo({ maxProcessedEvents: 3 });
    expect(await repo.markEventProcessed('evt_a')).toBe(true);
    expect(await repo.markEventProcessed('evt_a')).toBe(false);
    for (const id of ['evt_b', 'evt_c', 'evt_d']) expect(await repo.markEventProcessed(id)).toBe(true);
    await repo.close();

    const again = await openRepo({ maxProcessedEvents: 3 });
    expect(await again.markEventProcessed('evt_d')).toBe(false);
    expect(await again.markEventProcessed('evt_c')).toBe(false);
    expect(await again.markEventProcessed('evt_b')).toBe(false);
    // evt_a was the oldest and was evicted when evt_d arrived
    expect(await again.markEventProcessed('evt_a')).toBe(true);
  });

  it('answers whether an id was processed without marking it', async () => {
    const repo = await openRepo();
    expect(await repo.isEventProcessed('evt_q')).toBe(false);
    expect(await repo.isEventProcessed('evt_q')).toBe(false);
    expect(await repo.markEventProcessed('evt_q')).toBe(true);
    expect(await repo.isEventProcessed('evt_q')).toBe(true);
    await repo.close();
    const again = await openRepo();
    expect(await again.isEventProcessed('evt_q')).toBe(true);
    await again.close();
  });

  it('keeps the file bounded by compacting it', async () => {
    const repo = await openRepo({ maxProcessedEvents: 10 });
    for (let i = 0; i < 100; i++) expect(await repo.markEventProcessed(`evt_${i}`)).toBe(true);
    const lines = (await readFile(join(dir, 'events.jsonl'), 'utf8')).trim().split('\n');
    expect(lines.length).toBeLessThanOrEqual(20);
    await repo.close();
    const again = await openRepo({ maxProcessedEvents: 10 });
    for (let i = 90; i < 100; i++) expect(await again.markEventProcessed(`evt_${i}`)).toBe(false);
    expect(await again.markEventProcessed('evt_89')).toBe(true);
  });

  it('treats concurrent deliveries of one id as one', async () => {
    const repo = await openRepo();
    const results = await Promise.all([repo.markEventProcessed('evt_x'), repo.markEventProcessed('evt_x')]);
    expect(results.sort()).toEqual([false, true]);
  });
});
