/**
 * The shapes of a draw's fairness data, as fairness reads them from a stored draw: the frozen
 * entrant list, the fairness block (commitment, seed, digest, beacon round) and the parts of a
 * record that `verifyDraw` replays (winners, rerolls, set-aside picks). The giveaway domain's
 * DrawRecord (src/giveaway/model.ts) is built on these types, so every stored record is a
 * VerifiableDraw. Types only.
 */

/** One entrant of the frozen, canonically ordered list that fairness is computed over. */
export interface FrozenEntrant {
  userId: string;
  login: string;
  weight: number;
}

/**
 * A drand round as recorded in the history. Without `randomness`/`signature` the round was
 * announced but not fetched yet. A sandbox beacon also records its key and schedule (`sandbox`).
 */
export type BeaconRecord =
  | {
      chain: string;
      round: number;
      randomness?: string;
      signature?: string;
      sandbox?: { publicKey: string; genesis: number; period: number };
    }
  | { unavailable: true; chain?: string; round?: number };

/** A draw's fairness block (the history's `fairness`). */
export interface FairnessData {
  /** Hex SHA-256 of the seed, announced at open. */
  commitment: string;
  /** Hex 32-byte seed, revealed once the draw is closed. */
  seed?: string;
  /** Hex SHA-256 of the canonical frozen entrant list. */
  entrantsDigest?: string;
  algorithm: string;
  /** When the entrant list was frozen (ISO); the beacon round must be the first published after it. */
  frozenAt?: string;
  /** The public beacon round the draw used (beacon-key.ts), or why it could not be used. */
  beacon?: BeaconRecord;
}

/** What `verifyDraw` and the beacon checks read of a stored draw. */
export interface VerifiableDraw {
  status: string;
  /** Which mode's data this is (older records: live). */
  mode?: 'live' | 'sandbox';
  fairness: FairnessData;
  frozenEntrants?: FrozenEntrant[];
  /** The current winners at their pick positions. */
  winners?: readonly { userId: string; login: string; pick: number }[];
  /** Each reroll removed exactly one winner. */
  rerolls?: readonly { replacedUserId: string; replacedLogin: string; newUserId?: string; pick?: number }[];
  /** Picks the account rules set aside, in pick order. */
  setAside?: readonly { pick: number; userId: string; login: string }[];
}
