/**
 * Row lookup by user id for an entrant table (entrant-table.ts), built for the `!enter` hot path:
 * every chat line of a flood asks "is this user in already?", and a V8 Map of a million strings
 * answers with three scattered memory reads (bucket, entry, key string). Here a decimal id of
 * 1-15 digits (every Twitch id) is keyed by its two 32-bit digit keys (fairness/digit-keys.ts: equal keys
 * are equal ids, leading zeros included; keyHi is never 0) in an open-addressing hash table probed
 * linearly: `slots` holds [keyHi, keyLo, row] per slot (12 bytes; keyHi 0 = empty). "In
 * already?" usually reads one cache line (one key in 16 straddles two), and a new id's row is
 * written into that same line: under a chat flood the parser's garbage keeps evicting the table
 * from the CPU's caches, so each line it touches is a memory read. (A separate array of rows,
 * 8-byte key slots beside it, cost a second line per new entrant: about 0.5% of the bot's CPU per
 * new entrant in bench/chat-process.bench.ts's profile; 16-byte slots made the probes slower.)
 * Any other id goes to a Map.
 *
 * Contract: `add(id, row)` records a new id and returns true, or returns false (and records
 * nothing) when the id is in already; `has(id)` tells whether it is in; `rowOf(id)` is its row or
 * -1. Ids are never removed. The table holds at most half its slots, doubling when full (a rehash
 * reads the slots in order). `has` and `rowOf` remember where a decimal id they did not find
 * would go, so an `add` of that same id right after (the `!enter` of a new entrant: "in
 * already?", then "add") neither reads its digits nor probes again. After an `add` that returned
 * true, `addedHi`/`addedLo` are the id's digit key (0, 0 for an id that is not 1-15 decimal
 * digits), so the table stores it without reading the digits a second time.
 */

import { ownedString } from './owned-string.js';
import { readDigitKey } from '../../fairness/index.js';

const EMPTY = 0;
/** Slots at start (a power of two). */
const FIRST_SLOTS = 64;
/** Words per slot: keyHi, keyLo, row. */
const W = 3;

/** The digit key of the id being looked up (no allocation per lookup). */
const KEY = new Uint32Array(2);

function slotOf(h: number, l: number, mask: number): number {
  const x = Math.imul(h ^ Math.imul(l, 0x9e3779b1), 0x85ebca6b);
  return (x ^ (x >>> 15)) & mask;
}

export class IdIndex {
  /** W words per slot: keyHi (0 = empty), keyLo, row. */
  private slots = new Uint32Array(FIRST_SLOTS * W);
  private mask = FIRST_SLOTS - 1;
  private used = 0;
  private readonly others = new Map<string, number>();
  /** The decimal id the last look-up did not find, its key and the free slot it would take (until the next add). */
  private missId: string | undefined;
  private missHi = 0;
  private missLo = 0;
  private missSlot = 0;
  /** The digit key of the id the last successful `add` recorded (0, 0: not a decimal id). */
  addedHi = 0;
  addedLo = 0;

  /** True when `id` is in. */
  has(id: string): boolean {
    if (!readDigitKey(id, KEY)) return this.others.has(id);
    return this.slotOfKey(id, KEY[0]!, KEY[1]!) >= 0;
  }

  /** The row of `id`, or -1. */
  rowOf(id: string): number {
    if (!readDigitKey(id, KEY)) return this.others.get(id) ?? -1;
    const i = this.slotOfKey(id, KEY[0]!, KEY[1]!);
    return i < 0 ? -1 : this.slots[i * W + 2]!;
  }

  /** Records `id` at `row`; false (nothing recorded) when `id` is in already. */
  add(id: string, row: number): boolean {
    if (id !== this.missId) {
      this.missId = undefined;
      if (!readDigitKey(id, KEY)) {
        if (this.others.has(id)) return false;
        this.others.set(ownedString(id), row);
        this.addedHi = 0;
        this.addedLo = 0;
        return true;
      }
      if (this.slotOfKey(id, KEY[0]!, KEY[1]!) >= 0) return false; // (a miss records where it goes)
    }
    this.missId = undefined;
    this.put(this.missSlot, this.missHi, this.missLo, row);
    return true;
  }

  /** The slot holding the key (h, l) of `id`, or -1 (remembering the free slot where it would go). */
  private slotOfKey(id: string, h: number, l: number): number {
    const slots = this.slots;
    const mask = this.mask;
    for (let i = slotOf(h, l, mask); ; i = (i + 1) & mask) {
      const k = slots[i * W]!;
      if (k === EMPTY) {
        this.missId = id;
        this.missHi = h;
        this.missLo = l;
        this.missSlot = i;
        return -1;
      }
      if (k === h && slots[i * W + 1] === l) return i;
    }
  }

  /** Fills the free slot `i`. */
  private put(i: number, h: number, l: number, row: number): void {
    const slots = this.slots;
    slots[i * W] = h;
    slots[i * W + 1] = l;
    slots[i * W + 2] = row;
    this.addedHi = h;
    this.addedLo = l;
    if (++this.used * 2 > this.mask + 1) this.grow();
  }

  private grow(): void {
    const old = this.slots;
    const size = (this.mask + 1) * 2;
    const slots = new Uint32Array(size * W);
    const mask = size - 1;
    for (let j = 0; j < old.length; j += W) {
      const h = old[j]!;
      if (h === EMPTY) continue;
      const l = old[j + 1]!;
      let i = slotOf(h, l, mask);
      while (slots[i * W] !== EMPTY) i = (i + 1) & mask;
      slots[i * W] = h;
      slots[i * W + 1] = l;
      slots[i * W + 2] = old[j + 2]!;
    }
    this.slots = slots;
    this.mask = mask;
  }
}
