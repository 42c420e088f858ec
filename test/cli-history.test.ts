import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runHistoryCli } from '../src/cli/history.js';
import { finishedRecord } from './support/fairness-records.js';
import { openRecord, tempDataDir } from './support/storage-helpers.js';
import { captureIo, historyForFile, runCli } from './support/cli-io.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const dataDir = historyForFile(async (repo) => {
  await repo.saveDraw(finishedRecord({ id: 'lg_old', openedAt: '2026-01-01T00:00:00.000Z', winners: 2 }));
  await repo.saveDraw(
    finishedRecord({
      id: 'gd_new',
      kind: 'gift-draw',
      openedAt: '2026-01-02T00:00:00.000Z',
      winners: 1,
      offerName: 'Mug, "large"\u001b[31m',
    }),
  );
  await repo.saveDraw(openRecord('lg_open', '2026-01-03T00:00:00.000Z'));
});

const run = (...argv: string[]) => runCli(runHistoryCli, dataDir(), ...argv);

describe('history CLI', () => {
  it('prints the contract export as JSON, newest first', async () => {
    const { code, out, err } = await run('--json');
    expect(code).toBe(0);
    expect(err).toBe('');
    const rows = JSON.parse(out);
    expect(rows.map((r: { id: string }) => r.id)).toEqual(['lg_open', 'gd_new', 'lg_old']);
    const expected = finishedRecord({ id: 'lg_old', openedAt: '2026-01-01T00:00:00.000Z', winners: 2 });
    const old = rows[2];
    expect(Object.keys(old).slice(0, 12)).toEqual([
      'id',
      'kind',
      'status',
      'source',
      'offer',
      'gifts',
      'openedAt',
      'closesAt',
      'closedAt',
      'entrants',
      'winners',
      'fairness',
    ]);
    expect(old).toMatchObject({
      id: 'lg_old',
      kind: 'link-giveaway',
      status: 'finished',
      source: { packageId: 'pkg_lg_old' },
      offer: { id: 'prod_1', name: 'Sticker pack' },
      gifts: 2,
      entrants: 20,
      fairness: {
        commitment: expected.fairness.commitment,
        seed: expected.fairness.seed,
        entrantsDigest: expected.fairness.entrantsDigest,
      },
    });
    expect(old.winners).toEqual(
      expected.winners.map((w) => ({
        userId: w.userId,
        login: w.login,
        displayName: w.displayName,
        redeemUrl: w.redeemUrl,
        pick: w.pick,
      })),
    );
    expect(old.frozenEntrants).toBeUndefined();
    expect(rows[0].closedAt).toBeUndefined();
    expect(rows[0].fairness.seed).toBeUndefined();
  });

  it('limits and selects one draw', async () => {
    const limited = await run('--json', '--limit', '2');
    expect(JSON.parse(limited.out).map((r: { id: string }) => r.id)).toEqual(['lg_open', 'gd_new']);
    const inline = await run('--json', '--limit=1');
    expect(JSON.parse(inline.out)).toHaveLength(1);
    const one = await run('--json', '--draw', 'lg_old');
    expect(JSON.parse(one.out).map((r: { id: string }) => r.id)).toEqual(['lg_old']);
    const missing = await run('--draw', 'nope');
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/no draw with id "nope" in .*history\.json/);
  });

  it('prints one CSV row per winner, quoting where needed', async () => {
    const { code, out } = await run('--csv');
    expect(code).toBe(0);
    const lines = out.split('\r\n');
    expect(lines.at(-1)).toBe('');
    expect(lines[0]).toBe(
      'drawId,kind,offerName,closedAt,userId,login,displayName,giftId,redeemUrl,claimed,entrantsByChannel',
    );
    expect(lines).toHaveLength(1 + 1 + 2 + 1);
    const gd = finishedRecord({ id: 'gd_new', openedAt: '2026-01-02T00:00:00.000Z', winners: 1 });
    const w = gd.winners[0]!;
    expect(lines[1]).toBe(
      `gd_new,gift-draw,"Mug, ""large""\ufffd[31m",${gd.closedAt},${w.userId},${w.login},${w.displayName},,${w.redeemUrl},,`,
    );
    expect(lines[2]!.startsWith('lg_old,link-giveaway,Sticker pack,2026-01-01T00:01:00.000Z,')).toBe(true);
  });

  it('prints a readable table by default and a detail view for one draw, without control characters', async () => {
    const { code, out } = await run();
    expect(code).toBe(0);
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+KIND\s+STATUS\s+OPENED\s+ENTRANTS\s+WINNERS\s+DELIVERY\s+OFFER$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(['lg_open', 'gd_new', 'lg_old']);
    expect(out).not.toContain('\u001b');
    expect(out).toContain('Mug, "large" [31m');
    const detail = await run('--draw', 'lg_old');
    expect(detail.out).toMatch(/^draw\s+lg_old$/m);
    expect(detail.out).toMatch(/^seed\s+[0-9a-f]{64}$/m);
    expect(detail.out).toMatch(/^ {2}pick 0: /m);
    // the operator's place to find a winner's link when the console could not print it
    const old = finishedRecord({ id: 'lg_old', openedAt: '2026-01-01T00:00:00.000Z', winners: 2 });
    for (const w of old.winners) expect(detail.out).toContain(`    link ${w.redeemUrl!}\n`);
  });

  it('rejects bad arguments with the usage and exit code 2', async () => {
    for (const argv of [
      ['--json', '--csv'],
      ['--limit'],
      ['--limit', '0'],
      ['--limit', 'x'],
      ['--draw'],
      ['--bogus'],
      ['extra'],
    ]) {
      const { code, err, out } = await run(...argv);
      expect(code, argv.join(' ')).toBe(2);
      expect(err).toContain('usage: npm run history');
      expect(out).toBe('');
    }
  });

  it('reports an unreadable history with exit code 1', async () => {
    const broken = await tempDataDir();
    const { writeFile } = await import('node:fs/promises');
    await writeFile(`${broken.dir}/history.json`, 'not json');
    const c = captureIo(broken.dir);
    expect(await runHistoryCli([], c.io)).toBe(1);
    expect(c.err()).toMatch(/history\.json is not valid JSON/);
    await broken.cleanup();
  });

  it('a folder of an older version with a truncated history.json: prints the draws of history.json.bak and warns naming both files', async () => {
    const damaged = await tempDataDir();
    const { writeFile } = await import('node:fs/promises');
    const stored = (id: string) => {
      const { frozenEntrants: _f, ...record } = finishedRecord({ id });
      return record;
    };
    await writeFile(
      `${damaged.dir}/history.json.bak`,
      JSON.stringify({ version: 1, draws: [stored('first')] }, null, 2),
    );
    await writeFile(
      `${damaged.dir}/history.json`,
      JSON.stringify({ version: 1, draws: [stored('first'), stored('second')] }, null, 2).slice(0, 10),
    );
    const c = captureIo(damaged.dir);
    expect(await runHistoryCli(['--json'], c.io)).toBe(0);
    expect(JSON.parse(c.out()).map((r: { id: string }) => r.id)).toEqual(['first']);
    expect(c.err()).toContain(`history: warning: ${damaged.dir}/history.json is unreadable`);
    expect(c.err()).toContain(`started from the previous generation ${damaged.dir}/history.json.bak`);
    await damaged.cleanup();
  });

  it('runs as `npm run history` with the data directory from the configuration', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/history.ts', '--live', '--json', '--limit', '1'],
      {
        cwd: root,
        env: { ...process.env, DATA_DIR: dataDir(), GIFTDROP_MODE: 'sandbox' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(JSON.parse(out).map((r: { id: string }) => r.id)).toEqual(['lg_open']);
  });
});
