/**
 * IdSketch: a 128-bit sketch of a set of user ids, keyed by their last two characters, for a
 * chat listener that must let most lines of a flood pass at the cost of two character reads.
 *
 * Contract: `mayHave` is never false for an id that was added since the last `reset`, and false
 * for most other ids (for all of them while only a handful are held). Nothing is allocated per
 * call. Holds no ids, only bits: it cannot list or count what was added.
 */
export class IdSketch {
  private readonly bits = new Uint32Array(4);

  private static keyOf(id: string): number {
    const n = id.length;
    return n === 0 ? 0 : (id.charCodeAt(n - 1) * 31 + (n > 1 ? id.charCodeAt(n - 2) : 0)) & 127;
  }

  /** Forgets every id, then adds `ids`. */
  reset(ids: Iterable<string> = []): void {
    this.bits.fill(0);
    for (const id of ids) this.add(id);
  }

  add(id: string): void {
    const k = IdSketch.keyOf(id);
    this.bits[k >>> 5]! |= 1 << (k & 31);
  }

  mayHave(id: string): boolean {
    const k = IdSketch.keyOf(id);
    return (this.bits[k >>> 5]! & (1 << (k & 31))) !== 0;
  }
}
