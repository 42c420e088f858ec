/**
 * What a disk state a power cut left must hold, checked two ways:
 * - `rawDoubles` reads the files themselves, before any reader deduplicates: no entrant twice in a
 *   draw's journal, no event id twice in the event file, no history line that repeats the line
 *   before it of the same draw, no winner twice in a draw's last record;
 * - `checkState` reopens the storage on the state (as the bot does at start: the repository, then
 *   the open draws with their journals repaired) and checks it against what was told before the
 *   cut: the history loads; every webhook answered 200 is processed, with the draw it opened and
 *   the prize redemption it recorded; every draw whose commitment was announced is there with a
 *   seed matching it (in the vault while open, revealed once drawn); every finish told to the shop
 *   and every winner announced; every synced entrant; every delivery update that resolved.
 * The reopen's own disk operations (compaction, journal repair, temp removal) are recorded, so the
 * caller can cut again inside the recovery.
 */
import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import { commitmentOf } from '../../src/fairness/procedure.js';
import { parseJournal } from '../../src/storage/journal.js';
import { FileDrawRepository } from '../../src/storage/index.js';
import { DIR } from './power-cut-run.js';
import { PowerCutFs, type DiskImage } from './power-cut-fs.js';

/** What was promised before a cut (a subset of the recorded run's `Told`, with draw ids). */
export interface Promises {
  /** Webhooks answered 200, with the draw they opened or the prize they redeemed. */
  acked: { at: number; eventId: string; opens?: string; redeems?: { drawId: string; userId: string } }[];
  finishes: { at: number; drawId: string; userIds: string[] }[];
  /** Draws whose opening (commitment) was said in chat. */
  opened: { at: number; drawId: string; commitment: string }[];
  /** Winners said in chat (the winners line, a reroll's replacement). */
  announced: { at: number; drawId: string; logins: string[] }[];
  flushed: { at: number; drawId: string; userIds: string[] }[];
  deliveries: { at: number; drawId: string; userId: string; fields: Record<string, string> }[];
  /** The recorded disk (for the journals' synced parts). */
  fs: PowerCutFs;
}

const text = async (fs: PowerCutFs, path: string) =>
  (await fs.exists(path)) ? (await fs.readFile(path)).toString('utf8') : undefined;

/** Checks the files of `image` for doubled lines (module comment). */
export async function rawDoubles(image: DiskImage, where: string): Promise<void> {
  const fs = new PowerCutFs(image);
  for (const name of (await fs.exists(`${DIR}/journal`)) ? await fs.readdir(`${DIR}/journal`) : []) {
    if (!name.endsWith('.jsonl')) continue;
    const users = parseJournal((await text(fs, `${DIR}/journal/${name}`))!).entrants.map((e) => e.userId);
    const doubled = users.filter((u, i) => users.indexOf(u) !== i);
    expect(doubled, `[nothing doubled] journal ${name} lists an entrant twice, ${where}`).toEqual([]);
  }
  const events = await text(fs, `${DIR}/events.jsonl`);
  if (events !== undefined) {
    const ids: string[] = [];
    for (const line of events.split('\n')) {
      try {
        const id: unknown = JSON.parse(line);
        if (typeof id === 'string') ids.push(id);
      } catch {
        // a torn or zero-filled line: not an id
      }
    }
    expect(
      ids.filter((id, i) => ids.indexOf(id) !== i),
      `[nothing doubled] events.jsonl lists an event id twice, ${where}`,
    ).toEqual([]);
  }
  const history = await text(fs, `${DIR}/history.jsonl`);
  if (history !== undefined) {
    const last = new Map<string, string>();
    const records = new Map<string, { winners: { userId: string }[] }>();
    for (const line of history.split('\n').slice(1)) {
      let record: { id?: unknown; winners?: { userId: string }[] };
      try {
        record = JSON.parse(line) as typeof record;
      } catch {
        continue;
      }
      if (typeof record.id !== 'string') continue;
      expect(
        last.get(record.id),
        `[nothing doubled] history.jsonl repeats the line before it of draw ${record.id}, ${where}`,
      ).not.toBe(line);
      last.set(record.id, line);
      records.set(record.id, { winners: record.winners ?? [] });
    }
    for (const [id, r] of records) {
      const users = r.winners.map((w) => w.userId);
      expect(
        users.filter((u, i) => users.indexOf(u) !== i),
        `[nothing doubled] winners of ${id} in history.jsonl, ${where}`,
      ).toEqual([]);
    }
  }
}

/** The userIds in the synced part of every journal the recorded run created, per draw (at `cut`). */
function syncedJournalEntrants(fs: PowerCutFs, cut: number): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const op of fs.ops.slice(0, cut)) {
    if (op.t !== 'create' || !op.path.startsWith(`${DIR}/journal/`) || !op.path.endsWith('.jsonl')) continue;
    const drawId = op.path.slice(`${DIR}/journal/`.length, -'.jsonl'.length);
    const length = fs.syncedLength(op.ino, cut);
    if (length === 0) continue;
    out.set(drawId, [
      ...(out.get(drawId) ?? []),
      ...parseJournal(fs.readSynced(op.ino, length)).entrants.map((e) => e.userId),
    ]);
  }
  return out;
}

/**
 * Reopens the storage on `image` and checks it against what was promised before `cut` (module
 * comment). Returns the disk the reopen ran on, with its own operations recorded.
 */
export async function checkState(image: DiskImage, cut: number, p: Promises, where: string): Promise<PowerCutFs> {
  await rawDoubles(image, where);
  const fs = new PowerCutFs(image);
  let repo: FileDrawRepository;
  try {
    repo = await FileDrawRepository.open(DIR, { fileSystem: fs, flushIntervalMs: 0 });
  } catch (err) {
    throw new Error(`[history loads] ${where}: ${(err as Error).message}`);
  }
  try {
    let open: Awaited<ReturnType<FileDrawRepository['openDraws']>>;
    try {
      open = await repo.openDraws();
    } catch (err) {
      throw new Error(`[open draws and journals load] ${where}: ${(err as Error).message}`);
    }
    const draws = await repo.listDraws();
    const ids = draws.map((d) => d.id);
    const before = <T extends { at: number }>(list: T[]) => list.filter((x) => x.at <= cut);
    const present = async (drawId: string): Promise<Set<string>> => {
      const active = open.find((o) => o.record.id === drawId);
      if (active) return new Set(active.entrants.map((e) => e.userId));
      return new Set(((await repo.getDraw(drawId))?.frozenEntrants ?? []).map((e) => e.userId));
    };

    for (const ack of before(p.acked)) {
      expect(await repo.isEventProcessed(ack.eventId), `[acknowledged webhook kept] ${ack.eventId}, ${where}`).toBe(
        true,
      );
      if (ack.opens)
        expect(ids, `[acknowledged webhook's draw kept] ${ack.opens} (${ack.eventId}), ${where}`).toContain(ack.opens);
      if (ack.redeems) {
        const d = repo.deliveryOf(ack.redeems.drawId, ack.redeems.userId);
        expect(d?.redeemedAt, `[acknowledged redemption kept] ${ack.eventId}, ${where}`).toBeDefined();
      }
    }
    for (const o of before(p.opened)) {
      const record = await repo.getDraw(o.drawId);
      expect(record, `[draw announced in chat kept] ${o.drawId}, ${where}`).toBeDefined();
      const seed = record!.fairness.seed ?? record!.pendingSeed;
      const final = ['finished', 'cancelled', 'failed'].includes(record!.status);
      // A draw that ended without revealing its seed (handed back, cancelled) discarded it on purpose.
      if (seed === undefined && final) continue;
      expect(seed, `[announced commitment has its seed] ${o.drawId}, ${where}`).toBeDefined();
      expect(commitmentOf(Buffer.from(seed!, 'hex')), `[announced commitment has its seed] ${o.drawId}, ${where}`).toBe(
        o.commitment,
      );
    }
    for (const f of before(p.finishes)) {
      const winners = (draws.find((d) => d.id === f.drawId)?.winners ?? []).map((w) => w.userId);
      for (const u of f.userIds)
        expect(winners, `[draw told to Fourthwall kept] ${f.drawId} winner ${u}, ${where}`).toContain(u);
    }
    for (const a of before(p.announced)) {
      const record = draws.find((d) => d.id === a.drawId);
      expect(record, `[draw announced in chat kept] ${a.drawId}, ${where}`).toBeDefined();
      const known = new Set([
        ...record!.winners.map((w) => w.login),
        ...(record!.rerolls ?? []).map((x) => x.replacedLogin),
      ]);
      for (const login of a.logins)
        expect([...known], `[winner announced in chat kept] @${login} of ${a.drawId}, ${where}`).toContain(login);
    }
    const expected = new Map<string, Set<string>>();
    for (const f of before(p.flushed))
      for (const u of f.userIds) expected.set(f.drawId, (expected.get(f.drawId) ?? new Set()).add(u));
    for (const [drawId, users] of syncedJournalEntrants(p.fs, cut))
      for (const u of users) expected.set(drawId, (expected.get(drawId) ?? new Set()).add(u));
    for (const [drawId, users] of expected) {
      const there = await present(drawId);
      for (const u of users) expect(there.has(u), `[synced entrant kept] ${u} in ${drawId}, ${where}`).toBe(true);
    }
    for (const d of before(p.deliveries)) {
      const stored = repo.deliveryOf(d.drawId, d.userId) as Record<string, unknown> | undefined;
      for (const [field, value] of Object.entries(d.fields))
        expect(stored?.[field], `[delivery update kept] ${field} of ${d.userId} in ${d.drawId}, ${where}`).toBe(value);
    }
  } finally {
    await repo.close();
  }
  return fs;
}

/**
 * A key for "this disk state, checked against these promises": states a run leaves again and
 * again (a cut between two writes keeps the same synced bytes) are checked once. Two states with
 * the same key get the same verdict: the same names and bytes, the same promises before the cut,
 * the same synced journal lines.
 */
export function stateKey(image: DiskImage, cut: number, p: Promises): string {
  const h = createHash('sha1');
  for (const [path, e] of [...image.names].sort(([a], [b]) => (a < b ? -1 : 1))) {
    h.update(path).update('\0');
    if (e.kind === 'file') h.update(image.files.get(e.ino)!).update('\0');
  }
  const counts = [p.acked, p.finishes, p.opened, p.announced, p.flushed, p.deliveries].map(
    (l) => l.filter((x) => x.at <= cut).length,
  );
  const journalSyncs = p.fs.ops
    .slice(0, cut)
    .filter((o) => o.t === 'sync' && (p.fs.createdPath(o.ino) ?? '').startsWith(`${DIR}/journal/`)).length;
  return `${h.digest('hex')}:${counts.join(',')}:${journalSyncs}`;
}
