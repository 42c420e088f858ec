/**
 * `npm start` as the user runs it (live mode against the local Fourthwall sandbox and chat server,
 * stdout and stderr piped: no terminal), one data directory for three runs:
 * 1. a gift draw and a link giveaway run to the end: neither stream carries a link, a redeem URL,
 *    a token or a password, and the console says where the links are instead; then a draw is
 *    left open and SIGTERM goes to the npm PID;
 * 2. the next start resumes that draw (a new entrant joins it); SIGINT to the npm PID;
 * 3. the next start resumes it again; SIGHUP to the npm PID (npm does not forward it: the bot
 *    notices its parent is gone).
 * Each time the bot is gone within 10 s: /healthz stops answering and no process that was below
 * the npm PID remains (walked in /proc). Signals go to that one PID, never to a process group.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUIET_REMINDERS } from './support/e2e-link-stack.js';
import {
  enterAll,
  journaledEntrants,
  logins,
  makeTempDir,
  readDraw,
  setShopLive,
  spawnBot,
  startLocalServers,
  waitForDrawStatus,
  waitUntil,
  writeSettingsFile,
  type BotProcess,
  type LocalServers,
} from './support/e2e-stack.js';
import { alive, descendants } from './support/process-table.js';

/** The stop the README promises. */
const STOP_WITHIN_MS = 10_000;

async function healthAnswers(bot: BotProcess): Promise<boolean> {
  try {
    await bot.health();
    return true;
  } catch {
    return false;
  }
}

let servers: LocalServers;
let dataDir: string;
let configFile: string;
let cleanup: () => Promise<void>;
const bots: BotProcess[] = [];
/** Every process seen below an npm PID (killed in afterAll if a failed test left one). */
const spawned = new Set<number>();
let openDrawId: string;

async function start(): Promise<BotProcess> {
  const bot = await spawnBot(servers, { dataDir, configFile, npmStart: true, startTimeoutMs: 60_000 });
  bots.push(bot);
  for (const p of descendants(bot.pid)) spawned.add(p);
  return bot;
}

/** Sends `signal` to the npm PID only and checks the whole tree is gone within the limit. */
async function stopsCleanly(bot: BotProcess, signal: NodeJS.Signals): Promise<void> {
  const below = descendants(bot.pid);
  expect(below.length, 'npm runs the bot below it').toBeGreaterThan(0);
  const t0 = performance.now();
  process.kill(bot.pid, signal);
  await waitUntil(
    () => !alive(bot.pid) && below.every((p) => !alive(p)),
    STOP_WITHIN_MS,
    `npm and its ${below.length} descendant(s) gone after ${signal}`,
    50,
  );
  expect(performance.now() - t0).toBeLessThan(STOP_WITHIN_MS);
  expect(await healthAnswers(bot)).toBe(false);
  await bot.exited;
  // the bot's own clean shutdown ran (not a kill): its last log line
  expect(
    bot.stderr.some((l) => l.includes('"msg":"stopped"')),
    bot.output().slice(-2000),
  ).toBe(true);
}

beforeAll(async () => {
  servers = await startLocalServers({ fourthwall: { drawDurationSeconds: 2 } });
  const temp = await makeTempDir('giftdrop-npm-start-');
  dataDir = temp.dir;
  cleanup = temp.cleanup;
  configFile = await writeSettingsFile(dataDir, { reminders: QUIET_REMINDERS });
}, 60_000);

afterAll(async () => {
  for (const b of bots) await b.kill('SIGKILL');
  for (const p of spawned) if (alive(p)) process.kill(p, 'SIGKILL');
  await servers?.close();
  await cleanup?.();
});

describe('npm start, stdout and stderr piped', () => {
  it('runs a gift draw and a link giveaway without printing a link or a secret; the console points to them; SIGTERM stops it', async () => {
    const bot = await start();
    const { fourthwall: fw, chat } = servers;
    setShopLive(servers);
    // a gift draw, to the end
    const { draw } = fw.control.simulateGiftPurchase({ quantity: 1, username: 'kind_fan' });
    const giftDrawId = draw['id'] as string;
    await chat.waitFor(
      () => chat.botMessages().some((m) => m.startsWith('🎁 kind_fan gifted')),
      10_000,
      'gift draw announced',
    );
    enterAll(chat, logins('gd', 3));
    const gift = await waitForDrawStatus(dataDir, giftDrawId, ['finished', 'failed']);
    expect(gift.status).toBe('finished');
    // a link giveaway, to the end
    const mod = chat.viewer('modjo', { mod: true });
    chat.inject(mod, '!giveaway start giftdrop-mug 1 30');
    await chat.waitFor(() => chat.botMessages().some((l) => l.includes('Giveaway: 1x')), 10_000, 'giveaway announced');
    enterAll(chat, logins('lg', 3));
    chat.inject(mod, '!giveaway end');
    await chat.waitFor(
      () => chat.botMessages().filter((l) => /Anyone can check draw/.test(l)).length === 2,
      10_000,
      'both check lines',
    );
    const linkId = /check draw (\S+):/.exec(chat.botMessages().filter((l) => /Anyone can check draw/.test(l))[1]!)![1]!;
    const link = await waitForDrawStatus(dataDir, linkId, ['finished', 'failed']);
    expect(link.status).toBe('finished');
    const winners = [...gift.winners, ...link.winners];
    expect(winners.every((w) => w.redeemUrl?.includes('/gifts/'))).toBe(true);

    // the console line for each winner says where the link is, without it
    for (const [rec, w] of [
      [gift, gift.winners[0]!],
      [link, link.winners[0]!],
    ] as const) {
      await bot.waitForLine(
        (l) =>
          l.startsWith('[giftdrop] ') && l.includes(`@${w.login}`) && l.includes(`npm run history -- --draw ${rec.id}`),
        5000,
        `the pointer line for ${w.login}`,
      );
    }

    // without a terminal the live console is the plain transcript: the bot's lines, no colour codes
    expect(bot.stdout.some((l) => /^\[chat\] bot> \w+: .*congratulations/.test(l))).toBe(true);
    expect(bot.stdout.join('\n')).not.toMatch(/\u001b\[/);

    // a draw left open, then SIGTERM to the npm PID
    const open = fw.control.simulateGiftPurchase({ quantity: 1, durationSeconds: 120, username: 'late_fan' });
    openDrawId = open.draw['id'] as string;
    await chat.waitFor(
      () => chat.botMessages().some((m) => m.startsWith('🎁 late_fan gifted')),
      10_000,
      'open draw announced',
    );
    enterAll(chat, logins('stay', 2));
    await waitUntil(() => journaledEntrants(dataDir, openDrawId).length === 2, 5000, 'entries journaled');
    await stopsCleanly(bot, 'SIGTERM');
    expect((await readDraw(dataDir, openDrawId))!.status).toBe('open');

    // neither stream, at any point, carried a link, a redeem URL, a token or a password
    const text = [...bot.stdout, ...bot.stderr].join('\n');
    expect(bot.stderr.filter((l) => l.startsWith('{')).length).toBeGreaterThan(10);
    expect(text).not.toContain('/gifts/');
    expect(text).not.toMatch(/redeem\?|token=/);
    for (const w of winners) expect(text).not.toContain(w.redeemUrl!);
    for (const secret of [fw.password, fw.webhookSecret, chat.token]) {
      expect(secret.length).toBeGreaterThan(8);
      expect(text).not.toContain(secret);
    }
    // logs on stderr, the console on stdout
    expect(bot.stdout.some((l) => l.startsWith('{'))).toBe(false);
  });

  it('the next start resumes the open draw; SIGINT to the npm PID stops it', async () => {
    const bot = await start();
    expect((await bot.health()).body.openDraws).toBe(1);
    enterAll(servers.chat, ['newcomer']);
    await waitUntil(() => journaledEntrants(dataDir, openDrawId).length === 3, 5000, 'the resumed draw takes an entry');
    await stopsCleanly(bot, 'SIGINT');
    expect((await readDraw(dataDir, openDrawId))!.status).toBe('open');
  });

  it('and again; SIGHUP to the npm PID (which npm does not forward) stops it too', async () => {
    const bot = await start();
    expect((await bot.health()).body.openDraws).toBe(1);
    expect(
      journaledEntrants(dataDir, openDrawId)
        .map((e) => e.login)
        .sort(),
    ).toEqual(['newcomer', 'stay0', 'stay1']);
    await stopsCleanly(bot, 'SIGHUP');
    expect((await readDraw(dataDir, openDrawId))!.status).toBe('open');
  });
});
