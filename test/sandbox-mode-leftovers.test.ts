/**
 * A sandbox world owns its leftovers: an earlier sandbox run that left prizes unredeemed (stopped
 * with SIGINT right after the first winners, or an interactive `/gift` nobody redeemed) never
 * breaks the next `npm start`. The next run (a real process on the same DATA_DIR) says it starts a
 * new world, exits 0, names its winners and redeems every prize of its own world; the history then
 * holds only that world's draws, each "all redeemed". `--reset` also renews the dashboard token,
 * and is refused in live mode.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { demoInProcess, runProcess, startProcess } from './support/sandbox-mode-spawn.js';

let dir: string;
let configFile: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'giftdrop-sandbox-leftovers-'));
  configFile = join(dir, 'giftdrop.json');
  writeFileSync(configFile, JSON.stringify({ demo: { drawSeconds: 3, linkSeconds: 5, paceMs: 10 } }));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface ExportedDraw {
  id: string;
  status: string;
  winners: { login: string; delivery?: { redeemedAt?: string } }[];
}

async function history(dataDir: string): Promise<ExportedDraw[]> {
  // (the history command's module itself, as `npm run history -- --json` runs it)
  const hist = await runProcess('node', ['--import', 'tsx', 'src/cli/history.ts', '--json'], { DATA_DIR: dataDir });
  expect(hist.code, hist.stderr).toBe(0);
  return JSON.parse(hist.stdout) as ExportedDraw[];
}

/** The scripted demo as a real process on `dataDir`, to its end; checks a whole new world ran and redeemed. */
async function secondWorld(dataDir: string, earlier: ExportedDraw[], args: string[] = []): Promise<string> {
  const run = await runProcess(
    'node',
    ['--import', 'tsx', 'src/main.ts', ...args],
    { DATA_DIR: dataDir, HTTP_PORT: '0', GIFTDROP_CONFIG: configFile },
    110_000,
  );
  expect(run.code, `stderr:\n${run.stderr}\nstdout:\n${run.stdout}`).toBe(0);
  expect(run.stdout).toMatch(/^ {2}A new sandbox world: the earlier run's draws and prizes in .* were cleared/m);
  expect(run.stdout).toMatch(/^✔ Gift draw finished: @\w+, @\w+, @\w+ won\./m);
  expect(run.stdout).toMatch(/^✔ Every prize is redeemed/m);
  expect(run.stdout).toMatch(/^✔ Done: 3 draws are in the history/m);
  expect(run.stdout).not.toContain('✖');
  const draws = await history(dataDir);
  expect(draws.map((d) => d.id)).toHaveLength(3);
  for (const old of earlier) expect(draws.map((d) => d.id)).not.toContain(old.id);
  for (const d of draws) {
    expect(d.status).toBe('finished');
    expect(d.winners.length).toBeGreaterThan(0);
    for (const w of d.winners) expect(w.delivery?.redeemedAt, `${d.id} @${w.login}`).toBeTruthy();
  }
  return run.stdout;
}

describe('a new sandbox run after an earlier one left prizes unredeemed', () => {
  it('after a SIGINT right after the first winners: exit 0, winners named, every prize of the new world redeemed', async () => {
    const dataDir = join(dir, 'after-sigint');
    const env = { DATA_DIR: dataDir, HTTP_PORT: '0', GIFTDROP_CONFIG: configFile };
    const p = startProcess('node', ['--import', 'tsx', 'src/main.ts'], env);
    try {
      await p.until(/^✔ Gift draw finished: /m, 'the first winners', 60_000);
      p.child.kill('SIGINT');
      expect(await p.exited, p.stderr()).toBe(0);
    } finally {
      if (p.child.exitCode === null) p.child.kill('SIGKILL');
    }
    const earlier = await history(dataDir);
    const unredeemed = earlier.flatMap((d) => d.winners).filter((w) => !w.delivery?.redeemedAt);
    expect(unredeemed.length).toBeGreaterThanOrEqual(3); // the leftovers this test is about
    await secondWorld(dataDir, earlier);
  }, 180_000);

  it('after an interactive /gift left unredeemed: the same', async () => {
    const dataDir = join(dir, 'after-gift');
    const config = loadConfig({
      env: { DATA_DIR: dataDir, HTTP_PORT: '0', GIFTDROP_CONFIG: configFile },
      dotenv: false,
      cwd: dir,
    });
    const demo = demoInProcess(config, { script: false });
    const { input, seen } = demo;
    await seen(/Your turn/, 'the prompt');
    await seen(/Fourthwall now shows it as LIVE/, 'the stream live at the shop (gifting open)');
    input.write('/gift 2\n');
    await seen(/Draw \S+ is open/, 'the gift draw opening');
    input.write('/viewers 4\n');
    await seen(/Draw \S+ finished: @\w+, @\w+\./, 'the gift draw finishing with 2 winners');
    input.write('/quit\n');
    expect(await demo.done).toBe(0);
    const earlier = await history(dataDir);
    expect(earlier.flatMap((d) => d.winners).filter((w) => !w.delivery?.redeemedAt)).toHaveLength(2);
    await secondWorld(dataDir, earlier);
  }, 180_000);

  it('--reset renews the dashboard token too; live mode refuses it', async () => {
    const dataDir = join(dir, 'after-sigint');
    const tokenFile = join(dataDir, 'sandbox', 'dashboard.token');
    expect(existsSync(tokenFile)).toBe(true);
    const before = readFileSync(tokenFile, 'utf8');
    const out = await secondWorld(dataDir, await history(dataDir), ['--reset']);
    expect(out).toContain('The dashboard token was reset');
    expect(readFileSync(tokenFile, 'utf8')).not.toBe(before);

    const live = await runProcess(
      'node',
      ['--import', 'tsx', 'src/main.ts', '--reset'],
      {
        DATA_DIR: dataDir,
        TWITCH_CHANNEL: 'somechannel',
        TWITCH_USERNAME: 'somebot',
        TWITCH_TOKEN: 'oauth:abc',
        FOURTHWALL_USERNAME: 'user',
        FOURTHWALL_PASSWORD: 'pass',
        FOURTHWALL_WEBHOOK_SECRET: 'secret',
      },
      30_000,
    );
    expect(live.code).toBe(1);
    expect(live.stderr).toContain('--reset clears the sandbox data only');
  }, 180_000);
});
