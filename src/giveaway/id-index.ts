/**
 * Row lookup by user id for an entrant table (entrant-table.ts), built for the `!enter` hot path:
 * every chat line of a flood asks "is this user in already?", and a V8 Map of a million strings
 * answers with three scattered memory reads (bucket, entry, key string). Here a decimal id of
 * 1-15 digits (every Twitch id) is keyed by its two 32-bit digit keys (digit-keys.ts: equal keys
 * are equal ids, leading zeros included) in an open-addressing hash table of one typed array,
 * [keyHi, keyLo, row + 1] per slot, probed linearly: a lookup usually reads one cache line. Any
 * other id goes to a Map.
 *
 * Contract: `add(id, row)` records a new id and returns true, or returns false (and records
 * nothing) when the id is in already; `rowOf(id)` is its row or -1. Ids are never removed. The
 * table holds at most half its slots, doubling when full (a rehash reads the slots in order).
 */

import { readDigitKey } from './digit-keys.js';

const EMPTY = 0;
/** Slots at start (a power of two). */
const FIRST_SLOTS = 64;

/** The digit key of the id being looked up (no allocation per lookup). */
const KEY = new Uint32Array(2);

function slotOf(h: number, l: number, mask: number): number {
  const x = Math.imul(h ^ Math.imul(l, 0x9e3779b1), 0x85ebca6b);
  return (x ^ (x >>> 15)) & mask;
}

export class IdIndex {
  /** 3 words per slot: keyHi, keyLo, row + 1 (0 = empty). */
  private slots = new Uint32Array(FIRST_SLOTS * 3);
  private mask = FIRST_SLOTS - 1;
  private used = 0;
  private readonly others = new Map<string, number>();

  /** The row of `id`, or -1. */
  rowOf(id: string): number {
    if (!readDigitKey(id, KEY)) return this.others.get(id) ?? -1;
    const slots = this.slots;
    const mask = this.mask;
    const h = KEY[0]!;
    const l = KEY[1]!;
    for (let i = slotOf(h, l, mask); ; i = (i + 1) & mask) {
      const at = i * 3;
      const row = slots[at + 2]!;
      if (row === EMPTY) return -1;
      if (slots[at] === h && slots[at + 1] === l) return row - 1;
    }
  }

  /** Records `id` at `row`; false (nothing recorded) when `id` is in already. */
  add(id: string, row: number): boolean {
    if (!readDigitKey(id, KEY)) {
      if (this.others.has(id)) return false;
      this.others.set(id, row);
      return true;
    }
    const h = KEY[0]!;
    const l = KEY[1]!;
    const slots = this.slots;
    const mask = this.mask;
    let i = slotOf(h, l, mask);
    for (; ; i = (i + 1) & mask) {
      const at = i * 3;
      if (slots[at + 2] === EMPTY) break;
      if (slots[at] === h && slots[at + 1] === l) return false;
    }
    const at = i * 3;
    slots[at] = h;
    slots[at + 1] = l;
    slots[at + 2] = row + 1;
    if (++this.used * 2 > this.mask + 1) this.grow();
    return true;
  }

  private grow(): void {
    const old = this.slots;
    const size = (this.mask + 1) * 2;
    const slots = new Uint32Array(size * 3);
    const mask = size - 1;
    for (let at = 0; at < old.length; at += 3) {
      const row = old[at + 2]!;
      if (row === EMPTY) continue;
      const h = old[at]!;
      const l = old[at + 1]!;
      let i = slotOf(h, l, mask);
      while (slots[i * 3 + 2] !== EMPTY) i = (i + 1) & mask;
      slots[i * 3] = h;
      slots[i * 3 + 1] = l;
      slots[i * 3 + 2] = row;
    }
    this.slots = slots;
    this.mask = mask;
  }
}
