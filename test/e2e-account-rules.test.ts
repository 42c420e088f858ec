/**
 * Account rules from the Twitch API at close (issues 13 and 28), end to end: the whole local stack
 * (Fourthwall sandbox, chat server with the local Helix API on its port, the real bot) with
 * follows and account ages set in the Helix sandbox. Checks that followers-only, the minimum
 * follow age and the minimum account age set aside exactly the picks that fail them (recorded in
 * pick order with their reasons, the frozen list staying the chat-eligible entrants) and `verify`
 * replays the draw, that only picks are looked up (one GET /users per batch, cached for the next
 * draw), that an unreachable API follows the `uncheckable` rule and is announced, and that
 * `!giveaway` gives one summary line.
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DrawRecord } from '../src/giveaway/model.js';
import {
  drawSettled,
  nextDrawOpened,
  startLinkStack,
  tempDir,
  type LinkStack,
  type LinkStackOptions,
} from './support/e2e-link-stack.js';

const DAY = 86_400_000;
const stacks: LinkStack[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of stacks.splice(0)) await s.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function stackWith(settings: Record<string, unknown>, helix?: LinkStackOptions['helix']): Promise<LinkStack> {
  const dataDir = await tempDir();
  dirs.push(dataDir);
  const s = await startLinkStack({ dataDir, settings, ...(helix ? { helix } : {}) });
  stacks.push(s);
  return s;
}

async function runGiveaway(s: LinkStack, winners: number, logins: readonly string[]): Promise<DrawRecord> {
  const opened = nextDrawOpened(s);
  const from = s.mark();
  s.say(s.mod, `!giveaway start giftdrop-mug ${winners} 60`);
  const open = await opened;
  await s.nextBotLine(/Giveaway: \d+x Giftdrop Mug/, from);
  // Chat lines reach the bot in order on one socket: every !enter is in before the mod's end.
  s.enter(logins);
  const settled = drawSettled(s, open.id);
  s.say(s.mod, '!giveaway end');
  const { record } = await settled;
  expect(record.entrants).toBe(logins.length);
  await s.idle();
  return s.record(record.id);
}

describe('account rules from the Twitch API', () => {
  it('followers only, follow age and account age exclude exactly their entrants; recorded; verify recomputes', async () => {
    const s = await stackWith(
      { eligibility: { followersOnly: true, minFollowDays: 7, minAccountDays: 30 } },
      {
        prepare(helix, chat) {
          const now = Date.now();
          const b = chat.channelId;
          const id = (l: string) => chat.viewer(l).userId;
          helix.setFollow(b, id('loyal'), now - 100 * DAY);
          helix.setFollow(b, id('loyal2'), now - 8 * DAY);
          helix.setFollow(b, id('newfollow'), now - 2 * DAY);
          helix.setFollow(b, id('freshacct'), now - 10 * DAY);
          helix.setUser(id('freshacct'), 'freshacct', now - 3 * DAY);
        },
      },
    );
    const from = s.mark();
    const d = await runGiveaway(s, 10, ['loyal', 'loyal2', 'stranger', 'newfollow', 'freshacct']);
    expect(d.entrants).toBe(5);
    expect(d.winners.map((w) => w.login).sort()).toEqual(['loyal', 'loyal2']);
    expect(d.winners.every((w) => w.accountCheck?.result === 'checked')).toBe(true);
    // The frozen list is the chat-eligible crowd; the account rules act on the picks.
    expect(d.frozenEntrants!.map((e) => e.login).sort()).toEqual([
      'freshacct',
      'loyal',
      'loyal2',
      'newfollow',
      'stranger',
    ]);
    const account = d.rules!['account'] as Record<string, unknown>;
    expect(account).toMatchObject({
      followersOnly: true,
      minFollowDays: 7,
      minAccountDays: 30,
      uncheckable: 'allow',
      checked: 5,
      unchecked: 0,
      setAside: 3,
    });
    expect(d.setAside!.map((a) => [a.login, a.reason]).sort()).toEqual([
      ['freshacct', 'account-age'],
      ['newfollow', 'follow-age'],
      ['stranger', 'not-follower'],
    ]);
    // In pick order, each at its position of the sequence, with the time of Twitch's answer.
    const positions = d.setAside!.map((a) => a.pick);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect([...positions, ...d.winners.map((w) => w.pick)].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4]);
    for (const a of d.setAside!) expect(Date.parse(a.at)).toBeGreaterThan(0);
    const announced = await s.nextBotLine(/entry check/, from);
    expect(announced).toMatch(/3 picks set aside \(/);
    expect(announced).toMatch(/1 not following the channel/);
    expect(announced).toMatch(/1 following for less than 7 days/);
    expect(announced).toMatch(/1 account younger than 30 days/);
    expect(announced).toMatch(/8 of 10 prizes \(Giftdrop Mug\) not filled: nobody eligible was left\.$/);
    expect((await s.verify(d.id)).code).toBe(0);

    // !giveaway: the status and ONE summary line of why entrants were left out.
    const mark = s.mark();
    s.say(s.viewer('stranger'), '!giveaway');
    const status = await s.nextBotLine(/entry check/, mark);
    expect(s.botLines(mark).filter((l) => /entry check/.test(l))).toHaveLength(1);
    expect(status).toMatch(/not following the channel/);
  });

  it('a token without moderator:read:followers: warned at start, entrants unchecked with the reason, let in', async () => {
    const dataDir = await tempDir();
    dirs.push(dataDir);
    const s = await startLinkStack({
      dataDir,
      settings: { eligibility: { followersOnly: true } },
      chat: { scopes: ['chat:read', 'chat:edit'] },
    });
    stacks.push(s);
    await vi.waitFor(() => expect(s.log.text()).toMatch(/TWITCH_TOKEN lacks the scope moderator:read:followers/));
    const from = s.mark();
    const d = await runGiveaway(s, 2, ['alpha', 'beta']);
    expect(d.winners).toHaveLength(2);
    expect(d.rules!['account']).toMatchObject({
      checked: 0,
      unchecked: 2,
      problem: expect.stringMatching(/HTTP 403 \(Missing scope: moderator:read:followers\)/),
    });
    expect(d.winners.map((w) => w.accountCheck?.result)).toEqual(['unchecked', 'unchecked']);
    expect(await s.nextBotLine(/entry check/, from)).toMatch(
      /2 picks could not be checked with Twitch \(.*\) and were let in/,
    );
    expect((await s.verify(d.id)).code).toBe(0);
  });

  it('looks up only the picks (one GET /users per batch), with a cache for the next draw', async () => {
    const s = await stackWith({ eligibility: { minAccountDays: 30 } });
    const logins = Array.from({ length: 130 }, (_, i) => `viewer${i}`);
    const d = await runGiveaway(s, 1, logins);
    expect(d.frozenEntrants).toHaveLength(130);
    expect(d.winners).toHaveLength(1);
    const userCalls = s.stack.helix.calls.filter((c) => c.path === '/users');
    expect(userCalls).toHaveLength(1); // the first batch of picks, not the 130 entrants
    const asked = new URLSearchParams(userCalls[0]!.query).getAll('id');
    expect(asked.length).toBeLessThanOrEqual(2);
    expect(asked).toContain(d.winners[0]!.userId);
    expect(s.stack.helix.calls.some((c) => c.path === '/channels/followers')).toBe(false); // no follow rule: not asked
    expect(d.rules!['account']).toMatchObject({ checked: 1, unchecked: 0, setAside: 0 });

    // The same crowd again: the same key would give other picks, but answers already held are not asked again.
    const before = s.stack.helix.calls.length;
    const again = await runGiveaway(s, 1, logins.slice(0, 10));
    const newIds = s.stack.helix.calls.slice(before).flatMap((c) => new URLSearchParams(c.query).getAll('id'));
    expect(newIds.filter((id) => asked.includes(id))).toEqual([]);
    expect(again.winners).toHaveLength(1);
  });

  it('the API down: entrants that cannot be checked follow the `uncheckable` rule, announced and recorded', async () => {
    const s = await stackWith({ eligibility: { followersOnly: true, uncheckable: 'exclude' } });
    s.stack.helix.setDown(true);
    const from = s.mark();
    const d = await runGiveaway(s, 3, ['alpha', 'beta']);
    expect(d.winners).toEqual([]);
    expect(d.status).toBe('finished');
    const account = d.rules!['account'] as Record<string, unknown>;
    expect(account).toMatchObject({ uncheckable: 'exclude', checked: 0, unchecked: 2, setAside: 2 });
    expect(d.setAside!.map((a) => a.reason)).toEqual(['unchecked', 'unchecked']);
    expect(String(account['problem'])).toMatch(/Twitch API answered HTTP 503/);
    expect(await s.nextBotLine(/entry check/, from)).toMatch(
      /2 picks could not be checked with Twitch \(Twitch API: Twitch API answered HTTP 503.*\) and were set aside/,
    );
    expect((await s.verify(d.id)).code).toBe(0);

    // The same outage with `allow`: everyone is let in, and that is said too.
    const t = await stackWith({ eligibility: { followersOnly: true, uncheckable: 'allow' } });
    t.stack.helix.setDown(true);
    const mark = t.mark();
    const d2 = await runGiveaway(t, 3, ['gamma', 'delta']);
    expect(d2.winners.map((w) => w.login).sort()).toEqual(['delta', 'gamma']);
    expect(await t.nextBotLine(/entry check/, mark)).toMatch(
      /2 picks could not be checked with Twitch \(.*\) and were let in/,
    );
    expect((await t.verify(d2.id)).code).toBe(0);
  });

  it('warm-up: entrants looked up during the window (follows cached, "not following" asked again at the close); verify passes', async () => {
    const logins = Array.from({ length: 20 }, (_, i) => `warm${i}`);
    const strangers = new Set(logins.filter((_, i) => i % 4 === 0)); // 5 never followed
    const s = await stackWith(
      { eligibility: { followersOnly: true, warmUp: true } },
      {
        prepare(helix, chat) {
          for (const l of logins)
            if (!strangers.has(l)) helix.setFollow(chat.channelId, chat.viewer(l).userId, Date.now() - 30 * DAY);
        },
      },
    );
    const opened = nextDrawOpened(s);
    s.say(s.mod, '!giveaway start giftdrop-mug 10 300');
    const open = await opened;
    s.enter(logins);
    const followerCalls = () => s.stack.helix.calls.filter((c) => c.path === '/channels/followers');
    // Every entrant warmed (answers cached, not just sent): the warm-up counts a batch once it is stored.
    const warmUp = s.bot.twitchApi!.warmUp!;
    await vi.waitFor(() => expect(warmUp.warmed).toBe(20), { timeout: 15_000, interval: 20 });
    expect(followerCalls()).toHaveLength(20);
    const closedAt = Date.now();
    const before = followerCalls().length;
    const settled = drawSettled(s, open.id);
    s.say(s.mod, '!giveaway end');
    await settled;
    await s.idle();
    const d = await s.record(open.id);
    expect(d.winners).toHaveLength(10);
    expect(d.winners.every((w) => !strangers.has(w.login) && w.accountCheck?.result === 'checked')).toBe(true);
    // The winners' answers came from the warm-up, before the close; only the picked strangers were asked again.
    expect(d.winners.every((w) => Date.parse(w.accountCheck!.at) <= closedAt)).toBe(true);
    const asked = followerCalls()
      .slice(before)
      .map((c) => new URLSearchParams(c.query).get('user_id'));
    const strangerIds = new Set([...strangers].map((l) => s.viewer(l).userId));
    expect(asked.every((id) => strangerIds.has(id!))).toBe(true);
    expect(d.setAside!.every((a) => strangers.has(a.login) && a.reason === 'not-follower')).toBe(true);
    for (const a of d.setAside!) expect(asked).toContain(a.userId); // "not following" was not taken from the warm-up
    expect((await s.verify(d.id)).code).toBe(0);
  });
});
