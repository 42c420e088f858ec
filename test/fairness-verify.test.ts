import { describe, expect, it } from 'vitest';
import { verifyDraw } from '../src/fairness/verify.js';
import { commitmentOf } from '../src/fairness/procedure.js';
import { finishedRecord, testSeed } from './support/fairness-records.js';

describe('verifyDraw', () => {
  it('accepts an honest record and returns its winners in pick order', () => {
    const record = finishedRecord({ id: 'honest', entrants: 25, winners: 3 });
    const result = verifyDraw(record);
    expect(result).toEqual({ ok: true, winners: record.winners.map((w) => w.login) });
  });

  it('accepts a record with rerolls (replacements take the next picks)', () => {
    const record = finishedRecord({ id: 'rerolled', entrants: 25, winners: 3, rerollPicks: [1, 0] });
    expect(record.rerolls).toHaveLength(2);
    expect(record.winners.map((w) => w.pick).sort()).toEqual([2, 3, 4]);
    expect(verifyDraw(record).ok).toBe(true);
  });

  it('does not depend on the stored order of the entrant list', () => {
    const record = finishedRecord({ id: 'order' });
    record.frozenEntrants = [...record.frozenEntrants!].reverse();
    expect(verifyDraw(record).ok).toBe(true);
  });

  it('accepts a draw with no entrants and no winners', () => {
    const record = finishedRecord({ id: 'empty', entrants: 0, winners: 0 });
    expect(verifyDraw(record)).toEqual({ ok: true, winners: [] });
  });

  it('rejects a tampered entrant list', () => {
    const heavier = finishedRecord({ id: 't1' });
    heavier.frozenEntrants![4] = { ...heavier.frozenEntrants![4]!, weight: 50 };
    expect(verifyDraw(heavier)).toEqual({ ok: false, reason: 'entrant list digest mismatch' });
    const added = finishedRecord({ id: 't2' });
    added.frozenEntrants!.push({ userId: '99999', login: 'sneaky', weight: 1 });
    expect(verifyDraw(added)).toEqual({ ok: false, reason: 'entrant list digest mismatch' });
    const dup = finishedRecord({ id: 't3' });
    dup.frozenEntrants!.push({ ...dup.frozenEntrants![0]! });
    expect(verifyDraw(dup)).toMatchObject({ ok: false, reason: expect.stringMatching(/duplicate entrant/) });
  });

  it('rejects a tampered seed, and one that was never revealed', () => {
    const record = finishedRecord({ id: 'seed' });
    record.fairness.seed = testSeed('another').toString('hex');
    expect(verifyDraw(record)).toEqual({ ok: false, reason: 'seed does not match commitment' });
    // a seed swapped together with its commitment still fails: the winners do not follow from it
    record.fairness.commitment = commitmentOf(testSeed('another'));
    expect(verifyDraw(record)).toMatchObject({ ok: false, reason: expect.stringMatching(/^winner #1 should be/) });
    const open = finishedRecord({ id: 'open' });
    open.status = 'open';
    delete open.fairness.seed;
    expect(verifyDraw(open)).toEqual({ ok: false, reason: 'seed not revealed (draw status is open)' });
  });

  it('rejects a tampered winner, naming the position and both logins', () => {
    const record = finishedRecord({ id: 'winner', entrants: 30, winners: 3 });
    const honest = record.winners[1]!;
    const other = record.frozenEntrants!.find((e) => !record.winners.some((w) => w.userId === e.userId))!;
    record.winners[1] = { ...honest, userId: other.userId, login: other.login };
    expect(verifyDraw(record)).toEqual({
      ok: false,
      reason: `winner #2 should be ${honest.login} (pick 1) but history has ${other.login}`,
    });
  });

  it('rejects a forged reroll and a hidden extra winner', () => {
    const record = finishedRecord({ id: 'reroll-forged', entrants: 30, winners: 2, rerollPicks: [0] });
    const outsider = record.frozenEntrants!.find(
      (e) => !record.winners.some((w) => w.userId === e.userId) && e.userId !== record.rerolls![0]!.replacedUserId,
    )!;
    record.rerolls![0] = { ...record.rerolls![0]!, replacedUserId: outsider.userId, replacedLogin: outsider.login };
    expect(verifyDraw(record)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^pick 0 is .* neither a current winner nor a rerolled-away winner/),
    });

    const extra = finishedRecord({ id: 'extra', entrants: 30, winners: 2 });
    extra.winners.push({ ...extra.winners[0]!, pick: 0 });
    expect(verifyDraw(extra)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/invalid pick position|share pick/),
    });
  });
});

describe('verifyDraw: the reroll log', () => {
  it('rejects a reroll record whose replacement is not the pick it names', () => {
    const record = finishedRecord({ id: 'reroll-new', entrants: 30, winners: 2, rerollPicks: [0] });
    expect(verifyDraw(record).ok).toBe(true);
    const stillWinner = record.winners.find((w) => w.pick === 1)!;
    record.rerolls![0] = { ...record.rerolls![0]!, newUserId: stillWinner.userId };
    expect(verifyDraw(record)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^reroll 1 names .* as the replacement/),
    });
  });

  it('rejects a reroll record taken at the wrong position of the sequence', () => {
    const record = finishedRecord({ id: 'reroll-pos', entrants: 30, winners: 2, rerollPicks: [0, 1] });
    expect(verifyDraw(record).ok).toBe(true);
    // both records claim the same position: the history cannot have taken one pick twice
    record.rerolls![1] = { ...record.rerolls![1]!, pick: record.rerolls![0]!.pick };
    expect(verifyDraw(record)).toMatchObject({ ok: false, reason: expect.stringMatching(/^reroll 2 took pick/) });
  });

  it('rejects a reroll of someone who was not yet a winner when it happened', () => {
    // winners A(0), B(1); B -> C (pick 2), then C -> D (pick 3). Forged: the first record says C was replaced.
    const record = finishedRecord({ id: 'reroll-order', entrants: 30, winners: 2, rerollPicks: [1] });
    const first = record.rerolls![0]!;
    const c = record.winners.find((w) => w.pick === 2)!;
    // swap roles: claim the pick-2 replacement was the one rerolled away, before it was drawn
    record.rerolls![0] = { ...first, replacedUserId: c.userId, replacedLogin: c.login };
    const replaced = record.frozenEntrants!.find((e) => e.userId === first.replacedUserId)!;
    record.winners = record.winners.map((w) =>
      w.pick === 2 ? { ...w, userId: replaced.userId, login: replaced.login, pick: 1 } : w,
    );
    expect(verifyDraw(record).ok).toBe(false);
  });

  it('still accepts reroll records without pick or replacement (older histories)', () => {
    const record = finishedRecord({ id: 'reroll-old', entrants: 30, winners: 3, rerollPicks: [2, 0] });
    record.rerolls = record.rerolls!.map(({ pick: _p, newUserId: _n, ...rest }) => rest);
    expect(verifyDraw(record).ok).toBe(true);
  });
});
