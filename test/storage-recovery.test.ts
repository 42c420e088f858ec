/**
 * Recovery of damaged data files (FileDrawRepository on a real temp directory): a history log
 * whose last line is torn keeps the previous version of that draw, an unreadable line elsewhere is
 * reported naming the file and line; a folder of older versions (history.json) migrates once,
 * keeping history.json as history.v1.json, and verifies; a truncated history.json migrates from
 * history.json.bak and says so naming both files; a corrupt line
 * in the middle of a journal is reported (draw id, line number) and the draw resumes with every
 * other entrant; an unreadable journal is quarantined and the other draws still resume; owner-only
 * modes on everything created; records carry the mode (older ones read as live).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logging/index.js';
import { FileDrawRepository, toExport } from '../src/storage/index.js';
import { finishedRecord, makeEntrant } from './support/fairness-records.js';
import { openRecord, readHistoryLog, tempDataDir } from './support/storage-helpers.js';
import { runVerifyCli } from '../src/cli/verify.js';
import { captureIo } from './support/cli-io.js';

let dir: string;
let cleanup: () => Promise<void>;
const repos: FileDrawRepository[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await tempDataDir());
});
afterEach(async () => {
  for (const r of repos.splice(0)) await r.close();
  await cleanup();
});

function capture(): { logger: ReturnType<typeof createLogger>; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return {
    logger: createLogger({ destination, level: 'debug' }),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

async function open(options: Parameters<typeof FileDrawRepository.open>[1] = {}): Promise<FileDrawRepository> {
  const repo = await FileDrawRepository.open(dir, options);
  repos.push(repo);
  return repo;
}

describe('the history log (history.jsonl)', () => {
  it('a last line torn by a power cut: that save is dropped quietly, the draw keeps its previous version, the next save starts a new line', async () => {
    const first = await open();
    await first.saveDraw(finishedRecord({ id: 'one' }));
    await first.saveDraw(openRecord('two'));
    await first.saveDraw({ ...openRecord('two'), status: 'cancelled' });
    await first.close();
    const file = join(dir, 'history.jsonl');
    const size = (await stat(file)).size;
    await truncate(file, size - 40);
    const repo = await open();
    expect(repo.notes, JSON.stringify(repo.notes)).toEqual([]);
    expect((await repo.getDraw('two'))!.status).toBe('open');
    await repo.saveDraw(finishedRecord({ id: 'three' }));
    await repo.close();
    const again = await open();
    expect(again.notes).toEqual([]);
    expect((await again.listDraws()).map((r) => r.id).sort()).toEqual(['one', 'three', 'two']);
  });

  it('an unreadable line in the middle is skipped with a note naming the file and the line; the other draws load', async () => {
    const first = await open();
    await first.saveDraw(finishedRecord({ id: 'a' }));
    await first.saveDraw(finishedRecord({ id: 'b' }));
    await first.close();
    const file = join(dir, 'history.jsonl');
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines[1] = '{"id":"a",garbage';
    await writeFile(file, lines.join('\n'));
    const log = capture();
    const repo = await open({ logger: log.logger });
    expect(repo.notes).toEqual([
      `${file}: line 2 is unreadable and was skipped (the draw keeps its previous saved version, if any)`,
    ]);
    expect((await repo.listDraws()).map((r) => r.id)).toEqual(['b']);
    expect(log.lines().some((l) => l['level'] === 40 && l['line'] === 2)).toBe(true);
  });

  it('a file that is not a giftdrop history log is refused naming it, and left as it was', async () => {
    const file = join(dir, 'history.jsonl');
    await writeFile(file, 'hello\n');
    await expect(FileDrawRepository.open(dir)).rejects.toMatchObject({
      code: 'STORAGE_CORRUPT',
      message: expect.stringContaining(file),
    });
    expect(await readFile(file, 'utf8')).toBe('hello\n');
  });
});

/** A data folder as older versions wrote it: history.json (pretty JSON, version 1) and draws/. */
async function legacyFolder(records: ReturnType<typeof finishedRecord>[]): Promise<{ file: string; text: string }> {
  const writer = await open();
  for (const r of records) await writer.saveDraw(r);
  await writer.close();
  const draws = (await readHistoryLog(dir)).draws;
  const file = join(dir, 'history.json');
  const text = JSON.stringify({ version: 1, draws }, null, 2);
  await writeFile(file, text);
  await rm(join(dir, 'history.jsonl'));
  return { file, text };
}

describe('migration of a data folder written by older versions (history.json)', () => {
  it('opens, migrates once keeping history.json as history.v1.json, and verifies', async () => {
    const { file, text } = await legacyFolder([
      finishedRecord({ id: 'm1', entrants: 30, winners: 2 }),
      finishedRecord({ id: 'm2' }),
    ]);
    // Read-only (the CLIs) reads it where it is and changes nothing.
    const reader = await open({ readOnly: true });
    expect((await reader.listDraws()).map((r) => r.id).sort()).toEqual(['m1', 'm2']);
    await reader.close();
    expect(await readFile(file, 'utf8')).toBe(text);
    expect(existsSync(join(dir, 'history.jsonl'))).toBe(false);

    const repo = await open();
    expect(repo.notes).toHaveLength(1);
    expect(repo.notes[0]).toContain(`the previous ${file} is kept as ${join(dir, 'history.v1.json')}`);
    expect(existsSync(file)).toBe(false);
    expect(await readFile(join(dir, 'history.v1.json'), 'utf8')).toBe(text);
    expect((await readHistoryLog(dir)).draws.map((d) => d['id'])).toEqual(['m1', 'm2']);
    await repo.saveDraw(finishedRecord({ id: 'm3' }));
    await repo.close();

    // Once: the next open reads the log, says nothing, and leaves the backup as it was.
    const again = await open();
    expect(again.notes).toEqual([]);
    expect((await again.listDraws()).map((r) => r.id).sort()).toEqual(['m1', 'm2', 'm3']);
    await again.close();
    expect(await readFile(join(dir, 'history.v1.json'), 'utf8')).toBe(text);

    const c = captureIo(dir);
    expect(await runVerifyCli(['m1'], c.io), c.err()).toBe(0);
    expect(c.out()).toMatch(/m1/);
  });

  it('a truncated history.json: migrated from history.json.bak, loudly naming both files, the damaged one kept', async () => {
    const { file } = await legacyFolder([finishedRecord({ id: 'one' })]);
    await writeFile(`${file}.bak`, await readFile(file));
    await writeFile(file, '{"version":1,"draws":[{"id":"one"');
    const log = capture();
    const repo = await open({ logger: log.logger });
    expect(repo.notes[0]).toContain(`${file} is unreadable`);
    expect(repo.notes[0]).toContain(`started from the previous generation ${file}.bak`);
    expect(log.lines().some((l) => l['level'] === 40 && String(l['msg']).includes('previous generation'))).toBe(true);
    expect((await readdir(dir)).filter((n) => n.startsWith('history.json.corrupt-'))).toHaveLength(1);
    expect((await repo.listDraws()).map((r) => r.id)).toEqual(['one']);
    expect(existsSync(join(dir, 'history.jsonl'))).toBe(true);
  });

  it('both unreadable: a clear error naming both files, and nothing changed', async () => {
    const file = join(dir, 'history.json');
    await writeFile(file, '{"version":1,"dr');
    await writeFile(`${file}.bak`, 'garbage');
    const before = (await readdir(dir)).sort();
    const err = (await FileDrawRepository.open(dir).catch((e: unknown) => e)) as Error & { code?: string };
    expect(err.code).toBe('STORAGE_CORRUPT');
    expect(err.message).toContain(file);
    expect(err.message).toContain(`${file}.bak is unreadable too`);
    expect((await readdir(dir)).sort()).toEqual(before);
    expect(await readFile(file, 'utf8')).toBe('{"version":1,"dr');
  });
});

describe('entry journals', () => {
  it('a corrupt line in the middle is reported by draw id and line number; the draw resumes with every other entrant', async () => {
    const first = await open();
    await first.saveDraw(openRecord('mid'));
    for (let i = 1; i <= 5; i++) first.appendEntrant('mid', makeEntrant(i));
    await first.close();
    const file = join(dir, 'journal', 'mid.jsonl');
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines[2] = '{"userId":"10003","login":"viewer3",\u0000garbage';
    const damaged = lines.join('\n');
    await writeFile(file, damaged);

    const log = capture();
    const repo = await open({ logger: log.logger });
    const [restored] = await repo.openDraws();
    expect(restored!.entrants.map((e) => e.login)).toEqual(['viewer1', 'viewer2', 'viewer4', 'viewer5']);
    expect(repo.notes).toHaveLength(1);
    expect(repo.notes[0]).toMatch(
      /^draw mid: unreadable line\(s\) 3 in its entry journal .*mid\.jsonl \(kept as .*mid\.jsonl\.corrupt-.*\); the draw resumes with the other 4 journaled entries$/,
    );
    const error = log.lines().find((l) => l['level'] === 50);
    expect(error).toMatchObject({ drawId: 'mid', lines: [3] });
    const kept = (await readdir(join(dir, 'journal'))).filter((n) => n.startsWith('mid.jsonl.corrupt-'));
    expect(kept).toHaveLength(1);
    expect(await readFile(join(dir, 'journal', kept[0]!), 'utf8')).toBe(damaged);

    // New entries go on after the repair; the next start reports nothing and loses nothing.
    repo.appendEntrant('mid', makeEntrant(6));
    await repo.close();
    const again = await open();
    expect((await again.openDraws())[0]!.entrants.map((e) => e.login)).toEqual([
      'viewer1',
      'viewer2',
      'viewer4',
      'viewer5',
      'viewer6',
    ]);
    expect(again.notes).toEqual([]);
  });

  it('an unreadable journal is quarantined and reported by draw id; the other draws still resume', async () => {
    const first = await open();
    await first.saveDraw(openRecord('broken'));
    await first.saveDraw(openRecord('healthy'));
    first.appendEntrant('healthy', makeEntrant(1));
    await first.close();
    // A directory where the journal file should be: reading it fails (EISDIR).
    await mkdir(join(dir, 'journal', 'broken.jsonl'));

    const repo = await open();
    const restored = await repo.openDraws();
    expect(restored.map((r) => [r.record.id, r.entrants.length])).toEqual([
      ['broken', 0],
      ['healthy', 1],
    ]);
    expect(repo.notes).toHaveLength(1);
    expect(repo.notes[0]).toMatch(
      /^draw broken: its entry journal .*broken\.jsonl could not be read .*kept as .*broken\.jsonl\.corrupt-/,
    );
    expect(existsSync(join(dir, 'journal', 'broken.jsonl'))).toBe(false);
  });
});

describe('files under DATA_DIR', () => {
  it('are created owner-only: files 0600, directories 0700', async () => {
    const data = join(dir, 'fresh', 'data');
    const repo = await FileDrawRepository.open(data);
    repos.push(repo);
    await repo.saveDraw(openRecord('o1'));
    repo.appendEntrant('o1', makeEntrant(1));
    await repo.saveDraw(finishedRecord({ id: 'f1' }));
    await repo.saveDraw(finishedRecord({ id: 'f2' }));
    await repo.markEventProcessed('evt_1');
    await repo.flush();
    const seen: string[] = [];
    const walk = async (path: string): Promise<void> => {
      const s = await stat(path);
      seen.push(path);
      expect((s.mode & 0o777).toString(8), path).toBe(s.isDirectory() ? '700' : '600');
      if (s.isDirectory()) for (const name of await readdir(path)) await walk(join(path, name));
    };
    await walk(join(dir, 'fresh'));
    for (const name of ['history.jsonl', 'events.jsonl', 'journal/o1.jsonl', 'draws/f1.entrants.tsv'])
      expect(seen).toContain(join(data, name));
  });
});

describe('mode on records', () => {
  it('every saved record carries the repository mode; older records without one read as live and stay readable', async () => {
    const old = finishedRecord({ id: 'old' });
    const { frozenEntrants: _f, ...stored } = old;
    await writeFile(join(dir, 'history.json'), JSON.stringify({ version: 1, draws: [stored] }));
    const repo = await open({ mode: 'sandbox' });
    await repo.saveDraw(finishedRecord({ id: 'new' }));
    const onDisk = (await readHistoryLog(dir)).draws as { id: string; mode?: string }[];
    expect(onDisk.map((d) => [d.id, d.mode])).toEqual([
      ['old', undefined],
      ['new', 'sandbox'],
    ]);
    const listed = await repo.listDraws();
    expect(listed.map((r) => [r.id, r.mode])).toEqual([
      ['new', 'sandbox'],
      ['old', 'live'],
    ]);
    expect(toExport((await repo.getDraw('old'))!).mode).toBe('live');
    expect(toExport((await repo.getDraw('new'))!).mode).toBe('sandbox');
  });
});
