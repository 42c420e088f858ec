/**
 * The REAL bot process (`node --import tsx src/main.ts`) and its data directory: one bot per
 * DATA_DIR (a second instance, or `npm run setup`, exits non-zero naming the lock and the holder's
 * PID and changes nothing; a clean exit releases the lock; sandbox mode locks DATA_DIR/sandbox), a restart after a kill (the stale lock is taken over,
 * a history log whose last save was cut short keeps every whole record), a corrupt
 * line in the middle of an open draw's journal (reported by draw id and line; the draw resumes and
 * is drawn among every other entrant), and partial live credentials (exit non-zero naming each
 * missing variable; DATA_DIR not even created).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileDrawRepository } from '../src/storage/index.js';
import { parseJournal } from '../src/storage/journal.js';
import { finishedRecord } from './support/fairness-records.js';
import { runProcess, startProcess } from './support/sandbox-mode-spawn.js';
import {
  PROJECT_ROOT,
  botProcessEnv,
  enterAll,
  freePort,
  journaledEntrants,
  logins,
  makeTempDir,
  writeSettingsFile,
  setShopLive,
  spawnBot,
  startLocalServers,
  waitForDrawStatus,
  waitUntil,
  type BotProcess,
  type LocalServers,
} from './support/e2e-stack.js';

let servers: LocalServers;
let root: string;
/** A settings file beside the data folders (the public beacon off). */
let settingsFile: string;
let cleanup: () => Promise<void>;
const running: BotProcess[] = [];

beforeAll(async () => {
  servers = await startLocalServers();
  setShopLive(servers);
  ({ dir: root, cleanup } = await makeTempDir('giftdrop-datadir-'));
  // Beacon off (no route to drand here): these draws are about the data directory, not fairness.
  settingsFile = await writeSettingsFile(root);
});
afterAll(async () => {
  for (const bot of running) await bot.kill('SIGKILL');
  await servers?.close();
  await cleanup?.();
});

/** Runs main.ts with `env` to its exit; rejects when it runs longer than `timeoutMs`. */
function runMain(
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: PROJECT_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`still running after ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

async function seedHistory(dataDir: string, ids: string[]): Promise<void> {
  const repo = await FileDrawRepository.open(dataDir);
  for (const id of ids) await repo.saveDraw(finishedRecord({ id }));
  await repo.close();
}

/** Every file under `dir` with its size, mtime and content (the files are small). */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (path: string): Promise<void> => {
    for (const name of await readdir(path)) {
      const full = join(path, name);
      const s = await stat(full);
      if (s.isDirectory()) await walk(full);
      else out[full] = `${s.size}:${s.mtimeMs}:${(await readFile(full)).toString('base64')}`;
    }
  };
  await walk(dir);
  return out;
}

describe('one bot per DATA_DIR', () => {
  it('a second instance exits non-zero within 10 s naming the lock and the PID; the first one and its files are untouched', async () => {
    const dataDir = join(root, 'two');
    await seedHistory(dataDir, ['before_1', 'before_2']);
    const first = await spawnBot(servers, { dataDir, configFile: settingsFile });
    running.push(first);
    const lockFile = join(dataDir, 'giftdrop.lock');
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: first.pid });
    const historyBefore = await readFile(join(dataDir, 'history.jsonl'));
    const filesBefore = await snapshot(dataDir);

    const second = await runMain(botProcessEnv(servers, { dataDir }), 15_000);
    expect(second.code).not.toBe(0);
    expect(second.code).not.toBeNull();
    expect(second.ms).toBeLessThan(10_000);
    const lines = second.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(lockFile);
    expect(lines[0]).toContain(`PID ${first.pid}`);
    expect(second.stdout).toBe('');

    // `npm run setup` (it registers the webhook) is refused the same way.
    const setup = await runProcess('npm', ['run', '--silent', 'setup'], botProcessEnv(servers, { dataDir }), 30_000);
    expect(setup.code).toBe(1);
    expect(setup.stderr).toContain(`${lockFile} is held by another giftdrop (PID ${first.pid})`);
    expect(setup.stdout).toBe('');

    expect(await readFile(join(dataDir, 'history.jsonl'))).toEqual(historyBefore);
    expect(await snapshot(dataDir)).toEqual(filesBefore);
    expect((await first.health()).status).toBe(200);

    // A clean exit releases the lock.
    expect(await first.kill('SIGTERM')).toMatchObject({ code: 0 });
    expect(existsSync(lockFile)).toBe(false);
  }, 60_000);

  it('after a kill -9: the stale lock is taken over (said in the output) and a history log whose last save was cut short keeps every whole record', async () => {
    const dataDir = join(root, 'crashed');
    await seedHistory(dataDir, ['kept_1', 'kept_2']);
    const crashed = await spawnBot(servers, { dataDir, configFile: settingsFile });
    running.push(crashed);
    await crashed.kill('SIGKILL');
    const lockFile = join(dataDir, 'giftdrop.lock');
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: crashed.pid });
    const history = join(dataDir, 'history.jsonl');
    await truncate(history, (await stat(history)).size - 20); // kept_2's line, torn

    const bot = await spawnBot(servers, { dataDir, configFile: settingsFile });
    running.push(bot);
    const out = bot.output();
    expect(out).toContain(`taking over ${lockFile}: its owner (PID ${crashed.pid}`);
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: bot.pid });
    expect((await bot.health()).status).toBe(200);
    expect(await bot.kill('SIGTERM')).toMatchObject({ code: 0 });
    const repo = await FileDrawRepository.open(dataDir, { readOnly: true });
    expect((await repo.listDraws()).map((r) => r.id)).toEqual(['kept_1']);
    await repo.close();
  }, 60_000);
});

describe('sandbox mode', () => {
  it('holds the lock of the data it uses (DATA_DIR/sandbox): a second demo on the same DATA_DIR exits naming the PID', async () => {
    const dataDir = join(root, 'demo');
    const configFile = join(root, 'demo.json');
    await writeFile(configFile, JSON.stringify({ demo: { drawSeconds: 30, linkSeconds: 30, paceMs: 20 } }));
    const env = { DATA_DIR: dataDir, HTTP_PORT: '0', GIFTDROP_CONFIG: configFile };
    const first = startProcess('node', ['--import', 'tsx', 'src/main.ts'], env);
    try {
      await first.until(/Fourthwall sandbox: http/, 'the demo running', 30_000);
      const lockFile = join(dataDir, 'sandbox', 'giftdrop.lock');
      expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: first.child.pid });
      const second = await runProcess('node', ['--import', 'tsx', 'src/main.ts'], env, 15_000);
      expect(second.code).toBe(1);
      expect(second.stderr.trim()).toBe(
        `giftdrop: ${lockFile} is held by another giftdrop (PID ${first.child.pid}): one bot per DATA_DIR; stop that process or set another DATA_DIR`,
      );
      expect(second.stdout).toBe('');
      // The demo never touches the live data.
      expect(existsSync(join(dataDir, 'history.jsonl'))).toBe(false);
    } finally {
      first.child.kill('SIGINT');
      await first.exited;
    }
    expect(existsSync(join(dataDir, 'sandbox', 'giftdrop.lock'))).toBe(false);
  }, 60_000);
});

describe('a damaged entry journal', () => {
  it('a corrupt line in the middle: reported by draw id and line number; the draw resumes and is drawn among every other entrant', async () => {
    const dataDir = join(root, 'journal');
    const port = await freePort();
    const first = await spawnBot(servers, { dataDir, httpPort: port, configFile: settingsFile });
    running.push(first);
    const { draw } = servers.fourthwall.control.simulateGiftPurchase({
      quantity: 2,
      durationSeconds: 60,
      username: 'journal_fan',
    });
    const drawId = draw['id'] as string;
    await servers.chat.waitFor(
      () => servers.chat.botMessages().some((m) => m.startsWith('🎁 journal_fan gifted')),
      5000,
      'draw announced',
    );
    const viewers = enterAll(servers.chat, logins('jr', 6));
    await waitUntil(() => journaledEntrants(dataDir, drawId).length === 6, 5000, 'six entries journaled');
    await first.kill('SIGKILL');

    const file = join(dataDir, 'journal', `${drawId}.jsonl`);
    const lines = (await readFile(file, 'utf8')).split('\n');
    const lost = parseJournal(lines[2]!).entrants[0]!.userId;
    lines[2] = lines[2]!.slice(0, 20) + '#garbage#';
    await writeFile(file, lines.join('\n'));

    const second = await spawnBot(servers, { dataDir, httpPort: port, configFile: settingsFile });
    running.push(second);
    const report = await second.waitForLine(
      (l) => l.includes(`draw ${drawId}: unreadable line(s) 3`),
      5000,
      'journal report',
    );
    expect(report).toContain('the draw resumes with the other 5 journaled entries');
    expect((await second.health()).body.openDraws).toBe(1);
    servers.chat.inject(servers.chat.broadcaster, '!giveaway end');
    const rec = await waitForDrawStatus(dataDir, drawId);
    expect(rec.status).toBe('finished');
    const others = viewers
      .map((v) => v.userId)
      .filter((id) => id !== lost)
      .sort();
    expect(rec.frozenEntrants!.map((e) => e.userId).sort()).toEqual(others);
    expect(rec.winners).toHaveLength(2);
    for (const w of rec.winners) expect(others).toContain(w.userId);
    expect((await readdir(join(dataDir, 'journal'))).some((n) => n.startsWith(`${drawId}.jsonl.corrupt-`))).toBe(true);
    expect((await second.kill('SIGTERM')).code).toBe(0);
  }, 60_000);
});

describe('partial live credentials', () => {
  it('exit non-zero naming each missing variable, and DATA_DIR is not even created', async () => {
    const dataDir = join(root, 'never-created');
    const env = botProcessEnv(servers, { dataDir });
    env['GIFTDROP_MODE'] = '';
    env['TWITCH_TOKEN'] = '';
    const one = await runMain(env, 20_000);
    expect(one.code).toBe(1);
    expect(one.stderr).toMatch(/live credentials are partly set/);
    expect(one.stderr).toMatch(/TWITCH_TOKEN: required in live mode/);
    expect(one.stdout).toBe('');
    expect(one.stderr).not.toContain(servers.fourthwall.password);

    for (const name of ['TWITCH_USERNAME', 'TWITCH_TOKEN', 'FOURTHWALL_PASSWORD', 'FOURTHWALL_WEBHOOK_SECRET'])
      env[name] = '';
    const many = await runMain(env, 20_000);
    expect(many.code).toBe(1);
    for (const name of ['TWITCH_USERNAME', 'TWITCH_TOKEN', 'FOURTHWALL_PASSWORD', 'FOURTHWALL_WEBHOOK_SECRET'])
      expect(many.stderr).toContain(name);
    expect(many.stderr).not.toMatch(/sandbox mode:/);
    expect(existsSync(dataDir)).toBe(false);
  }, 60_000);
});
