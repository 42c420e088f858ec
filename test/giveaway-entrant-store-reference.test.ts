/**
 * The columnar entrant store (src/giveaway/entrants/, typed arrays, an id index and a radix-sorted
 * freeze) checked against the simplest store that could do its job: a Map from user id to entrant
 * (first entry wins, entry order kept) and, at close, a sort of its values into the procedure's
 * order (default string order of user ids) digested line by line (support/canonical-reference.ts).
 * Random operations from a seeded generator (deterministic: a failure names its seed and step),
 * over the ids and logins chat brings: decimal ids of 1-17 digits with leading zeros, non-decimal
 * ids, unicode and odd logins, repeated entries, both ways in (add, addFields).
 */
import { describe, expect, it } from 'vitest';
import { EntrantTable, freezeEntrantTable, packRoles } from '../src/giveaway/entrants/index.js';
import type { Entrant } from '../src/giveaway/model.js';
import { mergeGiveawaySettings } from '../src/giveaway/settings.js';
import { noRoles } from '../src/shared/chat.js';
import { reference, rng } from './support/canonical-reference.js';

/** The reference: a Map and a sort. */
class ReferenceStore {
  private readonly map = new Map<string, Entrant>();
  get size(): number {
    return this.map.size;
  }
  add(e: Entrant): boolean {
    if (this.map.has(e.userId)) return false;
    this.map.set(e.userId, e);
    return true;
  }
  has(userId: string): boolean {
    return this.map.has(userId);
  }
  get(userId: string): Entrant | undefined {
    return this.map.get(userId);
  }
  values(): Entrant[] {
    return [...this.map.values()];
  }
  findByLogin(login: string): Entrant | undefined {
    return this.values().find((e) => e.login.toLowerCase() === login.toLowerCase());
  }
  digest(): string {
    return reference(this.values()).digest;
  }
}

const LOGINS = [
  'viewer',
  'Ab',
  'zoë_ñ',
  '名前',
  'emoji😀x',
  'lone\ud800',
  'q"uote',
  'back\\slash',
  'ÉCOLE',
  'é'.repeat(40),
  'a'.repeat(25),
];

function randomEntrant(next: () => number, step: number): Entrant {
  const kind = next();
  let userId: string;
  if (kind < 0.8) {
    const len = 1 + Math.floor(next() * 17);
    userId = Array.from({ length: len }, () => String(Math.floor(next() * 10))).join('');
  } else if (kind < 0.9) userId = `0${Math.floor(next() * 50)}`;
  else userId = `u-${Math.floor(next() * 40)}`;
  if (next() < 0.2) userId = String(Math.floor(next() * 30)); // a small pool: repeated entries
  const login = `${LOGINS[Math.floor(next() * LOGINS.length)]!}${next() < 0.5 ? Math.floor(next() * 100) : ''}`;
  const subscriber = next() < 0.3;
  return {
    userId,
    login,
    displayName: next() < 0.5 ? login : login.toUpperCase(),
    weight: 1 + Math.floor(next() * 5),
    roles: {
      ...noRoles,
      subscriber,
      moderator: next() < 0.05,
      vip: next() < 0.05,
      subMonths: subscriber ? Math.floor(next() * 40) : 0,
    },
    enteredAt: 1_700_000_000_000 + step,
  };
}

describe('the columnar entrant store against a Map and a sort', () => {
  for (const seed of [1, 7, 42, 2026]) {
    it(`seed ${seed}: 4000 random operations give the same answers, and the same frozen list`, async () => {
      const next = rng(seed);
      const table = new EntrantTable();
      const ref = new ReferenceStore();
      const seen: Entrant[] = [];
      for (let step = 0; step < 4000; step++) {
        const op = next();
        const where = `seed ${seed}, step ${step}`;
        if (op < 0.7) {
          const e = randomEntrant(next, step);
          seen.push(e);
          const added =
            next() < 0.5
              ? table.add(e)
              : table.addFields(
                  e.userId,
                  e.login,
                  e.displayName,
                  e.weight,
                  packRoles(e.roles),
                  e.roles.subMonths,
                  e.enteredAt,
                );
          expect(added, where).toBe(ref.add(e));
        } else {
          const probe =
            seen.length && next() < 0.7 ? seen[Math.floor(next() * seen.length)]! : randomEntrant(next, step);
          if (op < 0.8) expect(table.has(probe.userId), where).toBe(ref.has(probe.userId));
          else if (op < 0.9) expect(table.get(probe.userId), where).toEqual(ref.get(probe.userId));
          else if (op < 0.95)
            expect(table.findByLogin(probe.login.toUpperCase())?.userId, where).toBe(
              ref.findByLogin(probe.login.toUpperCase())?.userId,
            );
          else expect(table.displayNameOf(probe.userId), where).toBe(ref.get(probe.userId)?.displayName);
        }
        expect(table.size, where).toBe(ref.size);
      }
      expect([...table.values()]).toEqual(ref.values());
      // At close: nobody excluded (no rules, channel and bot not among them), the same list and digest.
      const { frozen, excluded } = await freezeEntrantTable(
        table,
        mergeGiveawaySettings({}),
        { channelLogin: 'nobody_here', botLogin: 'no_bot_here' },
        new Set(),
      );
      expect(excluded).toEqual({});
      const want = reference(ref.values());
      expect(frozen.length).toBe(want.frozen.length);
      expect(Array.from({ length: frozen.length }, (_, p) => frozen.userId(p))).toEqual(
        want.frozen.map((e) => e.userId),
      );
      expect(frozen.digest).toBe(ref.digest());
    });
  }
});
