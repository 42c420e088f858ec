/**
 * A link giveaway through the REAL bot process (issue 5): `node --import tsx src/main.ts` in live
 * mode against the local chat server and the Fourthwall sandbox (both in this test process),
 * configured by a JSON settings file. Links stay private by default: they reach the history
 * (`npm run history -- --json`), never the chat transcript nor a pino log line, and with stdout
 * piped (no terminal) not even the operator console, which points to the history instead; with `links.publicInChat` they do reach chat (and
 * still never the log). `npm run verify -- <id>` exits 0 on the finished giveaway.
 */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { SEED_PRODUCT_IDS } from '../src/sandbox/fourthwall/index.js';
import {
  BOT_ENV_NAMES,
  PROJECT_ROOT,
  callsOf,
  enterAll,
  makeTempDir,
  spawnBot,
  startLocalServers,
  waitForDrawStatus,
  writeSettingsFile,
  type BotProcess,
  type LocalServers,
} from './support/e2e-stack.js';
import { QUIET_REMINDERS, type ExportRow } from './support/e2e-link-stack.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** `npm run <script> -- <args>` in the project root with a clean environment; exit code and output. */
function npmRun(
  script: string,
  args: string[],
  dataDir: string,
): Promise<{ code: number | null; out: string; err: string }> {
  const env: Record<string, string> = {};
  for (const name of BOT_ENV_NAMES) env[name] = '';
  Object.assign(env, {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    DATA_DIR: dataDir,
  });
  return new Promise((resolve, reject) => {
    // `--live`: the live bot's data in DATA_DIR (without credentials the scripts would read DATA_DIR/sandbox).
    const child = spawn('npm', ['run', '--silent', script, '--', '--live', ...args], {
      cwd: PROJECT_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out, err }));
  });
}

interface Run {
  servers: LocalServers;
  bot: BotProcess;
  dataDir: string;
}

async function startRun(settings: Record<string, unknown>): Promise<Run> {
  const servers = await startLocalServers({ fourthwall: { drawDurationSeconds: 600 } });
  cleanups.push(() => servers.close());
  const { dir, cleanup } = await makeTempDir('gd-e2e-link-proc-');
  cleanups.push(cleanup);
  const configFile = await writeSettingsFile(dir, { reminders: QUIET_REMINDERS, ...settings });
  const bot = await spawnBot(servers, { dataDir: dir, configFile });
  cleanups.push(() => bot.kill('SIGKILL'));
  return { servers, bot, dataDir: dir };
}

/** Starts `!giveaway start <query> <winners> 30` as a mod, lets `logins` enter, ends it; returns the draw id. */
async function runGiveaway(r: Run, query: string, winners: number, logins: string[]): Promise<string> {
  const chat = r.servers.chat;
  const mod = chat.viewer('modjo', { mod: true });
  const seen = () => chat.botMessages();
  chat.inject(mod, `!giveaway start ${query} ${winners} 30`);
  await chat.waitFor(
    () => seen().some((l) => l.includes(`Giveaway: ${winners}x`)),
    10_000,
    'the giveaway announcement',
  );
  enterAll(chat, logins);
  chat.inject(mod, '!giveaway end');
  await chat.waitFor(() => seen().some((l) => /Anyone can check draw/.test(l)), 10_000, 'the check line');
  return /check draw (\S+):/.exec(seen().find((l) => /Anyone can check draw/.test(l))!)![1]!;
}

/** The process's pino lines (JSON), as opposed to the operator console lines. */
function logLines(bot: BotProcess): string[] {
  return [...bot.stdout, ...bot.stderr].filter((l) => l.trimStart().startsWith('{'));
}

describe('link giveaway through the real bot process', () => {
  it('by name, links private: the history has them, the piped console points there; chat and the log do not; verify exits 0', async () => {
    const r = await startRun({});
    const { fourthwall: fw, chat } = r.servers;
    const logins = ['ana', 'ben', 'cai', 'dee'];
    const id = await runGiveaway(r, 'Giftdrop Hoodie', 2, logins);
    const record = await waitForDrawStatus(r.dataDir, id, ['finished']);
    expect(record.kind).toBe('link-giveaway');
    expect(record.offer.id).toBe(SEED_PRODUCT_IDS.hoodie);
    expect(record.winners).toHaveLength(2);

    // Exactly one package, with one link per winner.
    expect(callsOf(fw, 'createGiveawayLinks').map((c) => c.status)).toEqual([200]);
    const pkgs = [...fw.state.packages.values()];
    expect(pkgs).toHaveLength(1);
    const links = pkgs[0]!.giveawayLinks;
    expect(links).toHaveLength(2);

    const line = chat.botMessages().find((l) => l.includes('congratulations'))!;
    for (const w of record.winners) expect(line).toContain(`@${w.login}`);
    expect(line).toContain('The streamer will send you your redeem link.');

    // stdout is not a terminal: the operator console names each winner and where the link is,
    // without the link (the history has it).
    for (const w of record.winners) {
      const line = await r.bot.waitForLine(
        (l) => l.startsWith('[giftdrop]') && l.includes(`@${w.login}`) && l.includes(`npm run history -- --draw ${id}`),
        5000,
        `the console line for ${w.login}`,
      );
      expect(line).not.toContain(w.redeemUrl!);
    }
    // Never in chat, never in a log line.
    const transcript = chat.transcript.map((e) => `${e.text} ${e.attempted ?? ''}`).join('\n');
    const log = logLines(r.bot).join('\n');
    expect(logLines(r.bot).length).toBeGreaterThan(3);
    expect(log).toContain('winners picked');
    expect(transcript).not.toContain('/gifts/');
    for (const l of links) {
      expect(transcript).not.toContain(l.id);
      expect(log).not.toContain(l.link);
      expect(log).not.toContain(l.id);
    }
    // And no credential either.
    for (const secret of [fw.password, fw.webhookSecret, chat.token]) expect(r.bot.output()).not.toContain(secret);

    // The history export (the real script) has the links; verify (the real script) exits 0.
    const history = await npmRun('history', ['--json'], r.dataDir);
    expect(history.code).toBe(0);
    const row = (JSON.parse(history.out) as ExportRow[]).find((x) => x.id === id)!;
    expect(row).toMatchObject({
      kind: 'link-giveaway',
      status: 'finished',
      entrants: logins.length,
      source: { packageId: pkgs[0]!.packageId },
    });
    expect(row.winners.map((w) => w.redeemUrl).sort()).toEqual(links.map((l) => l.link).sort());
    const verify = await npmRun('verify', [id], r.dataDir);
    expect(verify.code).toBe(0);

    const exit = await r.bot.kill('SIGTERM');
    expect(exit.code).toBe(0);
  });

  it('with links.publicInChat the winners line carries the links; the log still never does', async () => {
    const r = await startRun({ links: { publicInChat: true } });
    const { fourthwall: fw, chat } = r.servers;
    const id = await runGiveaway(r, 'giftdrop-mug', 2, ['ana', 'ben', 'cai']);
    const record = await waitForDrawStatus(r.dataDir, id, ['finished']);
    const links = [...fw.state.packages.values()][0]!.giveawayLinks;
    const line = chat.botMessages().find((l) => l.includes('congratulations'))!;
    expect(line).toContain('Redeem here:');
    for (const w of record.winners) expect(line).toContain(`@${w.login}: ${w.redeemUrl}`);
    await r.bot.waitForLine(
      (l) =>
        l.startsWith('[giftdrop]') && l.includes(`@${record.winners[1]!.login}`) && l.includes('links are not printed'),
      5000,
      'the console lines',
    );
    expect(r.bot.stdout.some((l) => l.includes('/gifts/'))).toBe(false);
    const log = logLines(r.bot).join('\n');
    for (const l of links) {
      expect(log).not.toContain(l.link);
      expect(log).not.toContain(l.id);
    }
  });
});
