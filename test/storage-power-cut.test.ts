/**
 * Power-cut simulation of the storage (SQLite crash-test VFS / ALICE style). One run of the real
 * engine over the real FileDrawRepository, on a simulated disk that records every operation
 * (test/support/power-cut-fs.ts): a gift draw opened by a webhook (its id marked processed, as
 * the event intake does), entries, close and finish at Fourthwall, winners announced; a link
 * giveaway with entries and its finish; a reroll of one of its winners. Then, for EVERY prefix of
 * the recorded operations, each disk state a power cut there could leave is rebuilt, the storage
 * is reopened on it, and:
 *   - the history loads (never corrupt);
 *   - every webhook id acknowledged before the cut is still known as processed;
 *   - every draw told to Fourthwall (finishDraw) or mentioned in chat is there, with the winners
 *     Fourthwall was told and every winner named in chat;
 *   - every entrant whose journal line was synced (or whose flush() had resolved) is there;
 *   - nothing is doubled (draw ids, entrants, winners).
 * A second test asserts the order of operations for the history, a new journal and the event-id
 * log: write -> sync -> rename -> directory sync (and a new append file's directory synced before
 * its first line is relied on).
 */
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { DrawRecord, ProductInfo } from '../src/giveaway/model.js';
import { parseJournal } from '../src/storage/journal.js';
import { Disk } from '../src/storage/disk.js';
import { FileDrawRepository } from '../src/storage/index.js';
import { chatMsg, harness, type Harness } from './support/giveaway-fakes.js';
import { emptyImage, PowerCutFs, type DiskImage } from './support/power-cut-fs.js';

const DIR = '/data';
const MUG: ProductInfo = { id: '3f1c0a52-3333-4a6b-9d1e-000000000003', name: 'Mug', slug: 'mug' };
const mod = () => chatMsg('modjo', { roles: { moderator: true } });

/** What the outside world was told, each stamped with how many disk operations had happened. */
interface Told {
  acks: { at: number; eventId: string; drawId: string }[];
  finishes: { at: number; drawId: string; userIds: string[] }[];
  chat: { at: number; drawId: string; text: string }[];
  flushed: { at: number; drawId: string; userIds: string[] }[];
}

async function recordRun(): Promise<{ fs: PowerCutFs; told: Told; winnersByDraw: Map<string, Set<string>> }> {
  const fs = new PowerCutFs(emptyImage([DIR]));
  const told: Told = { acks: [], finishes: [], chat: [], flushed: [] };
  const h: Harness = await harness({ dir: DIR, fileSystem: fs });
  h.shop.products = [MUG];
  let step = '';
  const say = h.chat.say.bind(h.chat);
  h.chat.say = (text, options) => {
    told.chat.push({ at: fs.ops.length, drawId: step, text });
    say(text, options);
  };
  const finish = h.shop.finishDraw.bind(h.shop);
  h.shop.finishDraw = (drawId, participants) => {
    told.finishes.push({ at: fs.ops.length, drawId, userIds: participants.map((p) => p.userId) });
    return finish(drawId, participants);
  };
  const enterAll = async (drawId: string, logins: string[]) => {
    for (const l of logins) h.svc.enter(chatMsg(l));
    await h.repo.flush();
    told.flushed.push({ at: fs.ops.length, drawId, userIds: logins.map((l) => `u-${l}`) });
  };

  // A gift draw, opened by a webhook (handled, then its id marked, as the event intake does).
  const gift = h.shop.addDraw({ id: 'gdr_1', gifts: 2, durationSeconds: 60 });
  step = gift.id;
  await h.svc.handleGiftDrawStarted(gift, 'evt-1');
  await h.repo.markEventProcessed('evt-1');
  told.acks.push({ at: fs.ops.length, eventId: 'evt-1', drawId: gift.id });
  // Entries flushed in small batches (each a journal append and sync), as a live chat arrives.
  for (let i = 0; i < 120; i += 2) await enterAll(gift.id, [`gv${i}`, `gv${i + 1}`]);
  h.svc.enter(chatMsg('fay')); // journaled by the timer-free flush of the close, never awaited alone
  let done = once(h.svc.events, 'draw-finished');
  h.clock.advance(60_000);
  await done;
  await h.svc.whenIdle();

  // A link giveaway, then a reroll of its first winner.
  step = 'link';
  const res = await h.svc.startLinkGiveaway(mod(), 'mug', 2, 30);
  if (!res.ok) throw new Error(res.message);
  const linkId = (res as { id: string }).id;
  for (const line of told.chat) if (line.drawId === step) line.drawId = linkId;
  step = linkId;
  for (let i = 0; i < 45; i += 3) await enterAll(linkId, [`lv${i}`, `lv${i + 1}`, `lv${i + 2}`]);
  done = once(h.svc.events, 'draw-finished');
  h.clock.advance(30_000);
  const [linkRecord] = (await done) as [DrawRecord];
  await h.svc.whenIdle();
  const rerolled = await h.svc.reroll(`@${linkRecord.winners[0]!.login}`, mod());
  if (!rerolled.ok) throw new Error(rerolled.message);
  await h.svc.whenIdle();
  await h.shutdown();

  // Every login that was a winner at any time, per draw (to read the chat lines by).
  const winnersByDraw = new Map<string, Set<string>>();
  const check = await FileDrawRepository.open(DIR, { fileSystem: fs, readOnly: true });
  for (const r of await check.listDraws()) {
    winnersByDraw.set(r.id, new Set([...r.winners.map((w) => w.login), ...(r.rerolls ?? []).map((x) => x.replacedLogin)]));
  }
  await check.close();
  return { fs, told, winnersByDraw };
}

/** The userIds in the synced part of every journal the run created, per draw (at `cut`). */
function syncedJournalEntrants(fs: PowerCutFs, cut: number): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const op of fs.ops.slice(0, cut)) {
    if (op.t !== 'create' || !op.path.startsWith(`${DIR}/journal/`) || !op.path.endsWith('.jsonl')) continue;
    const drawId = op.path.slice(`${DIR}/journal/`.length, -'.jsonl'.length);
    const length = fs.syncedLength(op.ino, cut);
    if (length === 0) continue;
    const text = fs.readSynced(op.ino, length);
    out.set(drawId, [...(out.get(drawId) ?? []), ...parseJournal(text).entrants.map((e) => e.userId)]);
  }
  return out;
}

/** Reopens the storage on one disk state and checks it against what was told before `cut`. */
async function checkState(image: DiskImage, cut: number, run: Awaited<ReturnType<typeof recordRun>>): Promise<void> {
  const { told, winnersByDraw } = run;
  const where = `cut after operation ${cut}`;
  let repo: FileDrawRepository;
  try {
    repo = await FileDrawRepository.open(DIR, { fileSystem: new PowerCutFs(image), flushIntervalMs: 0 });
  } catch (err) {
    throw new Error(`[history loads] ${where}: ${(err as Error).message}`);
  }
  try {
    const draws = await repo.listDraws();
    const ids = draws.map((d) => d.id);
    expect(new Set(ids).size, `[nothing doubled] draw ids, ${where}`).toBe(ids.length);
    const open = await repo.openDraws();
    const present = async (drawId: string): Promise<Set<string>> => {
      const active = open.find((o) => o.record.id === drawId);
      if (active) {
        const users = active.entrants.map((e) => e.userId);
        expect(new Set(users).size, `[nothing doubled] entrants of ${drawId}, ${where}`).toBe(users.length);
        return new Set(users);
      }
      const record = await repo.getDraw(drawId);
      const frozen = (record?.frozenEntrants ?? []).map((e) => e.userId);
      expect(new Set(frozen).size, `[nothing doubled] frozen entrants of ${drawId}, ${where}`).toBe(frozen.length);
      return new Set(frozen);
    };

    for (const ack of told.acks.filter((a) => a.at <= cut)) {
      expect(await repo.isEventProcessed(ack.eventId), `[acknowledged webhook kept] ${ack.eventId}, ${where}`).toBe(true);
      expect(ids, `[acknowledged webhook's draw kept] ${ack.drawId}, ${where}`).toContain(ack.drawId);
    }
    for (const f of told.finishes.filter((x) => x.at <= cut)) {
      const record = draws.find((d) => d.id === f.drawId);
      const winners = (record?.winners ?? []).map((w) => w.userId);
      expect(new Set(winners).size, `[nothing doubled] winners of ${f.drawId}, ${where}`).toBe(winners.length);
      for (const u of f.userIds) expect(winners, `[draw told to Fourthwall kept] ${f.drawId} winner ${u}, ${where}`).toContain(u);
    }
    for (const line of told.chat.filter((x) => x.at <= cut)) {
      const record = draws.find((d) => d.id === line.drawId);
      expect(record, `[draw announced in chat kept] ${line.drawId} ("${line.text}"), ${where}`).toBeDefined();
      const named = [...line.text.matchAll(/@([a-z0-9_]+)/g)].map((m) => m[1]!).filter((l) => winnersByDraw.get(line.drawId)?.has(l));
      const known = new Set([...record!.winners.map((w) => w.login), ...(record!.rerolls ?? []).map((x) => x.replacedLogin)]);
      for (const login of named) expect([...known], `[winner announced in chat kept] @${login} of ${line.drawId}, ${where}`).toContain(login);
    }
    const expected = new Map<string, Set<string>>();
    for (const f of told.flushed.filter((x) => x.at <= cut)) for (const u of f.userIds) expected.set(f.drawId, (expected.get(f.drawId) ?? new Set()).add(u));
    for (const [drawId, users] of syncedJournalEntrants(run.fs, cut)) for (const u of users) expected.set(drawId, (expected.get(drawId) ?? new Set()).add(u));
    for (const [drawId, users] of expected) {
      const there = await present(drawId);
      for (const u of users) expect(there.has(u), `[synced entrant kept] ${u} in ${drawId}, ${where}`).toBe(true);
    }
  } finally {
    await repo.close();
  }
}

describe('power cut at every disk operation', () => {
  it('a gift draw, a link giveaway and a reroll: every state a power cut can leave reopens with what was told', async () => {
    const run = await recordRun();
    const cuts = run.fs.ops.length;
    expect(run.told.finishes).toHaveLength(1);
    expect(run.told.acks).toHaveLength(1);
    expect(run.told.chat.some((c) => / is replaced by /.test(c.text))).toBe(true);
    let states = 0;
    for (let cut = 0; cut <= cuts; cut++) {
      for (const image of run.fs.imagesAfter(cut)) {
        await checkState(image, cut, run);
        states += 1;
      }
    }
    expect(states).toBeGreaterThan(cuts);
    expect(cuts, 'hundreds of cut points').toBeGreaterThan(200);
  }, 300_000);

  it('orders write -> sync -> rename -> directory sync (history), and create -> directory sync -> write -> sync (journal, event ids)', async () => {
    const { fs, told } = await recordRun();
    const ops = fs.ops;
    const history = ops.findIndex((o) => o.t === 'rename' && o.to === `${DIR}/history.jsonl`);
    expect(history).toBeGreaterThan(0);
    const renamed = ops[history] as Extract<(typeof ops)[number], { t: 'rename' }>;
    const created = ops.findIndex((o) => o.t === 'create' && o.path === renamed.from);
    const ino = (ops[created] as { ino: number }).ino;
    const write = ops.findIndex((o, i) => i > created && o.t === 'write' && o.ino === ino);
    const sync = ops.findIndex((o, i) => i > write && o.t === 'sync' && o.ino === ino);
    const dirSync = ops.findIndex((o, i) => i > history && o.t === 'syncdir' && o.dir === DIR);
    expect([created, write, sync, history, dirSync].every((i, n, all) => i >= 0 && (n === 0 || i > all[n - 1]!)), 'history: create, write, sync, rename, directory sync').toBe(true);

    for (const [file, dir] of [
      [`${DIR}/journal/gdr_1.jsonl`, `${DIR}/journal`],
      [`${DIR}/events.jsonl`, DIR],
    ] as const) {
      const c = ops.findIndex((o) => o.t === 'create' && o.path === file);
      const fileIno = (ops[c] as { ino: number }).ino;
      const ds = ops.findIndex((o, i) => i > c && o.t === 'syncdir' && o.dir === dir);
      const w = ops.findIndex((o) => o.t === 'write' && o.ino === fileIno);
      const s = ops.findIndex((o, i) => i > w && o.t === 'sync' && o.ino === fileIno);
      expect([c, ds, w, s].every((i, n, all) => i >= 0 && (n === 0 || i > all[n - 1]!)), `${file}: create, directory sync, write, sync`).toBe(true);
      if (file.endsWith('events.jsonl')) expect(told.acks[0]!.at, 'the webhook is acknowledged after its id is synced').toBeGreaterThan(s);
    }
  }, 120_000);
});

/** Every disk a power cut after the first `cut` operations of `fs` can leave, as a new PowerCutFs. */
const survivors = (fs: PowerCutFs, cut = fs.ops.length) => fs.imagesAfter(cut).map((image) => new PowerCutFs(image));

describe('the disk protocol keeps what it promised, at every cut after the promise', () => {
  it('writeAtomic into a new directory (mkdirs): the file, with its whole content, survives', async () => {
    const fs = new PowerCutFs(emptyImage([DIR]));
    const disk = new Disk(fs);
    await disk.mkdirs(`${DIR}/a/b`);
    await disk.writeAtomic(`${DIR}/a/b/f.json`, '{"x":1}');
    for (const after of survivors(fs)) expect((await after.readFile(`${DIR}/a/b/f.json`)).toString(), '[written file survives]').toBe('{"x":1}');
  });

  it('writeAtomic over a file: the new content survives, and before it resolves the old or the new one, whole', async () => {
    const fs = new PowerCutFs(emptyImage([DIR]));
    const disk = new Disk(fs);
    await disk.writeAtomic(`${DIR}/h.json`, 'old');
    const start = fs.ops.length;
    await disk.writeAtomic(`${DIR}/h.json`, 'new', { backup: true });
    for (let cut = start; cut <= fs.ops.length; cut++) {
      for (const after of survivors(fs, cut)) {
        const text = (await after.readFile(`${DIR}/h.json`)).toString();
        if (cut === fs.ops.length) expect(text, '[replaced content survives]').toBe('new');
        else expect(['old', 'new'], '[old or new, whole]').toContain(text);
        if (await after.exists(`${DIR}/h.json.bak`)) expect((await after.readFile(`${DIR}/h.json.bak`)).toString(), '[backup whole]').toBe('old');
      }
    }
  });

  it('openAppend + append + datasync: the synced lines survive', async () => {
    const fs = new PowerCutFs(emptyImage([DIR]));
    const disk = new Disk(fs);
    const file = await disk.openAppend(`${DIR}/log.jsonl`);
    await file.append(Buffer.from('"a"\n'));
    await file.datasync();
    for (const after of survivors(fs)) expect((await after.readFile(`${DIR}/log.jsonl`)).toString(), '[synced append survives]').toBe('"a"\n');
  });

  it('quarantine: the damaged file is kept under its new name', async () => {
    const fs = new PowerCutFs(emptyImage([DIR]));
    const disk = new Disk(fs);
    await disk.writeAtomic(`${DIR}/bad.json`, 'damaged');
    const kept = await disk.quarantine(`${DIR}/bad.json`, Date.UTC(2026, 0, 1));
    for (const after of survivors(fs)) {
      expect(await after.exists(`${DIR}/bad.json`), '[quarantined file no longer under its name]').toBe(false);
      expect((await after.readFile(kept)).toString(), '[quarantined copy survives]').toBe('damaged');
    }
  });
});
