/**
 * Power cuts during recovery (the simulated disk of test/support/power-cut-fs.ts): what the bot
 * does to a data folder when it opens it, cut at every disk operation, and each state a cut there
 * leaves opened again and cut again at every operation of THAT opening:
 * - compaction of a long history log (more than half its lines superseded, a torn last line);
 * - the one-time migration of an older version's history.json (an open draw's seed still inside
 *   it: moved to the seed vault, dropped from both history generations, the log written, the old
 *   file kept as history.v1.json);
 * - the repair of an entry journal with an unreadable line in the middle and a torn last line
 *   (the damaged copy kept, the readable entrants kept).
 * (The cut inside a reopen keeps or loses its unsynced names and loses its unsynced bytes: all it
 * relies on it syncs before the rename that makes it count; a state met twice is checked once.)
 * After every cut, the folder opens as the bot opens it (the repository, then the open draws and
 * their journals) and holds every draw at its last complete version, every readable entrant, and
 * every open draw's seed matching its commitment.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { commitmentOf } from '../src/fairness/procedure.js';
import type { DrawRecord } from '../src/giveaway/model.js';
import { FileDrawRepository } from '../src/storage/index.js';
import { emptyImage, PowerCutFs, type DiskImage } from './support/power-cut-fs.js';
import { openRecord } from './support/storage-helpers.js';
import { noRoles } from '../src/shared/chat.js';

const DIR = '/data';
const HEADER = JSON.stringify({ giftdrop: 'history', version: 2 });

/** A disk holding `files` (path -> text, all durable) under DIR, with its folders. */
function imageWith(files: Record<string, string>): DiskImage {
  const image = emptyImage([DIR, `${DIR}/journal`, `${DIR}/draws`, `${DIR}/seeds`]);
  let ino = 1;
  for (const [name, text] of Object.entries(files)) {
    image.names.set(`${DIR}/${name}`, { kind: 'file', ino });
    image.files.set(ino++, Buffer.from(text, 'utf8'));
  }
  return image;
}

const seedOf = (n: number) => n.toString(16).padStart(2, '0').repeat(32);

/** What an opened folder must hold: each draw's expected status and entrant count, seeds of open draws, journaled entrants. */
interface Expected {
  draws: Map<string, { status: DrawRecord['status']; entrants: number }>;
  /** Open draws whose seed must be there (matching their commitment). */
  seeded: string[];
  /** Entrants an open draw must have after its journal is read. */
  entrants?: { drawId: string; userIds: string[] };
}

/** Opens the folder on `image` as the bot does and checks it; returns the disk it ran on (its operations recorded). */
async function reopen(image: DiskImage, want: Expected, where: string): Promise<PowerCutFs> {
  const fs = new PowerCutFs(image);
  let repo: FileDrawRepository;
  try {
    repo = await FileDrawRepository.open(DIR, { fileSystem: fs, flushIntervalMs: 0 });
  } catch (err) {
    throw new Error(`[folder opens] ${where}: ${(err as Error).message}`);
  }
  try {
    const open = await repo.openDraws();
    const draws = await repo.listDraws();
    expect(draws.map((d) => d.id).sort(), `[every draw kept] ${where}`).toEqual([...want.draws.keys()].sort());
    for (const d of draws) {
      const w = want.draws.get(d.id)!;
      expect({ status: d.status, entrants: d.entrants }, `[last complete version of ${d.id}] ${where}`).toEqual(w);
    }
    for (const id of want.seeded) {
      const seed = (await repo.getDraw(id))?.pendingSeed;
      expect(seed, `[open draw's seed kept] ${id}, ${where}`).toBeDefined();
      expect(commitmentOf(Buffer.from(seed!, 'hex')), `[seed matches the commitment] ${id}, ${where}`).toBe(
        (await repo.getDraw(id))!.fairness.commitment,
      );
    }
    if (want.entrants) {
      const users = open.find((o) => o.record.id === want.entrants!.drawId)?.entrants.map((e) => e.userId);
      expect(users?.sort(), `[readable entrants kept] ${where}`).toEqual([...want.entrants.userIds].sort());
    }
  } finally {
    await repo.close();
  }
  return fs;
}

/**
 * Opens `start` (the recovery whose operations are cut), then for every cut of it and every state
 * the cut leaves, reopens (checked), and cuts that reopen at every step too (checked). Returns how
 * many states were checked.
 */
async function cutRecovery(start: DiskImage, want: Expected): Promise<{ ops: number; states: number }> {
  const first = await reopen(start, want, 'the uninterrupted recovery');
  const seen = new Set<string>();
  let states = 0;
  /** Reopens a state unless the same names and bytes were reopened already. */
  const once = async (image: DiskImage, where: string) => {
    const key = keyOf(image);
    if (seen.has(key)) return undefined;
    seen.add(key);
    states += 1;
    return reopen(image, want, where);
  };
  for (let cut = 0; cut <= first.ops.length; cut++) {
    for (const s of first.statesAfter(cut)) {
      const again = await once(s.image, s.label);
      if (!again) continue;
      // A cut during that reopen (its unsynced bytes lost, its unsynced names kept or lost).
      for (let r = 0; r < again.ops.length; r++) {
        for (const s2 of again.statesAfter(r, 'none'))
          await once(s2.image, `${s.label}; then a cut during its reopen: ${s2.label}`);
      }
    }
  }
  console.log(`recovery: ${first.ops.length} operations, ${states} distinct states reopened`);
  return { ops: first.ops.length, states };
}

/** The names and bytes of a disk state. */
function keyOf(image: DiskImage): string {
  const h = createHash('sha1');
  for (const [path, e] of [...image.names].sort(([a], [b]) => (a < b ? -1 : 1))) {
    h.update(path).update('\0');
    if (e.kind === 'file') h.update(image.files.get(e.ino)!).update('\0');
  }
  return h.digest('hex');
}

/** A stored record (the history's shape: no pendingSeed) of a draw with `entrants` and `status`. */
function stored(id: string, status: DrawRecord['status'], entrants: number, seed: string): DrawRecord {
  return {
    ...openRecord(id),
    status,
    entrants,
    fairness: {
      commitment: commitmentOf(Buffer.from(seed, 'hex')),
      algorithm: 'giftdrop-hmac-sha256-v1',
      ...(status === 'finished' ? { seed } : {}),
    },
    ...(status === 'finished' ? { closedAt: '2026-01-01T00:01:00.000Z' } : {}),
  };
}

describe('power cuts during recovery', () => {
  it('compaction of a long history log with a torn last line: every draw at its last complete version, at every cut, and at every cut of the reopen after it', async () => {
    const lines: string[] = [HEADER];
    const draws: Expected['draws'] = new Map();
    const seeds: Record<string, string> = {};
    for (let n = 1; n <= 12; n++) {
      const id = `d${n}`;
      const seed = seedOf(n);
      const open = n % 3 === 0;
      // Six versions each: the entrant count growing, then finished (a third stay open).
      for (let v = 1; v <= 6; v++)
        lines.push(JSON.stringify(stored(id, open || v < 6 ? 'open' : 'finished', v * 10, seed)));
      draws.set(id, { status: open ? 'open' : 'finished', entrants: 60 });
      if (open) seeds[`seeds/${id}.seed`] = `${seed}\n`;
    }
    // A save cut off before its sync: half a line, the draw keeps its previous version.
    const torn = JSON.stringify(stored('d1', 'finished', 999, seedOf(1)));
    const text = lines.join('\n') + '\n' + torn.slice(0, torn.length >> 1);
    const start = imageWith({ 'history.jsonl': text, ...seeds });
    const { ops, states } = await cutRecovery(start, { draws, seeded: ['d3', 'd6', 'd9', 'd12'] });
    expect(ops, 'the compaction wrote the log whole').toBeGreaterThanOrEqual(5);
    expect(states).toBeGreaterThan(ops);
  }, 300_000);

  it("the v1 migration (an open draw's seed inside history.json): every draw, the seed in the vault, at every cut and every cut of the reopen after it; none left in either history generation", async () => {
    const seed = seedOf(7);
    const open = { ...stored('v-open', 'open', 5, seed), pendingSeed: seed };
    const done = stored('v-done', 'finished', 8, seedOf(8));
    const history = JSON.stringify({ version: 1, draws: [done, open] });
    const start = imageWith({ 'history.json': history, 'history.json.bak': history });
    const want: Expected = {
      draws: new Map([
        ['v-open', { status: 'open', entrants: 5 }],
        ['v-done', { status: 'finished', entrants: 8 }],
      ]),
      seeded: ['v-open'],
    };
    const { ops, states } = await cutRecovery(start, want);
    expect(ops).toBeGreaterThan(10);
    expect(states).toBeGreaterThan(ops);
    // Once the migration is over, no history file holds the seed (only the vault does).
    const fs = new PowerCutFs(start);
    await (await FileDrawRepository.open(DIR, { fileSystem: fs })).close();
    for (const s of fs.statesAfter(fs.ops.length)) {
      const after = new PowerCutFs(s.image);
      expect(await after.exists(`${DIR}/history.v1.json`), `[old history kept as history.v1.json] ${s.label}`).toBe(
        true,
      );
      for (const name of await after.readdir(DIR)) {
        if (!name.startsWith('history')) continue;
        expect(
          (await after.readFile(`${DIR}/${name}`)).toString(),
          `[no seed left in ${name}] ${s.label}`,
        ).not.toContain(seed);
      }
    }
  }, 300_000);

  it('journal repair (an unreadable middle line, a torn last line): every readable entrant, the damaged copy kept, at every cut and every cut of the reopen after it', async () => {
    const seed = seedOf(3);
    const record = stored('j1', 'open', 0, seed);
    const entrant = (n: number) =>
      JSON.stringify({
        userId: `u${n}`,
        login: `v${n}`,
        displayName: `V${n}`,
        weight: 1,
        roles: noRoles,
        enteredAt: Date.UTC(2026, 0, 1, 0, 0, n),
      });
    const journal =
      [entrant(1), entrant(2), '{"userId": broken', entrant(3), entrant(4)].join('\n') + '\n' + entrant(5).slice(0, 20);
    const start = imageWith({
      'history.jsonl': `${HEADER}\n${JSON.stringify(record)}\n`,
      'journal/j1.jsonl': journal,
      'seeds/j1.seed': `${seed}\n`,
    });
    const want: Expected = {
      draws: new Map([['j1', { status: 'open', entrants: 4 }]]),
      seeded: ['j1'],
      entrants: { drawId: 'j1', userIds: ['u1', 'u2', 'u3', 'u4'] },
    };
    const { ops, states } = await cutRecovery(start, want);
    expect(ops).toBeGreaterThanOrEqual(8);
    expect(states).toBeGreaterThan(ops);
    const fs = new PowerCutFs(start);
    const repo = await FileDrawRepository.open(DIR, { fileSystem: fs });
    await repo.openDraws();
    await repo.close();
    const kept = (await fs.readdir(`${DIR}/journal`)).filter((n) => n.includes('.corrupt-'));
    expect(kept, 'the damaged journal is kept').toHaveLength(1);
    expect((await fs.readFile(`${DIR}/journal/${kept[0]}`)).toString()).toBe(journal);
  }, 300_000);
});
