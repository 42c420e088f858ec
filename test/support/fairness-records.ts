/** Builds realistic, correctly drawn DrawRecords for fairness, storage and CLI tests. */
import { createHash } from 'node:crypto';
import { FAIRNESS_ALGORITHM, commitmentOf, freezeEntrants, pickSequence } from '../../src/fairness/procedure.js';
import type { DrawRecord, Entrant } from '../../src/giveaway/model.js';
import { noRoles } from '../../src/shared/chat.js';

export function testSeed(label: string): Buffer {
  return createHash('sha256').update(`seed:${label}`).digest();
}

export function makeEntrant(i: number, weight = 1): Entrant {
  return {
    userId: String(10_000 + i),
    login: `viewer${i}`,
    displayName: `Viewer${i}`,
    weight,
    roles: noRoles,
    enteredAt: Date.UTC(2026, 0, 1) + i * 1000,
  };
}

export interface RecordOptions {
  id: string;
  entrants?: number;
  winners?: number;
  /** Pick positions (0-based, among the first winners) rerolled away, in order. */
  rerollPicks?: number[];
  openedAt?: string;
  kind?: DrawRecord['kind'];
  offerName?: string;
}

/** A finished draw whose winners are the honest pick sequence (with optional rerolls). */
export function finishedRecord(options: RecordOptions): DrawRecord {
  const n = options.entrants ?? 20;
  const winnerCount = options.winners ?? 3;
  const seed = testSeed(options.id);
  const entrants = Array.from({ length: n }, (_, i) => makeEntrant(i, 1 + (i % 3)));
  const { frozen, digest } = freezeEntrants(entrants);
  const rerollPicks = options.rerollPicks ?? [];
  const sequence = pickSequence(seed, digest, frozen, winnerCount + rerollPicks.length);
  const slots = sequence.slice(0, winnerCount).map((index, pick) => ({ index, pick }));
  const rerolls: NonNullable<DrawRecord['rerolls']> = [];
  rerollPicks.forEach((slotPick, k) => {
    const slot = slots.find((s) => s.pick === slotPick)!;
    const replaced = frozen[slot.index]!;
    const pick = winnerCount + k;
    const next = frozen[sequence[pick]!]!;
    rerolls.push({
      at: new Date(Date.UTC(2026, 0, 1, 0, 10 + k)).toISOString(),
      replacedUserId: replaced.userId,
      replacedLogin: replaced.login,
      reason: 'command',
      byUserId: '1',
      newUserId: next.userId,
      pick,
    });
    slot.index = sequence[pick]!;
    slot.pick = pick;
  });
  const openedAt = options.openedAt ?? '2026-01-01T00:00:00.000Z';
  const opened = Date.parse(openedAt);
  return {
    id: options.id,
    kind: options.kind ?? 'link-giveaway',
    status: 'finished',
    source: { packageId: `pkg_${options.id}` },
    offer: { id: 'prod_1', name: options.offerName ?? 'Sticker pack' },
    gifts: winnerCount,
    openedAt,
    closesAt: new Date(opened + 60_000).toISOString(),
    closedAt: new Date(opened + 60_000).toISOString(),
    entrants: n,
    winners: slots.map((s) => {
      const e = frozen[s.index]!;
      return {
        userId: e.userId,
        login: e.login,
        displayName: e.login.toUpperCase(),
        pick: s.pick,
        redeemUrl: `https://shop.example/gifts/${options.id}-${s.pick}`,
      };
    }),
    fairness: {
      commitment: commitmentOf(seed),
      seed: seed.toString('hex'),
      entrantsDigest: digest,
      algorithm: FAIRNESS_ALGORITHM,
    },
    frozenEntrants: frozen,
    rerolls: rerolls.length ? rerolls : undefined,
  };
}
