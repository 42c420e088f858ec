/**
 * Randomness as an injectable port. Prizes only ever use cryptographic randomness
 * (node:crypto); tests may inject a deterministic source to get known answers.
 */
import { randomBytes } from 'node:crypto';

export interface RandomSource {
  /** `n` random bytes. */
  bytes(n: number): Buffer;
}

export const cryptoRandom: RandomSource = {
  bytes: (n) => randomBytes(n),
};
