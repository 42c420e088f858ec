/**
 * The anchor of the chat-ingestion benchmarks: a bare tmi.js client (no giftdrop code) reading
 * injected lines from the local chat sandbox over a real socket, and CountWait, a wait on a
 * counter re-checked on the counter's events. Both chat benchmarks measure their product path beside this,
 * in the same run.
 */
import type { ChatServer } from '../src/sandbox/chat/index.js';
import { joinBareClient, localTarget } from './chat-support.js';

/**
 * A wait on a counter that is re-checked only when `poke()` is called (from the event that moves
 * the counter), never polled: a polling wait (setImmediate) keeps the main thread busy, which
 * costs nothing while that thread does the work, but takes a core from a worker thread doing it.
 */
export class CountWait {
  private check: (() => void) | undefined;
  readonly poke = (): void => this.check?.();

  until(count: () => number, target: number, timeoutMs = 300_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.check = undefined;
        reject(new Error(`bench: only ${count()} of ${target} arrived`));
      }, timeoutMs);
      const check = () => {
        if (count() < target) return;
        this.check = undefined;
        clearTimeout(timer);
        resolve();
      };
      this.check = check;
      check();
    });
  }
}

/** Lines per second a bare tmi.js client receives when `lines` are injected at once. */
export async function rawRound(server: ChatServer, lines: string[]): Promise<number> {
  const bare = await joinBareClient(localTarget(server));
  let n = 0;
  const wait = new CountWait();
  bare.client.on('message', () => {
    n++;
    wait.poke();
  });
  const t0 = performance.now();
  server.injectRaw(lines);
  await wait.until(() => n, lines.length);
  const rate = lines.length / ((performance.now() - t0) / 1000);
  await bare.close();
  return rate;
}
