/**
 * Power-cut simulation of the bot's storage (SQLite crash-test VFS / ALICE style). One recorded
 * run of the real engine, event intake, HTTP server and delivery tracker over the real
 * FileDrawRepository on a simulated disk that records every operation
 * (test/support/power-cut-run.ts: webhooks over real sockets, several sharing one event-file sync,
 * an EIO and an ENOSPC among them; gift draws with entries, their finish, winners and their
 * deliveries; a redemption; a link giveaway and a reroll). Then, for EVERY prefix of the recorded
 * operations, each disk state a power cut there could leave (test/support/power-cut-fs.ts: unsynced
 * names kept or lost, each file's unsynced tail lost, kept, torn at a byte or zero-filled) is
 * rebuilt and checked (test/support/power-cut-checks.ts): the raw files hold nothing twice, the
 * storage reopens, and what was promised before the cut is there: every webhook the client saw
 * answered 200 (its id, its draw, its redemption), every announced commitment's seed, every
 * finish told to the shop, every winner said in chat, every synced entrant, every delivery update.
 * The reopen's own operations (compaction of a torn history, journal repair, temp removal) are cut
 * again at every step, and each of those states checked the same way. A restart on the states a
 * cut during the webhooks left redelivers every webhook: each is answered 200, each draw is there
 * once. A last test checks the order of the protocol's steps.
 * Recovery of older layouts and long logs (compaction, the v1 migration, journal repair) is
 * test/storage-power-cut-recovery.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Disk } from '../src/storage/disk.js';
import { checkState, rawDoubles, stateKey, type Promises } from './support/power-cut-checks.js';
import { emptyImage, PowerCutFs, type DiskImage } from './support/power-cut-fs.js';
import { DIR, recordRun, startBot, type RecordedRun } from './support/power-cut-run.js';
import { FakeShop } from './support/giveaway-fakes.js';

let run: RecordedRun;
beforeAll(async () => {
  run = await recordRun();
}, 120_000);

function promises(r: RecordedRun): Promises {
  const byId = new Map(r.webhooks.map((w) => [w.eventId, w]));
  const acked = r.told.answers
    .filter((a) => a.status === 200)
    .map((a) => {
      const w = byId.get(a.eventId)!;
      return {
        at: a.at,
        eventId: a.eventId,
        ...(w.type === 'GIFT_DRAW_STARTED' && w.drawId ? { opens: w.drawId } : {}),
        ...(w.redeems ? { redeems: w.redeems } : {}),
      };
    });
  const { finishes, opened, announced, flushed, deliveries } = r.told;
  return { acked, finishes, opened, announced, flushed, deliveries, fs: r.fs };
}

/** The events file's successful syncs among the first `cut` operations (its inode changes when it is rewritten). */
function eventFileSyncs(fs: PowerCutFs, cut: number): number {
  return fs.ops.slice(0, cut).filter((o) => o.t === 'sync' && /\/\.?events\.jsonl/.test(fs.createdPath(o.ino) ?? ''))
    .length;
}

describe('power cut at every disk operation', () => {
  it('the recorded run: refusals said in one line each, answered 503 then 200; concurrent webhooks share event-file syncs', () => {
    expect(run.surprises, 'every answer as expected').toEqual([]);
    const statusOf = (id: string) => run.told.answers.filter((a) => a.eventId === id).map((a) => a.status);
    expect(statusOf('evt-c'), 'EIO on the id sync: refused, then acknowledged').toEqual([503, 200]);
    expect(statusOf('evt-d'), 'ENOSPC on the history: refused, then acknowledged').toEqual([503, 200]);
    expect(run.refusals).toHaveLength(2);
    expect(run.refusals[0]).toContain('EIO');
    expect(run.refusals[1]).toContain('ENOSPC');
    const first = ['evt-a', 'evt-b', 'evt-ended-1', 'evt-ended-2', 'evt-ended-3', 'evt-other-shop'];
    const lastAck = Math.max(...run.told.answers.filter((a) => first.includes(a.eventId)).map((a) => a.at));
    expect(eventFileSyncs(run.fs, lastAck), 'six ids, fewer event-file syncs (group commit)').toBeLessThan(6);
    expect(
      run.fs.ops.some(
        (o) => o.t === 'fault' && o.on === 'sync' && (run.fs.createdPath(o.ino) ?? '').includes('/journal/'),
      ),
      'a journal sync failed',
    ).toBe(true);
    expect(run.told.finishes).toHaveLength(4);
    expect(run.told.deliveries.some((d) => d.fields['redeemedAt'])).toBe(true);
    expect(run.told.chat.some((c) => / is replaced by /.test(c.text))).toBe(true);
  });

  it('every state a power cut can leave, torn tails included, reopens with what was promised; so does every state a second cut during that reopen leaves', async () => {
    const p = promises(run);
    const cuts = run.fs.ops.length;
    const checked = new Set<string>();
    let states = 0;
    let torn = 0;
    let second = 0;
    /** Checks a state unless the same state was checked against the same promises; the reopen's disk, when checked. */
    const check = async (image: DiskImage, cut: number, label: string) => {
      const key = stateKey(image, cut, p);
      if (checked.has(key)) return undefined;
      checked.add(key);
      return checkState(image, cut, p, label);
    };
    for (let cut = 0; cut <= cuts; cut++) {
      for (const state of run.fs.statesAfter(cut)) {
        states += 1;
        if (!state.label.endsWith('tails lost')) torn += 1;
        const after = await check(state.image, cut, state.label);
        if (!after) continue;
        // The reopen wrote something (compaction, repair, temp removal): cut it at every step too
        // (its unsynced names kept or lost; the bytes it had not synced lost: everything it
        // relies on it syncs before the rename that makes it count).
        for (let r = 0; r < after.ops.length; r++) {
          for (const again of after.statesAfter(r, 'none')) {
            if (await check(again.image, cut, `${state.label}; then a cut during its reopen: ${again.label}`))
              second += 1;
          }
        }
      }
    }
    console.log(
      `power cut: ${cuts} cut points, ${states} states (${torn} with an unsynced tail kept, torn or zero-filled), ${checked.size} distinct checked, ${second} of them cut during a reopen`,
    );
    expect(cuts, 'hundreds of cut points').toBeGreaterThan(300);
    expect(torn, 'states with a torn, zero-filled or surviving unsynced tail').toBeGreaterThan(100);
    expect(second, 'states cut during a reopen').toBeGreaterThan(50);
  }, 600_000);

  it('a restart on any state a cut during the webhooks left: every webhook redelivered is answered 200, each draw and id once', async () => {
    const webhookPhase = Math.max(...run.told.answers.filter((a) => a.eventId === 'evt-d').map((a) => a.at));
    const hooks = run.webhooks.filter((w) => w.type !== 'ORDER_PLACED');
    let restarts = 0;
    for (let cut = 0; cut <= webhookPhase; cut++) {
      const states = run.fs.statesAfter(cut);
      // The state that kept every tail and name, and the one that lost them all.
      for (const state of [states[0]!, states[states.length - 1]!]) {
        const fs = new PowerCutFs(state.image);
        const bot = await startBot(fs, new FakeShop());
        try {
          for (const w of hooks)
            expect(await bot.post(w), `[redelivery acknowledged] ${w.eventId}, ${state.label}`).toBe(200);
          const opened = hooks.filter((w) => w.type === 'GIFT_DRAW_STARTED' && w.drawId).map((w) => w.drawId!);
          const ids = (await bot.h.repo.listDraws()).map((d) => d.id);
          for (const id of opened)
            expect(
              ids.filter((x) => x === id),
              `[draw there once] ${id}, ${state.label}`,
            ).toHaveLength(1);
        } finally {
          await bot.stop();
        }
        await rawDoubles(fs.current(), `after a restart and redeliveries on ${state.label}`);
        restarts += 1;
      }
    }
    expect(restarts).toBeGreaterThan(20);
  }, 600_000);

  it('orders write -> sync -> rename -> directory sync (history), and create -> directory sync -> write -> sync (journal, event ids)', () => {
    const ops = run.fs.ops;
    const history = ops.findIndex((o) => o.t === 'rename' && o.to === `${DIR}/history.jsonl`);
    expect(history).toBeGreaterThan(0);
    const renamed = ops[history] as Extract<(typeof ops)[number], { t: 'rename' }>;
    const created = ops.findIndex((o) => o.t === 'create' && o.path === renamed.from);
    const ino = (ops[created] as { ino: number }).ino;
    const write = ops.findIndex((o, i) => i > created && o.t === 'write' && o.ino === ino);
    const sync = ops.findIndex((o, i) => i > write && o.t === 'sync' && o.ino === ino);
    const dirSync = ops.findIndex((o, i) => i > history && o.t === 'syncdir' && o.dir === DIR);
    expect(
      [created, write, sync, history, dirSync].every((i, n, all) => i >= 0 && (n === 0 || i > all[n - 1]!)),
      'history: create, write, sync, rename, directory sync',
    ).toBe(true);

    for (const [file, dir] of [
      [`${DIR}/journal/gdr_a.jsonl`, `${DIR}/journal`],
      [`${DIR}/events.jsonl`, DIR],
    ] as const) {
      const c = ops.findIndex((o) => o.t === 'create' && o.path === file);
      const fileIno = (ops[c] as { ino: number }).ino;
      const ds = ops.findIndex((o, i) => i > c && o.t === 'syncdir' && o.dir === dir);
      const w = ops.findIndex((o) => o.t === 'write' && o.ino === fileIno);
      const s = ops.findIndex((o, i) => i > w && o.t === 'sync' && o.ino === fileIno);
      expect(
        [c, ds, w, s].every((i, n, all) => i >= 0 && (n === 0 || i > all[n - 1]!)),
        `${file}: create, directory sync, write, sync`,
      ).toBe(true);
      if (file.endsWith('events.jsonl')) {
        const firstAck = run.told.answers.find((a) => a.status === 200)!;
        expect(firstAck.at, 'the first webhook is acknowledged after its id is synced').toBeGreaterThan(s);
      }
    }
  });
});

/** Every disk a power cut after the first `cut` operations of `fs` can leave, as a new PowerCutFs. */
const survivors = (fs: PowerCutFs, cut = fs.ops.length) => fs.statesAfter(cut).map((s) => new PowerCutFs(s.image));

describe('the disk protocol keeps what it promised, at every cut after the promise', () => {
  it('writeAtomic into a new directory (mkdirs): the file, with its whole content, survives', async () => {
    const fs = new PowerCutFs(emptyImage([DIR]));
    const disk = new Disk(fs);
    await disk.mkdirs(`${DIR}/a/b`);
    await disk.writeAtomic(`${DIR}/a/b/f.json`, '{"x":1}');
    for (const after of survivors(fs))
      expect((await after.readFile(`${DIR}/a/b/f.json`)).toString(), '[written file survives]').toBe('{"x":1}');
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
        if (await after.exists(`${DIR}/h.json.bak`))
          expect((await after.readFile(`${DIR}/h.json.bak`)).toString(), '[backup whole]').toBe('old');
      }
    }
  });

  it('openAppend + append + datasync: the synced lines survive; an unsynced append may be lost, torn or zero-filled, never more', async () => {
    const fs = new PowerCutFs(emptyImage([DIR]));
    const disk = new Disk(fs);
    const file = await disk.openAppend(`${DIR}/log.jsonl`);
    await file.append(Buffer.from('"a"\n'));
    await file.datasync();
    await file.append(Buffer.from('"bcdef"\n'));
    const seen = new Set<string>();
    for (const after of survivors(fs)) {
      const text = (await after.readFile(`${DIR}/log.jsonl`)).toString();
      expect(text.startsWith('"a"\n'), '[synced append survives]').toBe(true);
      seen.add(text.slice(4));
    }
    for (const tail of ['', '"', '"bcd', '"bcdef"', '"bcdef"\n', '\0'.repeat(8)])
      expect(seen, `[tail ${JSON.stringify(tail)} among the states]`).toContain(tail);
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
