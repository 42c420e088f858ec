/**
 * drand beacon facts and checks shared by the bot, `npm run verify` and the browser verify page:
 * chain parameters (the quicknet chain is pinned here), round <-> time arithmetic, and the BLS
 * signature check of the `bls-unchained-g1-rfc9380` scheme.
 *
 * Contract: pure functions over plain data; no I/O, no Node-only APIs (the verify page bundles
 * this module for the browser). The scheme, exactly: the message of round r is SHA-256 of r as an
 * 8-byte big-endian unsigned integer; it is hashed to G1 with RFC 9380 (DST
 * `BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_`); the 48-byte compressed G1 signature must verify
 * against the chain's 96-byte compressed G2 public key; the round's randomness is SHA-256 of the
 * signature bytes. Round r is published at genesis + (r - 1) * period seconds.
 */
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';

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

/** The RFC 9380 domain separation tag of the scheme. */
export const DRAND_G1_DST = 'BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_';

/** Publication time of `round`, ms since the epoch. */
export function roundTimeMs(chain: Pick<DrandChain, 'genesis' | 'period'>, round: number): number {
  return (chain.genesis + (round - 1) * chain.period) * 1000;
}

/** The first round published strictly after `timeMs` (round 1 when `timeMs` is before genesis). */
export function roundAfter(chain: Pick<DrandChain, 'genesis' | 'period'>, timeMs: number): number {
  if (timeMs < chain.genesis * 1000) return 1;
  return Math.floor((timeMs / 1000 - chain.genesis) / chain.period) + 2;
}

/** The 32-byte message signed for `round`: SHA-256 of the round as 8-byte big-endian. */
export function roundMessage(round: number): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(round));
  return sha256(bytes);
}

/** Lower-case hex SHA-256 of the signature: the round's randomness. */
export function randomnessOf(signatureHex: string): string {
  return bytesToHex(sha256(hexToBytes(signatureHex)));
}

/** True when `signatureHex` is the chain's valid signature of `round` (never throws). */
export function verifyRoundSignature(chain: Pick<DrandChain, 'publicKey'>, round: number, signatureHex: string): boolean {
  try {
    if (!/^[0-9a-f]{96}$/.test(signatureHex) || !/^[0-9a-f]{192}$/.test(chain.publicKey)) return false;
    if (!Number.isSafeInteger(round) || round < 1) return false;
    const sigs = bls12_381.shortSignatures;
    return sigs.verify(hexToBytes(signatureHex), sigs.hash(roundMessage(round), DRAND_G1_DST), hexToBytes(chain.publicKey));
  } catch {
    return false;
  }
}

/** Signs `round` with a secret key (the sandbox beacon). Returns the 96-hex compressed signature. */
export function signRound(secretKey: Uint8Array, round: number): string {
  const sigs = bls12_381.shortSignatures;
  return bytesToHex(sigs.Signature.toBytes(sigs.sign(sigs.hash(roundMessage(round), DRAND_G1_DST), secretKey)));
}

/** The compressed G2 public key (192 hex) of a secret key. */
export function publicKeyOf(secretKey: Uint8Array): string {
  return bytesToHex(bls12_381.shortSignatures.getPublicKey(secretKey).toBytes(true));
}

/** A chain hash for a locally made chain: SHA-256 over its public key, period and genesis. */
export function chainHashOf(chain: Omit<DrandChain, 'hash'>): string {
  return bytesToHex(sha256(new TextEncoder().encode(`${chain.scheme}\n${chain.publicKey}\n${chain.period}\n${chain.genesis}`)));
}
