/**
 * The limiter's clock-resolution guard: release times read from a whole-millisecond clock may lag
 * the true release by up to 1 ms, so on the system clock (and with `clockResolutionMs`) a slot
 * is reusable only `intervalMs + resolution` after the release reading; exact clocks keep
 * `intervalMs`.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../src/shared/clock.js';
import { SlidingWindowLimiter } from '../src/fourthwall/index.js';

const flush = () => new Promise<void>((r) => setImmediate(r));

describe('SlidingWindowLimiter clock resolution', () => {
  it('adds clockResolutionMs to a released slot cooldown', async () => {
    const clock = new ManualClock(0);
    const lim = new SlidingWindowLimiter({ limit: 1, intervalMs: 100 }, clock, { clockResolutionMs: 1 });
    const first = await lim.acquire();
    let grantedAt: number | undefined;
    const second = lim.acquire().then((p) => {
      grantedAt = clock.now();
      return p;
    });
    clock.advance(5);
    first.release();
    clock.advance(100); // t=105: exactly intervalMs after the release reading
    await flush();
    expect(grantedAt).toBeUndefined();
    clock.advance(1);
    await flush();
    expect(grantedAt).toBe(106);
    (await second).release();
  });

  it('keeps an exact clock exact by default', async () => {
    const clock = new ManualClock(0);
    const lim = new SlidingWindowLimiter({ limit: 1, intervalMs: 100 }, clock);
    const first = await lim.acquire();
    const second = lim.acquire();
    first.release();
    clock.advance(100);
    await expect(second).resolves.toBeDefined();
  });

  it('on the system clock, reuses a slot no earlier than intervalMs + 1 ms after the release reading', async () => {
    const lim = new SlidingWindowLimiter({ limit: 1, intervalMs: 20 }, systemClock);
    const first = await lim.acquire();
    const second = lim.acquire();
    const releasedAt = Date.now();
    first.release();
    await second;
    expect(Date.now() - releasedAt).toBeGreaterThanOrEqual(21);
  });

  it('rejects a negative resolution', () => {
    expect(
      () => new SlidingWindowLimiter({ limit: 1, intervalMs: 10 }, new ManualClock(0), { clockResolutionMs: -1 }),
    ).toThrow(RangeError);
  });
});
