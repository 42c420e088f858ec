/**
 * The REAL bot process (`node --import tsx src/main.ts`, live mode against the local sandboxes)
 * refuses to start on a data directory or dashboard token file that other users could change or
 * that another user owns: exit 1 with one line naming the path and the fix, nothing written there.
 * Once fixed as the line says, the same directory starts.
 */
import { chmod, chown, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  botProcessEnv,
  makeTempDir,
  setShopLive,
  spawnBot,
  startLocalServers,
  writeSettingsFile,
  type LocalServers,
} from './support/e2e-stack.js';
import { runProcess } from './support/sandbox-mode-spawn.js';

let servers: LocalServers;
let root: string;
let settingsFile: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  servers = await startLocalServers();
  setShopLive(servers);
  ({ dir: root, cleanup } = await makeTempDir('giftdrop-private-'));
  settingsFile = await writeSettingsFile(root);
});
afterAll(async () => {
  await servers?.close();
  await cleanup?.();
});

/** The bot's entry run to its exit (it refuses to start here, or is expected to). */
const runMain = (env: Record<string, string>) =>
  runProcess(process.execPath, ['--import', 'tsx', 'src/main.ts'], env, 20_000);

describe('a data directory others can change is refused', { timeout: 90_000 }, () => {
  it('DATA_DIR writable by others: exit 1, one line with the fix, nothing written; fixed, it starts', async () => {
    const dataDir = join(root, 'open-dir');
    await mkdir(dataDir);
    await chmod(dataDir, 0o777);
    const run = await runMain({ ...botProcessEnv(servers, { dataDir }), GIFTDROP_CONFIG: settingsFile });
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `giftdrop: the data directory (DATA_DIR) ${dataDir} can be changed by other users (mode 777): run chmod 700 '${dataDir}' (and check nothing in it was planted)`,
    );
    expect(await readdir(dataDir)).toEqual([]);

    await chmod(dataDir, 0o700);
    const bot = await spawnBot(servers, { dataDir, configFile: settingsFile });
    expect((await bot.kill('SIGTERM')).code).toBe(0);
  });

  it('a planted dashboard token file (group-writable) is refused, not trusted', async () => {
    const dataDir = join(root, 'planted-token');
    await mkdir(dataDir, { mode: 0o700 });
    const token = join(dataDir, 'dashboard.token');
    await writeFile(token, 'planted-token-planted-token\n', { mode: 0o660 });
    await chmod(token, 0o660);
    const run = await runMain({ ...botProcessEnv(servers, { dataDir }), GIFTDROP_CONFIG: settingsFile });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `giftdrop: the secret file ${token} can be changed by other users (mode 660): run chmod 600 '${token}' (and check nothing in it was planted)`,
    );
    expect((await readdir(dataDir)).sort()).toEqual(['dashboard.token']);
  });

  it("a dashboard token file that is a symbolic link is refused as a link (not by the link's own mode, always 777)", async () => {
    const dataDir = join(root, 'linked-token');
    await mkdir(dataDir, { mode: 0o700 });
    const elsewhere = join(root, 'elsewhere.token');
    await writeFile(elsewhere, 'linked-token-linked-token\n', { mode: 0o600 });
    const token = join(dataDir, 'dashboard.token');
    await symlink(elsewhere, token);
    const run = await runMain({ ...botProcessEnv(servers, { dataDir }), GIFTDROP_CONFIG: settingsFile });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `giftdrop: the secret file ${token} is a symbolic link: giftdrop does not read it through a link; put the file itself there (or delete the link to have a new one made)`,
    );
  });

  it.skipIf(process.getuid?.() !== 0)(
    'a DATA_DIR owned by another user is refused (needs root to set up)',
    async () => {
      const dataDir = join(root, 'not-mine');
      await mkdir(dataDir, { mode: 0o700 });
      await chown(dataDir, 65534, 65534);
      const run = await runMain({ ...botProcessEnv(servers, { dataDir }), GIFTDROP_CONFIG: settingsFile });
      expect(run.code).toBe(1);
      expect(run.stderr.trim()).toBe(
        `giftdrop: the data directory (DATA_DIR) ${dataDir} belongs to another user (uid 65534, you are uid 0): run giftdrop as its owner, or use a DATA_DIR of your own (or: chown 0 '${dataDir}')`,
      );
    },
  );
});
