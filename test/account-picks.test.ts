/**
 * Picks checked against the account rules (src/giveaway/winner-picks.ts with the real
 * AccountGate; the Twitch lookups come from an in-memory AccountInfoPort, the adapter's place):
 * - the winners have exactly the distribution of drawing among the passing entrants alone, for
 *   uniform and weighted lists (20,000 fixed seeds, so the result is the same on every run);
 * - a draw with set-asides, a reroll and a claim-style replacement verifies (verifyDraw replays
 *   the set-asides), and a record whose set-asides were tampered with does not;
 * - a lookup that fails follows `uncheckable` for that pick only; a pick still unanswered at the
 *   deadline ends the walk with the winners decided so far.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AccountGate, type AccountRules } from '../src/giveaway/account-rules.js';
import { nextPosition, replaceWinnerChecked, takeCheckedPicks } from '../src/giveaway/winner-picks.js';
import { FAIRNESS_ALGORITHM, commitmentOf, freezeEntrants } from '../src/fairness/procedure.js';
import { FrozenList } from '../src/giveaway/entrants/frozen-list.js';
import type { AccountInfo, AccountLookup, DrawRecord, FrozenEntrant } from '../src/giveaway/model.js';
import type { AccountInfoPort } from '../src/giveaway/ports.js';
import { DrawSession } from '../src/giveaway/session.js';
import { verifyDraw } from '../src/fairness/verify.js';

const NOW = Date.UTC(2026, 5, 1);
const DAY = 86_400_000;
const FOLLOWERS: AccountRules = { followersOnly: true, minFollowDays: 0, minAccountDays: 0, uncheckable: 'allow' };

/** An AccountInfoPort answering from a table; `failing` ids fail (as Helix down for them), `slow` never answer before `until`. */
class TablePort implements AccountInfoPort {
  calls: string[][] = [];
  constructor(
    private readonly follows: ReadonlySet<string>,
    private readonly failing: ReadonlySet<string> = new Set(),
    private readonly clock?: { now: number; slow: ReadonlySet<string> },
  ) {}
  lookup(ids: readonly string[], needs: { follows: boolean; until?: number }): Promise<AccountLookup> {
    this.calls.push([...ids]);
    const info = new Map<string, AccountInfo>();
    const unchecked: string[] = [];
    for (const id of ids) {
      if (this.clock?.slow.has(id)) {
        this.clock.now = needs.until ?? this.clock.now; // the deadline came while waiting for it
        unchecked.push(id);
      } else if (this.failing.has(id)) unchecked.push(id);
      else
        info.set(id, {
          createdAt: NOW - 400 * DAY,
          answeredAt: NOW,
          ...(this.follows.has(id) ? { followedAt: NOW - 30 * DAY } : {}),
        });
    }
    return Promise.resolve({
      info,
      unchecked,
      ...(unchecked.length ? { problem: 'Twitch API answered HTTP 503' } : {}),
    });
  }
}

function gateOf(port: AccountInfoPort, rules = FOLLOWERS, now = () => NOW): { gate: AccountGate; said: string[] } {
  const said: string[] = [];
  return { gate: new AccountGate({ port, rules, chat: { say: (t: string) => void said.push(t) }, now }), said };
}

function list(weights: readonly number[]): FrozenEntrant[] {
  return weights.map((w, i) => ({ userId: String(1000 + i), login: `v${i}`, weight: w }));
}

const seedOf = (label: string) => createHash('sha256').update(label).digest();

/** Exact probability of the ordered winners `order` when sampling without replacement by weight among `pool`. */
function exact(order: readonly string[], pool: ReadonlyMap<string, number>): number {
  let total = [...pool.values()].reduce((a, b) => a + b, 0);
  let p = 1;
  for (const id of order) {
    p *= pool.get(id)! / total;
    total -= pool.get(id)!;
  }
  return p;
}

async function distribution(
  weights: readonly number[],
  eligible: readonly number[],
  wanted: number,
  runs: number,
): Promise<void> {
  const entrants = list(weights);
  const frozen = FrozenList.freeze(entrants);
  const passing = new Set(eligible.map((i) => entrants[i]!.userId));
  const { gate } = gateOf(new TablePort(passing));
  const seen = new Map<string, number>();
  for (let k = 0; k < runs; k++) {
    const got = await takeCheckedPicks({
      key: seedOf(`run ${k}`),
      frozen,
      from: 0,
      wanted,
      gate,
      until: NOW + 60_000,
      now: () => NOW,
    });
    expect(got.picks.every((p) => passing.has(p.entrant.userId))).toBe(true);
    const key = got.picks.map((p) => p.entrant.userId).join(',');
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  const pool = new Map(entrants.filter((e) => passing.has(e.userId)).map((e) => [e.userId, e.weight]));
  let expectedOutcomes = 0;
  const ids = [...pool.keys()];
  for (const a of ids)
    for (const b of ids) {
      if (a === b) continue;
      expectedOutcomes++;
      const observed = (seen.get(`${a},${b}`) ?? 0) / runs;
      // 20,000 runs: the standard error of a frequency is at most 0.0036; 0.015 is over 4 of them.
      expect(Math.abs(observed - exact([a, b], pool))).toBeLessThan(0.015);
    }
  expect(seen.size).toBe(expectedOutcomes);
}

describe('picks checked against the account rules', () => {
  it('uniform list: the winners are distributed as a draw among the followers alone', async () => {
    await distribution([1, 1, 1, 1, 1, 1, 1, 1], [1, 4, 6, 7], 2, 20_000);
  });

  it('weighted list: the winners are distributed as a weighted draw among the followers alone', async () => {
    await distribution([3, 1, 5, 2, 1, 4, 2], [0, 2, 3, 6], 2, 20_000);
  });

  it('a draw with set-asides, a reroll and a claim replacement verifies; tampered set-asides do not', async () => {
    const entrants = list(Array.from({ length: 40 }, (_, i) => 1 + (i % 3)));
    const { frozen: canonical, digest } = freezeEntrants(entrants);
    const seed = seedOf('verify');
    const followers = new Set(canonical.filter((_, i) => i % 4 === 0).map((e) => e.userId));
    const port = new TablePort(followers);
    const { gate, said } = gateOf(port);
    const record: DrawRecord = {
      id: 'd1',
      kind: 'link-giveaway',
      status: 'finished',
      source: {},
      offer: { id: 'p', name: 'Mug' },
      gifts: 3,
      openedAt: new Date(NOW - 120_000).toISOString(),
      closesAt: new Date(NOW - 60_000).toISOString(),
      entrants: 40,
      winners: [],
      fairness: {
        commitment: commitmentOf(seed),
        seed: seed.toString('hex'),
        entrantsDigest: digest,
        algorithm: FAIRNESS_ALGORITHM,
      },
      frozenEntrants: canonical,
    };
    const s = new DrawSession(record, seed, [], 'settled');
    const got = await takeCheckedPicks({
      key: seed,
      frozen: s.frozen!,
      from: 0,
      wanted: 3,
      gate,
      until: NOW + 60_000,
      now: () => NOW,
    });
    expect(got.picks).toHaveLength(3);
    expect(got.setAside.length).toBeGreaterThan(0);
    expect(got.setAside.every((a) => a.reason === 'not-follower' && a.at === new Date(NOW).toISOString())).toBe(true);
    record.winners = got.picks.map((p) => ({
      userId: p.entrant.userId,
      login: p.entrant.login,
      displayName: p.entrant.login,
      pick: p.pick,
      accountCheck: p.accountCheck!,
    }));
    record.setAside = got.setAside;
    // Only picks were looked up, never the whole list.
    expect(port.calls.flat().length).toBeLessThan(40);

    const meta = (reason: 'command' | 'unclaimed') => ({
      at: new Date(NOW).toISOString(),
      reason,
      displayNameOf: () => undefined,
      claimPending: false,
    });
    const before = record.setAside.length;
    const swap = await replaceWinnerChecked(s, record.winners[1]!.userId, {
      gate,
      now: () => NOW,
      meta: meta('command'),
    });
    expect(swap).toBeDefined();
    expect(followers.has(swap!.winner.userId)).toBe(true);
    expect(swap!.winner.accountCheck?.result).toBe('checked');
    const swap2 = await replaceWinnerChecked(s, record.winners[0]!.userId, {
      gate,
      now: () => NOW,
      meta: meta('unclaimed'),
    });
    expect(swap2).toBeDefined();
    expect(record.setAside.length).toBeGreaterThan(before); // the replacements skipped non-followers too
    expect(said.some((l) => /picks? set aside \(\d+ not following the channel\)/.test(l))).toBe(true);
    expect(nextPosition(record)).toBe(record.winners.length + record.rerolls!.length + record.setAside.length);
    record.frozenEntrants = canonical;
    expect(verifyDraw(record)).toMatchObject({ ok: true });

    // Tampering: a set-aside dropped (its pick is then unaccounted for), or naming someone else.
    const dropped = structuredClone(record);
    dropped.setAside = dropped.setAside!.slice(1);
    expect(verifyDraw(dropped)).toMatchObject({ ok: false });
    const renamed = structuredClone(record);
    renamed.setAside![0] = { ...renamed.setAside![0]!, userId: record.winners[2]!.userId };
    expect(verifyDraw(renamed)).toMatchObject({ ok: false, reason: expect.stringMatching(/set aside there/) });
    const reordered = structuredClone(record);
    reordered.setAside!.reverse();
    expect(reordered.setAside!.length).toBeGreaterThan(1);
    expect(verifyDraw(reordered)).toMatchObject({ ok: false, reason: expect.stringMatching(/out-of-order/) });
  });

  it('a failed lookup follows `uncheckable` for that pick only; the deadline ends the walk with the winners so far', async () => {
    const entrants = list(Array.from({ length: 30 }, () => 1));
    const frozen = FrozenList.freeze(entrants);
    const key = seedOf('faults');
    const everyone = new Set(entrants.map((e) => e.userId));
    // Which entrant is the first pick: that one's lookup fails.
    const plain = await takeCheckedPicks({ key, frozen, from: 0, wanted: 3, until: NOW + 1, now: () => NOW });
    const first = plain.picks[0]!.entrant.userId;

    const allow = gateOf(new TablePort(everyone, new Set([first])));
    const a = await takeCheckedPicks({
      key,
      frozen,
      from: 0,
      wanted: 3,
      gate: allow.gate,
      until: NOW + 60_000,
      now: () => NOW,
    });
    expect(a.picks.map((p) => p.entrant.userId)).toEqual(plain.picks.map((p) => p.entrant.userId));
    expect(a.picks.map((p) => p.accountCheck?.result)).toEqual(['unchecked', 'checked', 'checked']);
    expect(a).toMatchObject({ unchecked: 1, checked: 2, setAside: [], problem: 'Twitch API answered HTTP 503' });

    const exclude = gateOf(new TablePort(everyone, new Set([first])), { ...FOLLOWERS, uncheckable: 'exclude' });
    const x = await takeCheckedPicks({
      key,
      frozen,
      from: 0,
      wanted: 3,
      gate: exclude.gate,
      until: NOW + 60_000,
      now: () => NOW,
    });
    expect(x.setAside).toEqual([expect.objectContaining({ pick: 0, userId: first, reason: 'unchecked' })]);
    expect(x.picks.map((p) => p.pick)).toEqual([1, 2, 3]);

    // The second pick's answer never comes before the deadline: one winner, the rest unfilled.
    const second = plain.picks[1]!.entrant.userId;
    const clock = { now: NOW, slow: new Set([second]) };
    const slow = gateOf(new TablePort(everyone, new Set(), clock), FOLLOWERS, () => clock.now);
    const t = await takeCheckedPicks({
      key,
      frozen,
      from: 0,
      wanted: 3,
      gate: slow.gate,
      until: NOW + 45_000,
      now: () => clock.now,
    });
    expect(t.outOfTime).toBe(true);
    expect(t.picks.map((p) => p.entrant.userId)).toEqual([first]);
    expect(t.setAside).toEqual([]);
  });
});
