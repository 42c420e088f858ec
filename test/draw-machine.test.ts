/**
 * The draw state machine's table (src/giveaway/draw-machine.ts) as data: every phase is reachable
 * from `opening`, every active phase can fail, the terminal phases are left only by the documented
 * rows (retry, Fourthwall's own end), each flow's phases are closed under the table's moves it
 * takes, and a stored record resumes in the phase its fields say. Pure: no I/O, no clock.
 */
import { describe, expect, it } from 'vitest';
import {
  ACTIVE_PHASES,
  TRANSITIONS,
  next,
  restoredPhase,
  rerollRefusal,
  type DrawPhase,
} from '../src/giveaway/draw-machine.js';
import { flowOf } from '../src/giveaway/flows/index.js';
import type { DrawRecord } from '../src/giveaway/model.js';

const ALL: DrawPhase[] = [
  'opening',
  'open',
  'closing',
  'awaiting-beacon',
  'picking',
  'claim-window',
  'finishing',
  'settled',
  'failed',
  'cancelled',
];

function reachable(from: DrawPhase, allowed: readonly DrawPhase[] = ALL): Set<DrawPhase> {
  const seen = new Set<DrawPhase>([from]);
  const todo = [from];
  while (todo.length) {
    const p = todo.pop()!;
    for (const t of TRANSITIONS) {
      if (!t.from.includes(p) || !allowed.includes(t.to) || seen.has(t.to)) continue;
      seen.add(t.to);
      todo.push(t.to);
    }
  }
  return seen;
}

const record = (over: Partial<DrawRecord>): DrawRecord => ({
  id: 'd1',
  kind: 'gift-draw',
  status: 'open',
  source: {},
  offer: { id: 'p', name: 'Mug' },
  gifts: 1,
  openedAt: new Date(0).toISOString(),
  closesAt: new Date(60_000).toISOString(),
  entrants: 0,
  winners: [],
  fairness: { commitment: 'c', algorithm: 'giftdrop-hmac-sha256-v1' },
  pendingSeed: 'ab'.repeat(32),
  ...over,
});

describe('draw state machine', () => {
  it('reaches every phase from opening, and the happy path is open -> closing -> awaiting-beacon -> picking -> finishing -> settled', () => {
    expect([...reachable('opening')].sort()).toEqual([...ALL].sort());
    const path: [DrawPhase, Parameters<typeof next>[1]][] = [
      ['opening', 'saved'],
      ['open', 'close'],
      ['closing', 'frozen'],
      ['awaiting-beacon', 'beacon-ready'],
      ['picking', 'picked'],
      ['finishing', 'delivered'],
    ];
    const visited = path.map(([phase, on]) => next(phase, on)!.to);
    expect(visited).toEqual(['open', 'closing', 'awaiting-beacon', 'picking', 'finishing', 'settled']);
  });

  it('lets every active phase fail, and refuses a second close (the first trigger wins)', () => {
    for (const p of ACTIVE_PHASES) expect(next(p, 'failed')?.to).toBe('failed');
    expect(next('closing', 'close')).toBeUndefined();
    expect(next('picking', 'close')).toBeUndefined();
    expect(next('settled', 'failed')).toBeUndefined();
    expect(next('cancelled', 'retry')).toBeUndefined();
    expect(next('finishing', 'cancel')).toBeUndefined();
  });

  it('leaves a terminal phase only by retry (failed links) or Fourthwall ending the draw', () => {
    const out = TRANSITIONS.filter(
      (t) => t.from.some((f) => f === 'settled' || f === 'failed' || f === 'cancelled') && t.to !== t.from[0],
    );
    expect(out.map((t) => `${t.from.join('/')} ${t.on} -> ${t.to}`).sort()).toEqual([
      'failed retry -> finishing',
      'open/claim-window/failed ended-at-fourthwall -> settled',
    ]);
  });

  it('gives each flow phases that every move it can make stays within, and only link giveaways can be cancelled', () => {
    for (const kind of ['gift-draw', 'gift-purchase', 'link-giveaway'] as const) {
      const flow = flowOf(kind);
      expect(flow.kind).toBe(kind);
      const inFlow = reachable('open', flow.phases);
      expect([...inFlow].sort()).toEqual([...flow.phases].sort());
      expect(inFlow.has('cancelled')).toBe(kind === 'link-giveaway');
    }
  });

  it('resumes a stored record in the phase its fields say', () => {
    expect(restoredPhase(record({}), 0)).toEqual({ phase: 'open', trigger: 'resume' });
    expect(restoredPhase(record({}), 60_000)).toEqual({ phase: 'open', trigger: 'close' });
    expect(restoredPhase(record({ status: 'drawing' }), 0)).toEqual({ phase: 'closing', trigger: 'resume' });
    expect(restoredPhase(record({ status: 'drawing', finishInFlight: true }), 0)).toEqual({
      phase: 'finishing',
      trigger: 'resume',
    });
    const winners = [{ userId: 'u', login: 'u', displayName: 'u', pick: 0 }];
    expect(
      restoredPhase(
        record({ status: 'drawing', winners, claim: { deadline: new Date(1).toISOString(), rerollsUsed: 0 } }),
        0,
      ),
    ).toEqual({ phase: 'claim-window', trigger: 'resume' });
    expect(restoredPhase(record({ status: 'drawing', pendingSeed: 'zz' }), 0)).toEqual({
      phase: 'closing',
      failed: 'the draw could not be resumed after a restart',
    });
  });

  it('refuses rerolls while winners are being picked or confirmed, after a Fourthwall settle, and once cancelled', () => {
    expect(rerollRefusal('picking', 'link-giveaway')).toBe('busy');
    expect(rerollRefusal('finishing', 'gift-purchase')).toBe('busy');
    expect(rerollRefusal('settled', 'gift-draw')).toBe('settled-at-fourthwall');
    expect(rerollRefusal('cancelled', 'link-giveaway')).toBe('cancelled');
    expect(rerollRefusal('claim-window', 'gift-draw')).toBeUndefined();
    expect(rerollRefusal('settled', 'link-giveaway')).toBeUndefined();
  });

  it('refuses a reroll of a redeemed prize, of a prize the shop closed and a second reroll of one winner, in any phase that allows rerolls', () => {
    const fresh = { replaced: false, redeemed: false, closed: false };
    for (const [phase, kind] of [
      ['settled', 'link-giveaway'],
      ['settled', 'gift-purchase'],
      ['claim-window', 'gift-draw'],
      ['failed', 'link-giveaway'],
    ] as const) {
      expect(rerollRefusal(phase, kind, fresh)).toBeUndefined();
      expect(rerollRefusal(phase, kind, { ...fresh, redeemed: true })).toBe('redeemed');
      expect(rerollRefusal(phase, kind, { ...fresh, replaced: true })).toBe('replaced');
      expect(rerollRefusal(phase, kind, { ...fresh, closed: true })).toBe('not-redeemable');
    }
    // the phase answers first: a busy or settled draw says so whatever the winner
    expect(rerollRefusal('picking', 'link-giveaway', { replaced: true, redeemed: true, closed: true })).toBe('busy');
    expect(rerollRefusal('settled', 'gift-draw', { replaced: false, redeemed: true, closed: true })).toBe(
      'settled-at-fourthwall',
    );
  });

  it("a link that has gone out stays its winner's: a gift is refused (it cannot be issued again), a link giveaway is replaced with a new link", () => {
    const out = { replaced: false, redeemed: false, closed: false, linkOut: true };
    expect(rerollRefusal('settled', 'gift-purchase', out)).toBe('gift-out');
    expect(rerollRefusal('failed', 'gift-purchase', out)).toBe('gift-out');
    expect(rerollRefusal('settled', 'link-giveaway', out)).toBeUndefined();
    expect(rerollRefusal('failed', 'link-giveaway', out)).toBeUndefined();
    // without a link (a claim window, links not made yet) nothing changes
    expect(rerollRefusal('claim-window', 'gift-purchase', { ...out, linkOut: false })).toBeUndefined();
    // redeemed or closed say so first
    expect(rerollRefusal('settled', 'gift-purchase', { ...out, redeemed: true })).toBe('redeemed');
  });
});
