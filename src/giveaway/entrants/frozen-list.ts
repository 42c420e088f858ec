/**
 * The frozen entrant list of a closed draw as the engine holds it: positions into the rows it was
 * frozen from (an entrant table, or a stored list), the weights in canonical order and the digest.
 * Nothing is copied per entrant, so snapshots, saves and events never carry a million objects.
 *
 * Contract: position p is the entrant at canonical position p (fairness/procedure.ts step 2); `digest` is
 * the entrants digest of exactly this list. A freshly frozen list also holds the bytes the digest
 * hashed, handed over once (`takeCanonicalBytes`) so storage writes them instead of serialising
 * the list a second time. Rows are read through the source, which must not
 * change afterwards (entrant tables only grow while open; a closed draw's table is final).
 * Does not: validate (fairness/canonical.ts did at close) or store anything.
 */
import { canonicalise, runToEnd, type Canonical, type ListRows } from '../../fairness/index.js';
import { frozenRowsOf, type FrozenEntrant, type FrozenRows } from '../model.js';

export class FrozenList implements FrozenRows {
  constructor(
    private readonly source: ListRows,
    private readonly order: Uint32Array,
    /** Weight at each canonical position. */
    readonly weights: Float64Array,
    readonly digest: string,
    private canonicalBytes?: Buffer[],
    /** The weights' Fenwick array (fairness/procedure.ts fenwickSteps), when built during the freeze. */
    readonly fenwick?: Float64Array,
  ) {}

  /** The list of `canonical` (fairness/canonical.ts) over `source`. */
  static of(source: ListRows, canonical: Canonical, fenwick?: Float64Array): FrozenList {
    return new FrozenList(source, canonical.order, canonical.weights, canonical.digest, canonical.bytes, fenwick);
  }

  /**
   * The exact bytes `digest` hashed, once: later calls (and lists loaded from storage) return
   * undefined, so the memory goes with the first writer.
   */
  takeCanonicalBytes(): Buffer[] | undefined {
    const bytes = this.canonicalBytes;
    this.canonicalBytes = undefined;
    return bytes;
  }

  /** A stored list already in canonical order with its recorded digest (not re-checked). */
  static fromStored(list: readonly FrozenEntrant[], digest: string): FrozenList {
    const order = new Uint32Array(list.length);
    const weights = new Float64Array(list.length);
    for (let i = 0; i < list.length; i++) {
      order[i] = i;
      weights[i] = list[i]!.weight;
    }
    return new FrozenList(frozenRowsOf(list), order, weights, digest);
  }

  /** Freezes a plain list synchronously (validates, sorts, digests). */
  static freeze(list: readonly FrozenEntrant[]): FrozenList {
    const rows = frozenRowsOf(list);
    return FrozenList.of(rows, runToEnd(canonicalise(rows)));
  }

  get length(): number {
    return this.order.length;
  }

  userId(p: number): string {
    return this.source.userId(this.order[p]!);
  }

  login(p: number): string {
    return this.source.login(this.order[p]!);
  }

  weight(p: number): number {
    return this.weights[p]!;
  }

  entrant(p: number): FrozenEntrant {
    return { userId: this.userId(p), login: this.login(p), weight: this.weights[p]! };
  }

  /** The whole list as objects (small lists, tests and exports only). */
  toArray(): FrozenEntrant[] {
    const out = new Array<FrozenEntrant>(this.length);
    for (let p = 0; p < this.length; p++) out[p] = this.entrant(p);
    return out;
  }
}
