/**
 * The engine's picks under account rules (GiveawayEngine over fakes, a real repository, a manual
 * clock, and an in-memory AccountInfoPort in Twitch's place):
 * - the close has one deadline (Fourthwall's, entry window + 60 s, minus the finish reserve): a
 *   lookup still unanswered then ends the picks and chat names the prizes not filled; a link
 *   giveaway finishes with the winners checked so far, a gift draw (Fourthwall takes one winner per
 *   gift) is handed back before Fourthwall's deadline with its picks void; both verify;
 * - a claim window's replacement winner is checked the same way (non-followers set aside), and
 *   the draw still verifies.
 */
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { AccountGate, type AccountRules } from '../src/giveaway/account-rules.js';
import type { AccountInfo, AccountLookup, DrawRecord } from '../src/giveaway/model.js';
import type { AccountInfoPort } from '../src/giveaway/ports.js';
import { verifyDraw } from '../src/fairness/verify.js';
import type { ManualClock } from '../src/shared/clock.js';
import { START_MS, chatMsg, driveUntil, waitFor, type Harness, type HarnessOptions } from './support/giveaway-fakes.js';
import { harnessPerTest } from './support/giveaway-harness.js';

const FOLLOWERS_ONLY: AccountRules = { followersOnly: true, minFollowDays: 0, minAccountDays: 0, uncheckable: 'allow' };
const newHarness = harnessPerTest();

/** Answers from `follows(id, call)`; a call for which `hang(call)` holds answers nothing before `until` (on the clock). */
class ScriptedPort implements AccountInfoPort {
  calls: string[][] = [];
  clock: ManualClock | undefined;
  constructor(
    private readonly follows: (id: string, call: number, index: number) => boolean,
    private readonly hang: (call: number) => boolean = () => false,
  ) {}
  async lookup(ids: readonly string[], needs: { follows: boolean; until?: number }): Promise<AccountLookup> {
    const call = this.calls.push([...ids]) - 1;
    if (this.hang(call)) {
      const clock = this.clock!;
      await new Promise<void>((resolve) =>
        clock.setTimeout(resolve, Math.max(0, (needs.until ?? clock.now()) - clock.now())),
      );
      return { info: new Map(), unchecked: [...ids], problem: 'Twitch API: no answer within the deadline' };
    }
    const info = new Map<string, AccountInfo>();
    ids.forEach((id, i) =>
      info.set(id, {
        createdAt: START_MS - 400 * 86_400_000,
        answeredAt: this.clock!.now(),
        ...(this.follows(id, call, i) ? { followedAt: START_MS - 86_400_000 } : {}),
      }),
    );
    return { info, unchecked: [] };
  }
}

async function make(port: ScriptedPort, settings: HarnessOptions = {}): Promise<{ h: Harness; said: string[] }> {
  const said: string[] = [];
  let clockRef: ManualClock | undefined;
  const gate = new AccountGate({
    port,
    rules: FOLLOWERS_ONLY,
    chat: { say: (t: string) => void said.push(t) },
    now: () => clockRef!.now(),
  });
  const h = await newHarness({ ...settings, accounts: gate });
  clockRef = h.clock;
  port.clock = h.clock;
  h.shop.products = [{ id: '3f1c0a52-3333-4a6b-9d1e-000000000003', name: 'Mug', slug: 'mug' }];
  return { h, said };
}

describe('engine picks under account rules', () => {
  it('the deadline ends the checks: a link giveaway finishes with the winners checked so far, unfilled prizes named', async () => {
    // First batch: only its first candidate follows; the second batch never answers before the deadline.
    const port = new ScriptedPort(
      (_id, call, index) => call === 0 && index === 0,
      (call) => call >= 1,
    );
    const { h, said } = await make(port);
    const start = await h.svc.startLinkGiveaway(chatMsg('modjo', { roles: { moderator: true } }), 'mug', 5, 30);
    const id = (start as { id: string }).id;
    for (let i = 0; i < 40; i++) h.svc.enter(chatMsg(`viewer${i}`));
    let rec: DrawRecord | undefined;
    void once(h.svc.events, 'draw-finished').then(([r]) => (rec = r as DrawRecord));
    h.clock.advance(30_000);
    const closedAt = h.clock.now();
    await driveUntil(h.clock, () => rec !== undefined, 1_000, 200);
    // The checks' deadline: the close + 60 s, minus the 15 s kept for delivering the prizes.
    expect(h.clock.now()).toBeGreaterThanOrEqual(closedAt + 45_000);
    expect(h.clock.now()).toBeLessThan(closedAt + 60_000);
    expect(rec!.winners).toHaveLength(1);
    expect(rec!.winners[0]!.accountCheck?.result).toBe('checked');
    expect(port.calls).toHaveLength(2);
    expect(port.calls[0]![0]).toBe(rec!.winners[0]!.userId);
    expect(h.shop.calls.filter((c) => c.op === 'createGiveawayLinks').map((c) => c.args[1])).toEqual([1]);
    await h.svc.whenIdle();
    const stored = (await h.repo.getDraw(id))!;
    expect(stored.setAside!.map((a) => a.reason)).toEqual(Array(port.calls[0]!.length - 1).fill('not-follower'));
    expect(stored.rules!['account']).toMatchObject({ unfilled: 4, unfilledWhy: 'time' });
    expect(said.at(-1)).toMatch(/4 of 5 prizes \(Mug\) not filled: the checks ran out of time before the deadline\.$/);
    expect(verifyDraw(stored)).toMatchObject({ ok: true });
  });

  it("the deadline in a gift draw: before Fourthwall's deadline, fewer winners than gifts, so the draw is handed back (picks void, verifies)", async () => {
    const port = new ScriptedPort(
      (_id, call, index) => call === 0 && index === 0,
      (call) => call >= 1,
    );
    const { h, said } = await make(port);
    const draw = h.shop.addDraw({ gifts: 5, durationSeconds: 60 });
    await h.svc.handleGiftDrawStarted(draw, 'weve_1');
    for (let i = 0; i < 40; i++) h.svc.enter(chatMsg(`viewer${i}`));
    let rec: DrawRecord | undefined;
    void once(h.svc.events, 'draw-failed').then(([r]) => (rec = r as DrawRecord));
    h.clock.advance(60_000);
    await driveUntil(h.clock, () => rec !== undefined, 1_000, 200);
    const closesAt = START_MS + 60_000;
    expect(h.clock.now()).toBeGreaterThanOrEqual(closesAt + 45_000);
    expect(h.clock.now()).toBeLessThan(closesAt + 60_000);
    // One checked winner for five gifts: Fourthwall takes one winner per gift, so nothing is sent
    // and the draw is handed back (Fourthwall reopens it with every gift after its deadline); the
    // round's ONE line says why (no separate entry-check line).
    expect(said.filter((l) => /entry check/.test(l))).toEqual([]);
    expect(h.shop.count('finishDraw')).toBe(0);
    expect(port.calls).toHaveLength(2);
    expect(rec!.failure?.reason).toMatch(/only 1 entrant checked with Twitch in time for 5 gifts/);
    expect(
      h.chat.matching(
        /^Cozy Hoodie: only 1 entrant checked with Twitch in time for 5 gifts, and Fourthwall needs one winner per gift, so nobody wins this round\.$/,
      ),
    ).toHaveLength(1);
    await h.svc.whenIdle();
    const stored = (await h.repo.getDraw(draw.id))!;
    expect(stored).toMatchObject({ status: 'failed', winners: [] });
    expect(stored.setAside).toBeUndefined();
    expect(stored.rules!['account']).toMatchObject({ unfilled: 4, unfilledWhy: 'time' });
    expect(verifyDraw(stored)).toMatchObject({ ok: true });
  });

  it("a claim window's replacement winner is checked the same way; the draw verifies", async () => {
    // Followers: viewers with an even number.
    const port = new ScriptedPort((id) => Number(id.replace(/\D/g, '')) % 2 === 0);
    const { h } = await make(port, { settings: { claim: { seconds: 30, maxRerolls: 2 } } });
    const start = await h.svc.startLinkGiveaway(chatMsg('modjo', { roles: { moderator: true } }), 'mug', 1, 30);
    const id = (start as { id: string }).id;
    for (let i = 0; i < 30; i++) h.svc.enter(chatMsg(`viewer${i}`));
    h.clock.advance(30_000);
    await waitFor(() => h.chat.matching(/Type !claim/).length > 0, 'claim prompt');
    await h.svc.whenIdle();
    const first = (await h.repo.getDraw(id))!;
    const w1 = first.winners[0]!;
    expect(Number(w1.login.replace(/\D/g, '')) % 2).toBe(0);
    const asideBefore = first.setAside?.length ?? 0;

    h.clock.advance(30_000); // w1 does not claim
    await waitFor(() => h.chat.matching(/is replaced by/).length > 0, 'the replacement');
    await h.svc.whenIdle();
    const after = (await h.repo.getDraw(id))!;
    const w2 = after.winners[0]!;
    expect(w2.userId).not.toBe(w1.userId);
    expect(Number(w2.login.replace(/\D/g, '')) % 2).toBe(0);
    expect(w2.accountCheck?.result).toBe('checked');
    expect(after.rerolls).toEqual([
      expect.objectContaining({ reason: 'unclaimed', replacedUserId: w1.userId, newUserId: w2.userId, pick: w2.pick }),
    ]);
    for (const a of after.setAside ?? []) expect(Number(a.login.replace(/\D/g, '')) % 2).toBe(1);
    // Every pick up to the replacement's is a winner, a rerolled-away winner or set aside.
    expect((after.setAside?.length ?? 0) + 2).toBe(w2.pick + 1);
    expect(after.setAside!.length).toBeGreaterThanOrEqual(asideBefore);
    expect(verifyDraw(after)).toMatchObject({ ok: true });
  });
});
