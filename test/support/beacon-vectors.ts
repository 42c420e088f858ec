/**
 * Known-answer vectors of `giftdrop-hmac-sha256-drand-v2`, computed ONCE (with the Node
 * implementation, then frozen here) over two real drand quicknet rounds (2 and 3, signatures as
 * published by the League of Entropy relays), plus builders of the matching DrawRecords. The same
 * vectors are checked in Node (test/beacon-fairness.test.ts) and in the browser page
 * (test/verify-page.test.ts). If an implementation change alters any of these, it broke the
 * procedure: old draws would no longer verify.
 */
import { createHash } from 'node:crypto';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { commitmentOf, freezeEntrants, pickSequence } from '../../src/fairness/procedure.js';
import { FAIRNESS_ALGORITHM_V2, drawKey } from '../../src/fairness/beacon-key.js';
import type { DrawRecord, FrozenEntrant } from '../../src/giveaway/model.js';
import {
  QUICKNET,
  chainHashOf,
  publicKeyOf,
  randomnessOf,
  roundTimeMs,
  signRound,
  type DrandChain,
} from '../../src/fairness/drand.js';

export interface KnownAnswer {
  label: string;
  seed: string;
  commitment: string;
  /** n entrants: userId 1000 + 7i, login viewer_i, weight 1 + (5i mod 4). */
  entrantCount: number;
  digest: string;
  round: number;
  signature: string;
  randomness: string;
  /** Entrant list frozen at this time (the round is the first after it). */
  frozenAt: string;
  key: string;
  winners: string[];
}

export const KNOWN_ANSWERS: readonly KnownAnswer[] = [
  {
    label: 'kat-a',
    seed: 'b876d6b8805bc5b4d8c6d10f3b62bc5f0b5440755c9ce7676976139ae2ad0a98',
    commitment: 'f7258d79b86ef72f619f2f68eace2fc65e7c63b0c09b6a2fef13e135a77d39d2',
    entrantCount: 12,
    digest: '2f3db29c7014b43cdb6a6ec8961df97dbceb88f9b6921073029dc80d81577977',
    round: 3,
    signature: 'b3fab6df720b68cc47175f2c777e86d84187caab5770906f515ff1099cb01e4deaa027075d860823e49477b93c72bd64',
    randomness: '7ef4621ace1c6da4eb2eee7cd901f81385bca5b189771ec0f08d0d2566dd1a21',
    frozenAt: new Date((QUICKNET.genesis + 4) * 1000).toISOString(),
    key: '3b76f1117113280cbe90a2cfb4d0b80305d80ba53682f14cf2fc11ae7f8466d0',
    winners: ['viewer_1', 'viewer_10', 'viewer_4'],
  },
  {
    label: 'kat-b',
    seed: '82c02c7d60b57d89d00b9caa91f7ad02c49991d9608e2a8d00dbcec019dca36a',
    commitment: 'a72a1f81d368d1e8fdd4079dd0d73ecdec78d2c8bbdafc9132b4ceac36cf6532',
    entrantCount: 40,
    digest: 'f46fd7cbf93427827f555fcb2cc9974fb986dfb081c1a2ace2797af369815994',
    round: 2,
    signature: 'b6b6a585449b66eb12e875b64fcbab3799861a00e4dbf092d99e969a5eac57dd3f798acf61e705fe4f093db926626807',
    randomness: '5782d6987841c654515a0e72b2d1ebb4e741234042c37cb19608ae50d93fb60c',
    frozenAt: new Date((QUICKNET.genesis + 1) * 1000 + 500).toISOString(),
    key: '079c74107d80c52e73a7ac8cc1d409bad9cc8f015a217fd60dab25faa15b896f',
    winners: ['viewer_11', 'viewer_10', 'viewer_26', 'viewer_2', 'viewer_14'],
  },
];

export function vectorEntrants(n: number): FrozenEntrant[] {
  return Array.from({ length: n }, (_, i) => ({
    userId: String(1000 + i * 7),
    login: `viewer_${i}`,
    weight: 1 + ((i * 5) % 4),
  }));
}

/** The finished v2 DrawRecord of a vector (winners at picks 0..k-1). */
export function vectorRecord(v: KnownAnswer): DrawRecord {
  const { frozen } = freezeEntrants(vectorEntrants(v.entrantCount));
  const byLogin = new Map(frozen.map((e) => [e.login, e]));
  return {
    id: `draw-${v.label}`,
    kind: 'link-giveaway',
    status: 'finished',
    source: {},
    offer: { id: 'p1', name: 'Hoodie <b>&' },
    gifts: v.winners.length,
    openedAt: new Date((QUICKNET.genesis - 60) * 1000).toISOString(),
    closesAt: v.frozenAt,
    closedAt: new Date(Date.parse(v.frozenAt) + 5000).toISOString(),
    entrants: frozen.length,
    winners: v.winners.map((login, pick) => {
      const e = byLogin.get(login)!;
      return { userId: e.userId, login, displayName: login, pick, redeemUrl: `https://secret.example/${login}` };
    }),
    fairness: {
      commitment: v.commitment,
      seed: v.seed,
      entrantsDigest: v.digest,
      algorithm: FAIRNESS_ALGORITHM_V2,
      frozenAt: v.frozenAt,
      beacon: { chain: QUICKNET.hash, round: v.round, randomness: v.randomness, signature: v.signature },
    },
    frozenEntrants: frozen,
  };
}

/** A local chain (sandbox-style, deterministic key) for records that need rounds quicknet has not given us. */
export function localChain(label = 'test-chain'): { chain: DrandChain; secretKey: Uint8Array } {
  const secretKey = bls12_381.utils.randomSecretKey(createHash('sha384').update(label).digest());
  const partial = {
    publicKey: publicKeyOf(secretKey),
    genesis: 1_767_225_600,
    period: 3,
    scheme: 'bls-unchained-g1-rfc9380' as const,
  };
  return { chain: { ...partial, hash: chainHashOf(partial) }, secretKey };
}

/**
 * A finished v2 record on a local sandbox chain, made in sandbox mode (a live draw may not rest on
 * a sandbox beacon): `entrants` entrants (weights 1..3), `winners` winners, then `rerolls` rerolls
 * of pick 0's slot taking the next picks, honestly computed.
 */
export function sandboxRecord(o: { id: string; entrants?: number; winners?: number; rerolls?: number }): DrawRecord {
  const { chain, secretKey } = localChain();
  const seed = createHash('sha256').update(`seed:${o.id}`).digest();
  const { frozen, digest } = freezeEntrants(
    Array.from({ length: o.entrants ?? 20 }, (_, i) => ({
      userId: String(5000 + i),
      login: `fan${i}`,
      weight: 1 + (i % 3),
    })),
  );
  const frozenMs = roundTimeMs(chain, 100) + 1200;
  const round = 101;
  const signature = signRound(secretKey, round);
  const randomness = randomnessOf(signature);
  const k = o.winners ?? 3;
  const r = o.rerolls ?? 0;
  const seq = pickSequence(drawKey(seed, digest, round, randomness), digest, frozen, k + r);
  const winners = seq.slice(0, k).map((index, pick) => ({
    userId: frozen[index]!.userId,
    login: frozen[index]!.login,
    displayName: frozen[index]!.login,
    pick,
  }));
  const rerolls: NonNullable<DrawRecord['rerolls']> = [];
  for (let j = 0; j < r; j++) {
    const old = winners[0]!;
    const next = frozen[seq[k + j]!]!;
    rerolls.push({
      at: new Date(frozenMs + 60_000 * (j + 1)).toISOString(),
      replacedUserId: old.userId,
      replacedLogin: old.login,
      reason: 'command',
      newUserId: next.userId,
      pick: k + j,
    });
    winners[0] = { userId: next.userId, login: next.login, displayName: next.login, pick: k + j };
  }
  return {
    id: o.id,
    kind: 'link-giveaway',
    status: 'finished',
    mode: 'sandbox',
    source: {},
    offer: { id: 'p2', name: 'Mug' },
    gifts: k,
    openedAt: new Date(frozenMs - 60_000).toISOString(),
    closesAt: new Date(frozenMs).toISOString(),
    closedAt: new Date(frozenMs + 5_000).toISOString(),
    entrants: frozen.length,
    winners,
    rerolls,
    fairness: {
      commitment: commitmentOf(seed),
      seed: seed.toString('hex'),
      entrantsDigest: digest,
      algorithm: FAIRNESS_ALGORITHM_V2,
      frozenAt: new Date(frozenMs).toISOString(),
      beacon: {
        chain: chain.hash,
        round,
        randomness,
        signature,
        sandbox: { publicKey: chain.publicKey, genesis: chain.genesis, period: chain.period },
      },
    },
    frozenEntrants: frozen,
  };
}
