/**
 * The fair queue of scarce public work (src/http/fair-queue.ts, the claim page's code exchanges):
 * a client that queues many jobs waits behind its own; another client's job gets the next free
 * slot after at most one job of each other waiting lane; a full lane or a wait past the bound is
 * 'busy' for that lane only; a free slot never refuses. Jobs are promises the test settles; time
 * is a ManualClock (no timing luck).
 */
import { describe, expect, it } from 'vitest';
import { FairQueue } from '../src/http/fair-queue.js';
import { ManualClock } from '../src/shared/clock.js';

/** A job the test finishes by hand. */
function gate(): { job: () => Promise<string>; finish: (v: string) => void; started: () => boolean } {
  let resolve!: (v: string) => void;
  let started = false;
  const p = new Promise<string>((r) => (resolve = r));
  return {
    job: () => {
      started = true;
      return p;
    },
    finish: (v) => resolve(v),
    started: () => started,
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('FairQueue', () => {
  it("a flooding client waits behind its own jobs: the winner's job takes the next free slot", async () => {
    const clock = new ManualClock();
    const q = new FairQueue({ maxInFlight: 2, maxWaitingPerKey: 8, maxWaiting: 100, maxWaitMs: 60_000, clock });
    const junk = Array.from({ length: 11 }, () => gate());
    const junkResults = junk.map((g) => q.run('attacker', g.job));
    expect(junk.filter((g) => g.started())).toHaveLength(2);
    // the lane holds 8; a ninth waiting job of the same client is refused (its own lane)
    expect(await junkResults[10]).toBe('busy');
    const winner = gate();
    const won = q.run('winner', winner.job);
    expect(winner.started()).toBe(false);
    junk[0]!.finish('refused');
    await tick();
    // the freed slot goes to the winner's lane, ahead of seven more attacker jobs
    expect(winner.started()).toBe(true);
    expect(junk.filter((g) => g.started())).toHaveLength(2);
    winner.finish('logged in');
    expect(await won).toBe('logged in');
    await tick();
    expect(junk.filter((g) => g.started())).toHaveLength(3);
  });

  it('a job waiting past maxWaitMs is busy; a free slot never refuses', async () => {
    const clock = new ManualClock();
    const q = new FairQueue({ maxInFlight: 1, maxWaitingPerKey: 8, maxWaiting: 100, maxWaitMs: 15_000, clock });
    const a = gate();
    void q.run('x', a.job);
    const waiting = q.run('y', gate().job);
    clock.advance(15_000);
    expect(await waiting).toBe('busy');
    expect(q.load).toEqual({ running: 1, waiting: 0 });
    a.finish('done');
    await tick();
    const free = gate();
    const r = q.run('y', free.job);
    expect(free.started()).toBe(true);
    free.finish('ok');
    expect(await r).toBe('ok');
  });
});
