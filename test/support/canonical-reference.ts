/**
 * For the canonical-list tests: the fairness procedure's steps 2-3 (src/fairness/procedure.ts) computed the
 * slow plain way, as the yardstick the fast paths are compared with, and a seeded generator for
 * their inputs.
 */
import { createHash } from 'node:crypto';
import type { FrozenEntrant } from '../../src/giveaway/model.js';

/** The procedure exactly as src/fairness/procedure.ts states it: default string sort by userId, one text line per entrant, SHA-256. */
export function reference(list: readonly FrozenEntrant[]): { frozen: FrozenEntrant[]; text: string; digest: string } {
  const frozen = list.map((e) => ({ userId: e.userId, login: e.login, weight: e.weight }));
  frozen.sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0));
  const text = frozen.map((e) => `${e.userId}\t${e.login}\t${e.weight}\n`).join('');
  return { frozen, text, digest: createHash('sha256').update(text, 'utf8').digest('hex') };
}

/** A deterministic pseudo-random generator (xorshift32). */
export function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}
