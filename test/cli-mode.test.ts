/**
 * The read-only scripts pick the mode the way `npm start` does (real `npm run history` / `verify`
 * processes): live data in DATA_DIR, sandbox data in DATA_DIR/sandbox; `--sandbox` / `--live`
 * override (and need no credentials); partial live credentials without a flag are the same error
 * as for `npm start`; both flags together are a usage error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { FileDrawRepository } from '../src/storage/index.js';
import { finishedRecord } from './support/fairness-records.js';
import { makeTempDir } from './support/e2e-stack.js';
import { runProcess } from './support/sandbox-mode-spawn.js';

let dataDir: string;
let cleanup: () => Promise<void>;

const liveCredentials = {
  TWITCH_CHANNEL: 'somestreamer',
  TWITCH_USERNAME: 'giftdrop_bot',
  TWITCH_TOKEN: 'oauth:tok-secret',
  FOURTHWALL_USERNAME: 'api-user',
  FOURTHWALL_PASSWORD: 'pw-secret',
  FOURTHWALL_WEBHOOK_SECRET: 'whsec-secret',
};

beforeAll(async () => {
  ({ dir: dataDir, cleanup } = await makeTempDir('giftdrop-cli-mode-'));
  const live = await FileDrawRepository.open(dataDir, { mode: 'live' });
  await live.saveDraw(finishedRecord({ id: 'live_draw' }));
  await live.close();
  const sandbox = await FileDrawRepository.open(join(dataDir, 'sandbox'), { mode: 'sandbox' });
  await sandbox.saveDraw(finishedRecord({ id: 'sandbox_draw' }));
  await sandbox.close();
});
afterAll(async () => {
  await cleanup?.();
});

async function history(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; ids: string[]; modes: string[]; stderr: string }> {
  const res = await runProcess('npm', ['run', '--silent', 'history', '--', '--json', ...args], {
    DATA_DIR: dataDir,
    ...env,
  });
  const rows = res.code === 0 ? (JSON.parse(res.stdout) as { id: string; mode: string }[]) : [];
  return { code: res.code, ids: rows.map((r) => r.id), modes: rows.map((r) => r.mode), stderr: res.stderr };
}

describe('history and verify pick the mode like npm start', () => {
  it('without credentials: the sandbox data; --live reads the live data', async () => {
    expect(await history([])).toMatchObject({ code: 0, ids: ['sandbox_draw'], modes: ['sandbox'] });
    expect(await history(['--live'])).toMatchObject({ code: 0, ids: ['live_draw'], modes: ['live'] });
  }, 30_000);

  it('with live credentials: the live data; --sandbox reads the sandbox data', async () => {
    expect(await history([], liveCredentials)).toMatchObject({ code: 0, ids: ['live_draw'] });
    expect(await history(['--sandbox'], liveCredentials)).toMatchObject({ code: 0, ids: ['sandbox_draw'] });
  }, 30_000);

  it('partial credentials: the config error naming the missing variable, unless a flag says which data', async () => {
    const partial = { ...liveCredentials, TWITCH_TOKEN: '' };
    const res = await history([], partial);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('TWITCH_TOKEN: required in live mode');
    expect(res.stderr).toContain('npm run history -- --live (or --sandbox)');
    expect(await history(['--live'], partial)).toMatchObject({ code: 0, ids: ['live_draw'] });
    const both = await runProcess('npm', ['run', '--silent', 'verify', '--', '--sandbox', '--live', 'x'], {
      DATA_DIR: dataDir,
    });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--sandbox and --live cannot be combined');
    const verify = await runProcess('npm', ['run', '--silent', 'verify', '--', '--sandbox', 'sandbox_draw'], {
      DATA_DIR: dataDir,
      ...partial,
    });
    expect(verify.code, verify.stderr).toBe(0);
  }, 60_000);
});
