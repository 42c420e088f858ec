/**
 * drand beacon facts and checks shared by the bot, `npm run verify` and the browser verify page:
 * chain parameters (the quicknet chain is pinned in drand-chain.ts), round <-> time arithmetic,
 * and the BLS signature check of the `bls-unchained-g1-rfc9380` scheme.
 *
 * Contract: pure functions over plain data; no I/O, no Node-only APIs (the verify page bundles
 * this module for the browser). The scheme, exactly: the message of round r is SHA-256 of r as an
 * 8-byte big-endian unsigned integer; it is hashed to G1 with RFC 9380 (DST
 * `BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_`); the 48-byte compressed G1 signature must verify
 * against the chain's 96-byte compressed G2 public key; the round's randomness is SHA-256 of the
 * signature bytes. Round r is published at genesis + (r - 1) * period seconds.
 * The chain facts and round arithmetic live in drand-chain.ts (no cryptography) and are
 * re-exported here; the running bot imports this module only where a signature or a hash is
 * computed (a beacon round fetched or a draw verified), never at start-up.
 */
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import type { DrandChain } from './drand-chain.js';

export { QUICKNET, roundAfter, roundTimeMs, type DrandChain } from './drand-chain.js';

/** The RFC 9380 domain separation tag of the scheme. */
export const DRAND_G1_DST = 'BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_';

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
export function verifyRoundSignature(
  chain: Pick<DrandChain, 'publicKey'>,
  round: number,
  signatureHex: string,
): boolean {
  try {
    if (!/^[0-9a-f]{96}$/.test(signatureHex) || !/^[0-9a-f]{192}$/.test(chain.publicKey)) return false;
    if (!Number.isSafeInteger(round) || round < 1) return false;
    const sigs = bls12_381.shortSignatures;
    return sigs.verify(
      hexToBytes(signatureHex),
      sigs.hash(roundMessage(round), DRAND_G1_DST),
      hexToBytes(chain.publicKey),
    );
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
  return bytesToHex(
    sha256(new TextEncoder().encode(`${chain.scheme}\n${chain.publicKey}\n${chain.period}\n${chain.genesis}`)),
  );
}
