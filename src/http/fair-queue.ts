/**
 * A fair queue for scarce work on the public surface (the claim page's code exchanges with
 * Twitch): at most `maxInFlight` jobs run at once; the others wait in one lane per client key
 * (surfaces.ts `clientOf`), and a freed slot goes to the waiting lane whose client has the fewest
 * jobs running (ties: the lane that waited longest for its turn), so a client that queues many
 * jobs waits behind its own, never in front of anyone else's: a junk flood costs its sender, and
 * another client's job takes the next free slot while the flooder holds any.
 *
 * Contract: `run(key, job)` resolves with the job's result, or 'busy' without running it when
 * that key's lane already holds `maxWaitingPerKey` jobs, when `maxWaiting` jobs wait in all, or
 * when the job waited `maxWaitMs` without a slot. A job's failure is its caller's (rejected as
 * is). Nothing is refused while a slot is free. Time comes from `now`/`setTimeout` of the clock
 * given (default the system's). Does not decide who a client is or what the jobs do.
 */
import { systemClock, type Clock, type TimerHandle } from '../shared/clock.js';

export interface FairQueueOptions {
  maxInFlight: number;
  maxWaitingPerKey: number;
  maxWaiting: number;
  maxWaitMs: number;
  clock?: Clock;
}

interface Waiter {
  start(): void;
  timer: TimerHandle;
}

export class FairQueue {
  private running = 0;
  private waiting = 0;
  private readonly runningOf = new Map<string, number>();
  /** Lanes in turn order: the next slot goes to the first lane (which then moves to the end). */
  private readonly lanes = new Map<string, Waiter[]>();
  private readonly clock: Clock;

  constructor(private readonly o: FairQueueOptions) {
    this.clock = o.clock ?? systemClock;
  }

  /** Jobs running now and jobs waiting (tests, logs). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting };
  }

  run<T>(key: string, job: () => Promise<T>): Promise<T | 'busy'> {
    if (this.running < this.o.maxInFlight && this.waiting === 0) return this.start(key, job);
    const lane = this.lanes.get(key) ?? [];
    if (lane.length >= this.o.maxWaitingPerKey || this.waiting >= this.o.maxWaiting) return Promise.resolve('busy');
    return new Promise<T | 'busy'>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          waiter.timer.cancel();
          this.start(key, job).then(resolve, reject);
        },
        timer: this.clock.setTimeout(() => {
          const mine = this.lanes.get(key);
          const i = mine ? mine.indexOf(waiter) : -1;
          if (i < 0) return;
          mine!.splice(i, 1);
          if (mine!.length === 0) this.lanes.delete(key);
          this.waiting -= 1;
          resolve('busy');
        }, this.o.maxWaitMs),
      };
      lane.push(waiter);
      this.lanes.set(key, lane);
      this.waiting += 1;
    });
  }

  private start<T>(key: string, job: () => Promise<T>): Promise<T> {
    this.running += 1;
    this.runningOf.set(key, (this.runningOf.get(key) ?? 0) + 1);
    let p: Promise<T>;
    try {
      p = job();
    } catch (err) {
      p = Promise.reject(err);
    }
    const done = () => {
      this.running -= 1;
      const left = (this.runningOf.get(key) ?? 1) - 1;
      if (left > 0) this.runningOf.set(key, left);
      else this.runningOf.delete(key);
      this.next();
    };
    p.then(done, done);
    return p;
  }

  /** Gives free slots to the waiting lanes: fewest jobs running first, then turn order. */
  private next(): void {
    while (this.running < this.o.maxInFlight && this.waiting > 0) {
      let key = '';
      let lane: Waiter[] = [];
      let fewest = Infinity;
      for (const [k, l] of this.lanes) {
        const n = this.runningOf.get(k) ?? 0;
        if (n < fewest) [key, lane, fewest] = [k, l, n];
        if (n === 0) break;
      }
      const waiter = lane.shift()!;
      this.lanes.delete(key);
      if (lane.length) this.lanes.set(key, lane); // to the end of the turn order
      this.waiting -= 1;
      waiter.start();
    }
  }
}
