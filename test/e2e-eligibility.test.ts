/**
 * Eligibility and luck end to end (issue 5), through chat roles as Twitch sends them (badges,
 * badge-info, mod and first-msg tags from the local chat server, parsed by the bot's tmi.js
 * client): every configured rule excludes exactly the entrant it targets, the winner cooldown
 * works across two bot runs from the history, the broadcaster and the bot never become
 * entrants, subscriber luck is recorded as weights in the frozen entrant list, and `verify`
 * recomputes the weighted draws.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DrawRecord } from '../src/giveaway/model.js';
import type { SimViewerOptions } from '../src/sandbox/chat/index.js';
import { drawSettled, nextDrawOpened, startLinkStack, tempDir, type LinkStack } from './support/e2e-link-stack.js';
import { rm } from 'node:fs/promises';

const stacks: LinkStack[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of stacks.splice(0)) await s.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function stackOn(dataDir: string, settings: Record<string, unknown>): Promise<LinkStack> {
  const s = await startLinkStack({ dataDir, settings });
  stacks.push(s);
  return s;
}

/** Runs a mug link giveaway for `winners` with these entrants; returns the finished record. */
async function runGiveaway(
  s: LinkStack,
  winners: number,
  entrants: readonly [login: string, opts: SimViewerOptions][],
): Promise<DrawRecord> {
  const opened = nextDrawOpened(s);
  const from = s.mark();
  s.say(s.mod, `!giveaway start giftdrop-mug ${winners} 60`);
  const open = await opened;
  await s.nextBotLine(/Giveaway: \d+x Giftdrop Mug/, from);
  for (const [login, opts] of entrants) s.say(s.viewer(login, opts), '!enter');
  // The broadcaster and the bot's own account type !enter too: never entrants.
  s.say(s.chat.broadcaster, '!enter');
  s.say(s.viewer(s.chat.botLogin), '!enter');
  const settled = drawSettled(s, open.id);
  s.say(s.mod, '!giveaway end');
  const { event, record } = await settled;
  expect(event).toBe('draw-finished');
  await s.idle();
  return s.record(record.id);
}

const SUB12: SimViewerOptions = { subscriber: true, subMonths: 12 };

describe('eligibility rules', () => {
  it('each rule excludes exactly its entrant; the cooldown holds across two bot runs from the history', async () => {
    const dataDir = await tempDir();
    dirs.push(dataDir);
    const settings = {
      eligibility: {
        excludeModerators: true,
        subscribersOnly: true,
        minSubMonths: 3,
        excludeLogins: ['NightBot'],
        winnerCooldownHours: 1,
        excludeFirstTimeChatters: true,
      },
    };

    // First run: champ wins a giveaway alone.
    const first = await stackOn(dataDir, settings);
    const d1 = await runGiveaway(first, 1, [['champ', SUB12]]);
    expect(d1.winners.map((w) => w.login)).toEqual(['champ']);
    await first.close();
    stacks.length = 0;

    // Second run of the bot on the same history: every entrant but two breaks exactly one rule.
    const s = await stackOn(dataDir, settings);
    const entrants: [string, SimViewerOptions][] = [
      ['champ', SUB12], // won within the cooldown (read from the history)
      ['modsub', { ...SUB12, mod: true }], // moderator
      ['plainviewer', { vip: true }], // not a subscriber
      ['newsub', { subscriber: true, subMonths: 1 }], // below the minimum months
      ['nightbot', SUB12], // excluded login (configured in another case)
      ['firsttimer', { ...SUB12, firstMessage: true }], // first message in the channel
      ['okay_one', SUB12],
      ['okay_two', { subscriber: true, subMonths: 3 }],
    ];
    const d2 = await runGiveaway(s, 10, entrants);
    expect(d2.entrants).toBe(entrants.length);
    expect(d2.winners.map((w) => w.login).sort()).toEqual(['okay_one', 'okay_two']);
    expect(d2.frozenEntrants!.map((e) => e.login).sort()).toEqual(['okay_one', 'okay_two']);
    expect(d2.rules).toMatchObject({
      excludeBroadcaster: true,
      excludeBot: true,
      excludeModerators: true,
      subscribersOnly: true,
      minSubMonths: 3,
      winnerCooldownHours: 1,
      excludeFirstTimeChatters: true,
      excluded: {
        'winner-cooldown': 1,
        moderator: 1,
        'not-subscriber': 1,
        'sub-months': 1,
        'excluded-login': 1,
        'first-time-chatter': 1,
      },
    });
    // Links for exactly the eligible winners, not for the 10 asked.
    const pkgs = [...s.fw.state.packages.values()];
    expect(pkgs).toHaveLength(1);
    expect(pkgs[0]!.giveawayLinks).toHaveLength(2);
    const line = await s.nextBotLine(/congratulations/);
    expect(line).not.toMatch(
      new RegExp(`@(${s.chat.channel}|${s.chat.botLogin}|champ|modsub|plainviewer|newsub|nightbot|firsttimer)\\b`),
    );
    expect((await s.verify(d2.id)).code).toBe(0);

    // The history export holds both draws, newest first.
    const rows = await s.history();
    expect(rows.map((r) => r.id)).toEqual([d2.id, d1.id]);
  });

  it('with the rules off the same entrants all win; the broadcaster and the bot still never do', async () => {
    const dataDir = await tempDir();
    dirs.push(dataDir);
    const s = await stackOn(dataDir, {});
    const entrants: [string, SimViewerOptions][] = [
      ['modsub', { ...SUB12, mod: true }],
      ['plainviewer', { vip: true }],
      ['newsub', { subscriber: true, subMonths: 1 }],
      ['nightbot', SUB12],
      ['firsttimer', { ...SUB12, firstMessage: true }],
    ];
    const d1 = await runGiveaway(s, 10, entrants);
    expect(d1.entrants).toBe(entrants.length);
    expect(d1.winners.map((w) => w.login).sort()).toEqual(entrants.map(([l]) => l).sort());
    expect(d1.rules?.['excluded']).toEqual({});
    // A second draw right away: no cooldown configured, so the same people can win again.
    const d2 = await runGiveaway(s, 10, entrants);
    expect(d2.winners).toHaveLength(entrants.length);
    for (const d of [d1, d2]) {
      const logins = d.winners.map((w) => w.login);
      expect(logins).not.toContain(s.chat.channel);
      expect(logins).not.toContain(s.chat.botLogin);
      expect((await s.verify(d.id)).code).toBe(0);
    }
  });
});

describe('subscriber luck', () => {
  it("records each entrant's weight in the frozen list (multiplier and month tiers); verify recomputes", async () => {
    const dataDir = await tempDir();
    dirs.push(dataDir);
    const s = await stackOn(dataDir, {
      luck: {
        subscriberMultiplier: 2,
        tiers: [
          { minMonths: 6, weight: 4 },
          { minMonths: 12, weight: 6 },
        ],
      },
    });
    const entrants: [string, SimViewerOptions][] = [
      ['plainviewer', {}],
      ['vipviewer', { vip: true }],
      ['sub_one', { subscriber: true, subMonths: 1 }],
      ['sub_six', { subscriber: true, subMonths: 6 }],
      ['sub_year', { subscriber: true, subMonths: 12 }],
      ['sub_long', { subscriber: true, subMonths: 40 }],
    ];
    const expected: Record<string, number> = {
      plainviewer: 1,
      vipviewer: 1,
      sub_one: 2,
      sub_six: 4,
      sub_year: 6,
      sub_long: 6,
    };
    for (const winners of [1, 3]) {
      const d = await runGiveaway(s, winners, entrants);
      const weights = Object.fromEntries(d.frozenEntrants!.map((e) => [e.login, e.weight]));
      expect(weights).toEqual(expected);
      expect(d.rules?.['luck']).toEqual({
        subscriberMultiplier: 2,
        tiers: [
          { minMonths: 6, weight: 4 },
          { minMonths: 12, weight: 6 },
        ],
      });
      expect(d.winners).toHaveLength(winners);
      expect(new Set(d.winners.map((w) => w.login)).size).toBe(winners);
      const v = await s.verify(d.id);
      expect(v.err).toBe('');
      expect(v.code).toBe(0);
    }
  });
});
