/**
 * Id factory of the Fourthwall sandbox. Owns the shapes of generated ids: Fourthwall-style
 * prefixed ids (`gdr_`, `giv_`, `gft_`, `gpg_`, `wcon_`, `weve_`, ... followed by 22 base64url
 * characters), uuids, 8-character friendly ids and opaque secrets (tokens, codes).
 * With a seed every id is derived from the seed and a counter (reproducible runs); without one
 * ids come from node:crypto. It does not decide which object gets which prefix.
 */
import { createHash, randomBytes } from 'node:crypto';

export interface IdFactory {
  /** `prefix_` + 22 base64url characters, e.g. `gdr_EdJvIXu3SEiXe_QkPavHSA`. */
  prefixed(prefix: string): string;
  /** A version-4-shaped uuid. */
  uuid(): string;
  /** 8 characters of A-Z and 0-9, like Fourthwall's `D3XZFWPP`. */
  friendly(): string;
  /** A 32-byte base64url secret (tokens, authorization codes). Always from node:crypto. */
  secret(): string;
}

const FRIENDLY_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** Builds the id factory; `seed` makes every non-secret id reproducible. */
export function createIdFactory(seed?: string): IdFactory {
  let counter = 0;
  const bytes = (n: number): Buffer => {
    if (seed === undefined) return randomBytes(n);
    const out = createHash('sha256').update(`${seed}:${counter++}`).digest();
    return out.subarray(0, n);
  };
  return {
    prefixed: (prefix) => `${prefix}_${bytes(16).toString('base64url')}`,
    uuid() {
      const b = Buffer.from(bytes(16));
      b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
      b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
      const h = b.toString('hex');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    },
    friendly() {
      return [...bytes(8)].map((x) => FRIENDLY_ALPHABET[x % FRIENDLY_ALPHABET.length]).join('');
    },
    secret: () => randomBytes(32).toString('base64url'),
  };
}
