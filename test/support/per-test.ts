/**
 * Things a test makes and must close after it (a harness, a local stack): `perTest(build, close)`
 * registers the afterEach that closes, in order, everything the test built, and returns `make`
 * (builds one and keeps it for that close); `make.release(t)` stops keeping one the test closed
 * itself. Call it at a file's or a describe's top level. Test-only: it uses vitest's hooks.
 */
import { afterEach } from 'vitest';

export interface PerTest<A extends unknown[], T> {
  (...args: A): Promise<T>;
  release(t: T): void;
}

export function perTest<A extends unknown[], T>(
  build: (...args: A) => Promise<T>,
  close: (t: T) => Promise<void>,
): PerTest<A, T> {
  const open: T[] = [];
  afterEach(async () => {
    for (const t of open.splice(0)) await close(t);
  });
  const make = async (...args: A): Promise<T> => {
    const t = await build(...args);
    open.push(t);
    return t;
  };
  const release = (t: T): void => {
    const i = open.indexOf(t);
    if (i >= 0) open.splice(i, 1);
  };
  return Object.assign(make, { release });
}
