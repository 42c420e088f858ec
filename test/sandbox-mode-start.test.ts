/**
 * The real `npm start` entry without credentials and without a terminal: sandbox mode plays the
 * scripted stream against the in-process Fourthwall sandbox and chat server and exits 0; the
 * transcript shows the announcement, the entries, the winners and the link giveaway; links only
 * ever appear on the private console lines; `npm run history -- --json` then shows both draws
 * finished with the winners chat announced, written to DATA_DIR/sandbox with mode "sandbox", and
 * `npm run verify` confirms the gift draw.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess, type ProcessResult } from './support/sandbox-mode-spawn.js';

let dir: string;
let run: ProcessResult;
let env: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'giftdrop-sandbox-start-'));
  const configFile = join(dir, 'giftdrop.json');
  writeFileSync(configFile, JSON.stringify({ demo: { drawSeconds: 3, linkSeconds: 3, paceMs: 20 } }));
  env = { DATA_DIR: join(dir, 'data'), HTTP_PORT: '0', GIFTDROP_CONFIG: configFile };
  run = await runProcess('node', ['--import', 'tsx', 'src/main.ts'], env, 90_000);
}, 120_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const chatLines = () => run.stdout.split('\n').filter((l) => l.startsWith('[chat]'));
const botLines = () => chatLines().filter((l) => l.startsWith('[chat] bot> giftdrop_bot:'));
const privateLines = () => run.stdout.split('\n').filter((l) => l.startsWith('[private]'));

function winnersIn(line: string | undefined): string[] {
  return [...(line ?? '').matchAll(/@([a-z0-9_]+)/g)].map((m) => m[1]!).sort();
}

describe('npm start without credentials and without a terminal', () => {
  it('plays the scripted stream and exits 0', () => {
    expect(run.code, `stderr:\n${run.stderr}\nstdout:\n${run.stdout}`).toBe(0);
    expect(run.stdout).toContain('giftdrop sandbox mode');
    expect(run.stdout).toMatch(/^▶ The broadcaster goes live/m);
    expect(run.stdout).toMatch(/^▶ A supporter \(generous_fan\) buys 3 gifted items/m);
    expect(run.stdout).toMatch(/^▶ Supporters order merch/m);
    expect(run.stdout).toMatch(/^✔ Done: 3 draws are in the history/m);
    // No pino output on stdout: logs stay on stderr at warn level.
    expect(run.stdout).not.toMatch(/"level":/);
  });

  it('shows the announcement, the entries (a mod, subscribers, one twice), winners and the link giveaway in chat', () => {
    const bot = botLines();
    expect(bot.some((l) => /LIVE/.test(l))).toBe(true);
    expect(bot.some((l) => /generous_fan gifted 3x .*!enter/.test(l))).toBe(true);
    const enters = chatLines().filter((l) => / !enter$|: !enter$/.test(l));
    expect(enters.length).toBeGreaterThanOrEqual(20);
    expect(chatLines()).toContain('[chat] mod_mia (mod): !enter');
    expect(chatLines().filter((l) => l === '[chat] eager_eli: !enter')).toHaveLength(2);
    expect(chatLines().some((l) => /^\[chat\] \w+ \(sub \d+ months\): !enter$/.test(l))).toBe(true);
    expect(chatLines().some((l) => /^\[chat\] chatty_cathy: (?!!enter)/.test(l))).toBe(true);
    expect(chatLines()).toContain('[chat] giftdrop_demo (broadcaster): !giveaway start Giftdrop Hoodie 2 5');
    expect(bot.some((l) => /Giveaway: 2x Giftdrop Hoodie/.test(l))).toBe(true);
    // One supporter alert, and the merch train's giveaway (every 2nd order: a mug).
    expect(bot.some((l) => /merch_enjoyer just bought Giftdrop T-Shirt\. Thank you!/.test(l))).toBe(true);
    expect(bot.some((l) => /All aboard the merch train! Order #2 unlocked a giveaway of Giftdrop Mug\./.test(l))).toBe(
      true,
    );
    expect(bot.some((l) => /Giveaway: 1x Giftdrop Mug/.test(l))).toBe(true);
    const winners = bot.filter((l) => /congratulations/.test(l));
    expect(winners).toHaveLength(3);
    expect(winnersIn(winners[0])).toHaveLength(3);
    expect(winnersIn(winners[1])).toHaveLength(1);
    expect(winnersIn(winners[2])).toHaveLength(2);
  });

  it('the transcript keeps its promises and its order: viewers answer announcements already in chat, the promised thank-you comes, nothing runs after Done', () => {
    const lines = run.stdout.split('\n');
    // every giveaway's first !enter comes after the giveaway's announcement
    for (const announced of [/Giveaway: 1x Giftdrop Mug/, /Giveaway: 2x Giftdrop Hoodie/]) {
      const at = lines.findIndex((l) => l.startsWith('[chat] bot>') && announced.test(l));
      const before = lines.slice(0, at);
      const step = before.findLastIndex((l) => l.startsWith('▶'));
      expect(
        before.slice(step).filter((l) => /^\[chat\] (?!bot>).*!enter/.test(l)),
        `!enter before ${announced}`,
      ).toEqual([]);
    }
    // the narration promises the next buyer's thank-you: it is said
    expect(run.stdout).toMatch(/thanked together in one line when that window ends/);
    expect(botLines().filter((l) => /just bought .*Thank you!/.test(l)).length).toBeGreaterThanOrEqual(2);
    // Done is the last step: only the stop's own line follows it
    const done = lines.findIndex((l) => l.startsWith('✔ Done'));
    expect(lines.slice(done + 1).filter((l) => /^[▶✔✖]|^\[chat\]/.test(l))).toEqual([]);
    expect(lines.slice(done + 1).join('\n')).toMatch(/^ {2}Stopped\./m);
  });

  it("links never reach stdout when it is not a terminal: the private lines say where they are; never in chat (only the bot's own verify and claim pages)", () => {
    const privates = privateLines();
    expect(privates).toHaveLength(6);
    for (const l of privates) {
      expect(l).toMatch(
        /^\[private\] operator console: \[Giftdrop (T-Shirt|Mug|Hoodie)\] link for @\w+( \(.*\))?: \[link not shown\] \(links are not printed because stdout is not a terminal: see the dashboard, or run npm run history -- --draw \S+\)$/,
      );
      expect(l).not.toMatch(/https?:\/\/|\/gifts\/gft_/);
    }
    for (const l of chatLines()) {
      expect(l).not.toMatch(/\/gifts\//);
      // The only addresses in chat are the bot's own public pages (the demo serves them locally): verify and claim.
      expect(l.replace(/http:\/\/127\.0\.0\.1:\d+\/(verify\/[\w-]+|claim)\b/g, '')).not.toMatch(/https?:\/\//);
    }
  });

  it('the history holds the three draws (gift draw, merch train, link giveaway), finished, with the winners chat announced; verify confirms the gift draw', async () => {
    const hist = await runProcess('npm', ['run', '--silent', 'history', '--', '--json'], { DATA_DIR: env.DATA_DIR! });
    expect(hist.code, hist.stderr).toBe(0);
    const draws = JSON.parse(hist.stdout) as {
      id: string;
      kind: string;
      status: string;
      mode: string;
      gifts: number;
      entrants: number;
      winners: { login: string }[];
    }[];
    expect(draws.map((d) => d.kind)).toEqual(['link-giveaway', 'link-giveaway', 'gift-draw']);
    // Sandbox data lives in DATA_DIR/sandbox, apart from live data, and says so; the lock is released.
    for (const d of draws) expect(d.mode).toBe('sandbox');
    expect(existsSync(join(env.DATA_DIR!, 'sandbox', 'history.jsonl'))).toBe(true);
    expect(existsSync(join(env.DATA_DIR!, 'history.jsonl'))).toBe(false);
    expect(existsSync(join(env.DATA_DIR!, 'sandbox', 'giftdrop.lock'))).toBe(false);
    for (const d of draws) expect(d.status).toBe('finished');
    const [link, train, gift] = draws as [(typeof draws)[0], (typeof draws)[0], (typeof draws)[0]];
    expect(train.winners.map((w) => w.login).sort()).toEqual(
      winnersIn(botLines().find((l) => /Mug: congratulations/.test(l))),
    );
    expect(gift.entrants).toBe(20);
    expect(gift.winners.map((w) => w.login).sort()).toEqual(
      winnersIn(botLines().find((l) => /T-Shirt: congratulations/.test(l))),
    );
    expect(link.winners.map((w) => w.login).sort()).toEqual(
      winnersIn(botLines().find((l) => /Hoodie: congratulations/.test(l))),
    );

    const verify = await runProcess('npm', ['run', '--silent', 'verify', '--', gift.id], { DATA_DIR: env.DATA_DIR! });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  }, 60_000);
});
