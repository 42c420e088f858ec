/**
 * Waiting on output that grows (a child process's stdout, its lines): `outputWaiter()` is told of
 * each growth (`changed`) and `until(test, timeoutMs, fail)` resolves with the first truthy
 * `test()` (checked at once and on every change), or rejects with `fail()` after `timeoutMs` of
 * real time. `followText(stream)` keeps a stream's text and waits on it.
 */
import type { Readable } from 'node:stream';

export interface OutputWaiter {
  changed(): void;
  until<T>(test: () => T | false | undefined, timeoutMs: number, fail: () => Error): Promise<T>;
}

export function outputWaiter(): OutputWaiter {
  const waiters = new Set<() => void>();
  return {
    changed: () => {
      for (const w of [...waiters]) w();
    },
    until: <T>(test: () => T | false | undefined, timeoutMs: number, fail: () => Error) =>
      new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(fail());
        }, timeoutMs);
        const check = (): void => {
          let hit: T | false | undefined;
          try {
            hit = test();
          } catch (err) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(err);
            return;
          }
          if (hit === false || hit === undefined) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(hit);
        };
        waiters.add(check);
        check();
      }),
  };
}

/** `stream`'s text as it comes (UTF-8), and a wait for `test(text)` to hold. */
export function followText(stream: Readable): {
  text: () => string;
  until(test: (text: string) => boolean, timeoutMs: number, fail: (text: string) => Error): Promise<void>;
} {
  let text = '';
  const output = outputWaiter();
  stream.setEncoding('utf8').on('data', (d: string) => {
    text += d;
    output.changed();
  });
  return {
    text: () => text,
    until: async (test, timeoutMs, fail) => {
      await output.until(
        () => test(text),
        timeoutMs,
        () => fail(text),
      );
    },
  };
}
