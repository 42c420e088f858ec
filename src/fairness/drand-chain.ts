/**
 * drand chain facts with no cryptography: the chain description, the pinned quicknet chain and
 * round <-> time arithmetic. Split from drand.ts (which re-exports all of it) so the running bot
 * can schedule and record beacon rounds without loading the BLS code (@noble/curves, the largest
 * module a beacon draw needs): that loads only when a round's signature is checked.
 *
 * Contract: pure functions over plain data; no imports, no I/O (the verify page bundles it for
 * the browser through drand.ts). Round r is published at genesis + (r - 1) * period seconds.
 */

/** What a client needs to know about a beacon chain to check its rounds. */
export interface DrandChain {
  /** Chain hash (64 hex). */
  hash: string;
  /** Compressed G2 public key (192 hex). */
  publicKey: string;
  /** Unix seconds of round 1. */
  genesis: number;
  /** Seconds between rounds. */
  period: number;
  scheme: 'bls-unchained-g1-rfc9380';
}

/** drand quicknet (League of Entropy mainnet, 3 s rounds): the chain live draws use. */
export const QUICKNET: DrandChain = Object.freeze({
  hash: '52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971',
  publicKey:
    '83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a',
  genesis: 1692803367,
  period: 3,
  scheme: 'bls-unchained-g1-rfc9380',
});

/** Publication time of `round`, ms since the epoch. */
export function roundTimeMs(chain: Pick<DrandChain, 'genesis' | 'period'>, round: number): number {
  return (chain.genesis + (round - 1) * chain.period) * 1000;
}

/** The first round published strictly after `timeMs` (round 1 when `timeMs` is before genesis). */
export function roundAfter(chain: Pick<DrandChain, 'genesis' | 'period'>, timeMs: number): number {
  if (timeMs < chain.genesis * 1000) return 1;
  return Math.floor((timeMs / 1000 - chain.genesis) / chain.period) + 2;
}
