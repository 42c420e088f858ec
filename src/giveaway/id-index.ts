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
 * `rowOf` remembers where a decimal id it did not find would go, so an `add` of that same id
 * right after (the `!enter` of a new entrant: "in already?", then "add") neither reads its digits
 * nor probes again. After an `add` that returned true, `addedHi`/`addedLo` are the id's digit key
 * (0, 0 for an id that is not 1-15 decimal digits), so the table stores it without reading the
 * digits a second time.
 */

import { ownedString } from '../shared/owned-string.js';
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
  /** The decimal id the last `rowOf` did not find, its key and the free slot it would take (until the next add). */
  private missId: string | undefined;
  private missHi = 0;
  private missLo = 0;
  private missSlot = 0;
  /** The digit key of the id the last successful `add` recorded (0, 0: not a decimal id). */
  addedHi = 0;
  addedLo = 0;

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
      if (row === EMPTY) {
        this.missId = id;
        this.missHi = h;
        this.missLo = l;
        this.missSlot = i;
        return -1;
      }
      if (slots[at] === h && slots[at + 1] === l) return row - 1;
    }
  }

  /** Records `id` at `row`; false (nothing recorded) when `id` is in already. */
  add(id: string, row: number): boolean {
    if (id === this.missId) {
      this.missId = undefined;
      this.put(this.missSlot, this.missHi, this.missLo, row);
      return true;
    }
    this.missId = undefined;
    if (!readDigitKey(id, KEY)) {
      if (this.others.has(id)) return false;
      this.others.set(ownedString(id), row);
      this.addedHi = 0;
      this.addedLo = 0;
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
    this.put(i, h, l, row);
    return true;
  }

  /** Fills the free slot `i`. */
  private put(i: number, h: number, l: number, row: number): void {
    const slots = this.slots;
    const at = i * 3;
    slots[at] = h;
    slots[at + 1] = l;
    slots[at + 2] = row + 1;
    this.addedHi = h;
    this.addedLo = l;
    if (++this.used * 2 > this.mask + 1) this.grow();
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
