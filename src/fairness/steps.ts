/**
 * Work in steps: long CPU work (the canonical list's sort and digest, the entrant table's freeze,
 * the Fenwick tree of the picks) written as a generator that yields between chunks, and the two
 * ways to drive one.
 *
 * Contract: `runToEnd` drives it synchronously (verify, tests); `runSliced` drives it on the event
 * loop, yielding to I/O whenever a slice has run for its budget, so a million entrants never block
 * the loop for long. Does not: know what the work is.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Work in steps: a generator that yields between chunks and returns its result. */
export type Steps<T> = Generator<void, T, void>;

/** Runs `steps` to the end synchronously. */
export function runToEnd<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Runs `steps` on the event loop, letting I/O run whenever a slice has taken `budgetMs`. */
export async function runSliced<T>(steps: Steps<T>, budgetMs = 8): Promise<T> {
  let sliceStart = performance.now();
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    if (performance.now() - sliceStart >= budgetMs) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
}
