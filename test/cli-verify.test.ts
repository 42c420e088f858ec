import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { NOTHING_TO_VERIFY, runVerifyCli } from '../src/cli/verify.js';
import { finishedRecord } from './support/fairness-records.js';
import { openRecord } from './support/storage-helpers.js';
import { historyForFile, runCli } from './support/cli-io.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const dataDir = historyForFile(
  async (repo) => {
    await repo.saveDraw(finishedRecord({ id: 'good', entrants: 50, winners: 3, rerollPicks: [2] }));
    await repo.saveDraw(finishedRecord({ id: 'tampered_list', entrants: 50, winners: 3 }));
    await repo.saveDraw(finishedRecord({ id: 'old_format', entrants: 50, winners: 3 }));
    await repo.saveDraw(finishedRecord({ id: 'old_tampered', entrants: 50, winners: 3 }));
    const forged = finishedRecord({ id: 'tampered_winner', entrants: 50, winners: 3 });
    const outsider = forged.frozenEntrants!.find((e) => !forged.winners.some((w) => w.userId === e.userId))!;
    forged.winners[0] = { ...forged.winners[0]!, userId: outsider.userId, login: outsider.login };
    await repo.saveDraw(forged);
    await repo.saveDraw(openRecord('still_open'));
    const handedBack = finishedRecord({ id: 'handed_back', entrants: 1, winners: 0 });
    await repo.saveDraw({
      ...handedBack,
      kind: 'gift-draw',
      gifts: 3,
      status: 'failed',
      failure: { reason: 'only 1 eligible entrant for 3 gifts', at: handedBack.closedAt! },
    });
    await repo.saveDraw({
      ...openRecord('cancelled_link'),
      kind: 'link-giveaway',
      status: 'cancelled',
      closedAt: new Date(0).toISOString(),
    });
  },
  async (dir) => {
    // edit the stored entrant list behind the bot's back: one entrant gets one more ticket
    const file = join(dir, 'draws', 'tampered_list.entrants.tsv');
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines[1] = lines[1]!.replace(/\t(\d+)$/, (_, w: string) => `\t${Number(w) + 1}`);
    await writeFile(file, lines.join('\n'));
    // draws saved before the entrants file version 2: their list is in a version 1 JSON file
    for (const [id, extra] of [
      ['old_format', 0],
      ['old_tampered', 1],
    ] as const) {
      const list = finishedRecord({ id, entrants: 50, winners: 3 }).frozenEntrants!;
      const entrants = list.map((e, i) => [e.userId, e.login, e.weight + (i === 0 ? extra : 0)]);
      await rm(join(dir, 'draws', `${id}.entrants.tsv`));
      await writeFile(join(dir, 'draws', `${id}.entrants.json`), JSON.stringify({ version: 1, drawId: id, entrants }));
    }
  },
);

const run = (...argv: string[]) => runCli(runVerifyCli, dataDir(), ...argv);

describe('verify CLI', () => {
  it('exits 0 and explains when the winners match', async () => {
    const { code, out, err } = await run('good');
    expect(code).toBe(0);
    expect(err).toBe('');
    const record = finishedRecord({ id: 'good', entrants: 50, winners: 3, rerollPicks: [2] });
    expect(out).toContain('draw good verifies');
    expect(out).toContain(record.fairness.commitment);
    expect(out).toContain(`50 frozen entrants, digest ${record.fairness.entrantsDigest}`);
    expect(out).toContain(`winners     ${record.winners.map((w) => w.login).join(', ')}`);
    expect(out).toContain(`rerolled    ${record.rerolls![0]!.replacedLogin}`);
  });

  it('a draw nobody won says so first, with why, and that its seed and list verify', async () => {
    const { code, out } = await run('handed_back');
    expect(code).toBe(0);
    expect(out.split('\n')[0]).toBe(
      'draw handed_back: nobody won (only 1 eligible entrant for 3 gifts); its seed and entrant list verify.',
    );
    expect(out).toContain('winners     (none)');
  });

  it('still reads and verifies a list stored in the version 1 JSON file, and catches tampering there', async () => {
    const old = await run('old_format');
    expect(old.code).toBe(0);
    expect(old.out).toContain('draw old_format verifies');
    expect(old.out).toContain('50 frozen entrants');
    const tampered = await run('old_tampered');
    expect(tampered.code).toBe(1);
    expect(tampered.err).toBe('verify: draw old_tampered does NOT verify: entrant list digest mismatch\n');
  });

  it('exits non-zero with the reason for a tampered entrant list or winner, or an unrevealed seed', async () => {
    const list = await run('tampered_list');
    expect(list.code).toBe(1);
    expect(list.err).toBe('verify: draw tampered_list does NOT verify: entrant list digest mismatch\n');
    const winner = await run('tampered_winner');
    expect(winner.code).toBe(1);
    expect(winner.err).toMatch(/does NOT verify: winner #1 should be viewer\d+ \(pick 0\) but history has viewer\d+/);
    expect(winner.out + list.out).toBe('');
  });

  it('a draw still open, or a giveaway cancelled before its draw, has nothing to verify: exit 3, not a tampering message', async () => {
    const open = await run('still_open');
    expect(open.code).toBe(NOTHING_TO_VERIFY);
    expect(open.out).toContain('draw still_open: is still open: its winners are not drawn yet');
    expect(open.err).toBe('');
    const cancelled = await run('cancelled_link');
    expect(cancelled.code).toBe(NOTHING_TO_VERIFY);
    expect(cancelled.out).toContain('was cancelled before anyone was drawn');
    expect(cancelled.out + cancelled.err).not.toMatch(/NOT verify|missing/);
  });

  it('exits non-zero for an unknown id and 2 for bad arguments', async () => {
    const unknown = await run('nope');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/no draw with id "nope"/);
    for (const argv of [[], ['a', 'b'], ['--json']]) {
      const bad = await run(...argv);
      expect(bad.code).toBe(2);
      expect(bad.err).toContain('usage: npm run verify');
    }
  });

  it('runs as `npm run verify` and reports through its exit code', async () => {
    const exec = (id: string) =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/verify.ts', '--live', id], {
          cwd: root,
          env: { ...process.env, DATA_DIR: dataDir(), GIFTDROP_MODE: 'sandbox' },
          stdio: 'ignore',
        });
        child.on('close', resolve);
      });
    const [good, bad] = await Promise.all([exec('good'), exec('tampered_winner')]);
    expect(good).toBe(0);
    expect(bad).toBe(1);
  });
});
