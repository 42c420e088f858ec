/**
 * Time as an injectable port. Production uses the system clock; tests use ManualClock to move
 * time forward deterministically (no sleeps, no timing luck). Timers created through a Clock
 * are always cancellable.
 */
export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(t) };
  },
};

/** A clock that only moves when told to. Timers fire in due order inside `advance`. */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = ++this.seq;
    this.timers.set(id, { at: this.current + Math.max(0, ms), fn });
    return { cancel: () => void this.timers.delete(id) };
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      let nextId: number | undefined;
      let next: { at: number; fn: () => void } | undefined;
      for (const [id, t] of this.timers) {
        if (t.at <= target && (!next || t.at < next.at)) {
          next = t;
          nextId = id;
        }
      }
      if (!next || nextId === undefined) break;
      this.timers.delete(nextId);
      this.current = next.at;
      next.fn();
    }
    this.current = target;
  }

  /** Number of timers still waiting. */
  pending(): number {
    return this.timers.size;
  }
}
