/**
 * RoundChecker: the BLS signature check of drand rounds, run on a worker thread of its own so the
 * bot's event loop never waits for it (one pairing check takes tens of milliseconds, the first one
 * hundreds, longer than any slice the loop may spend: the chat and /healthz go on meanwhile).
 *
 * Contract: `verify` resolves true when the signature is the chain's valid signature of the round
 * (drand.ts `verifyRoundSignature`, the same function `npm run verify` and the verify page use).
 * The worker is started by the first `prepare` or `verify` (the beacon client prepares it while it
 * waits for the round to be published), from a one-file bundle of round-check-worker.ts made by
 * esbuild then (the single executable carries it prebuilt: `GIFTDROP_ROUND_CHECK_WORKER`), and does
 * not keep the process alive. Where no worker can be started (no bundler, a worker that failed),
 * the check runs on the event loop, said once at warn: the answer is the same, only the loop waits.
 * Does not: fetch rounds (drand-client.ts) or decide what a failed check means.
 */
import { Worker } from 'node:worker_threads';
import { bundleScript, prebuiltOrBundled } from '../shared/bundle-script.js';
import type { Logger } from '../logging/index.js';

declare const GIFTDROP_ROUND_CHECK_WORKER: string | undefined;

/**
 * The worker's script: round-check-worker.ts and what it imports in one CommonJS file.
 * @public scripts/package.mjs calls it (from dist/) to prebuild the worker for the executable.
 */
export function bundleRoundCheckWorker(): Promise<string> {
  return bundleScript(import.meta.url, 'round-check-worker', 'node');
}

/** The prebuilt script in the executable, else the bundle made once per process. */
const workerScript = prebuiltOrBundled(
  typeof GIFTDROP_ROUND_CHECK_WORKER === 'string' ? GIFTDROP_ROUND_CHECK_WORKER : undefined,
  bundleRoundCheckWorker,
);

interface Pending {
  resolve(ok: boolean): void;
  reject(err: Error): void;
}

export class RoundChecker {
  private worker: Promise<Worker | undefined> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  private saidOnLoop = false;

  constructor(private readonly logger: Logger) {}

  /** Starts the worker now (it takes a moment), so the first `verify` does not wait for it. */
  prepare(): void {
    void this.start();
  }

  private start(): Promise<Worker | undefined> {
    return (this.worker ??= (async () => {
      try {
        const w = new Worker(await workerScript(), { eval: true });
        w.unref();
        w.on('message', (m: { id: number; ok: boolean }) => {
          const p = this.pending.get(m.id);
          this.pending.delete(m.id);
          p?.resolve(m.ok);
        });
        const fail = (err: Error) => {
          this.worker = Promise.resolve(undefined);
          for (const p of this.pending.values()) p.reject(err);
          this.pending.clear();
        };
        w.on('error', fail);
        w.on('exit', (code) => fail(new Error(`the round-check worker exited with code ${code}`)));
        return w;
      } catch (err) {
        this.onLoop(err);
        return undefined;
      }
    })());
  }

  private onLoop(err: unknown): void {
    if (this.saidOnLoop || this.closed) return;
    this.saidOnLoop = true;
    this.logger.warn({ err }, 'the beacon round check runs on the event loop (no worker thread could be started)');
  }

  /** True when `signatureHex` is the chain's valid signature of `round` (module contract). */
  async verify(publicKey: string, round: number, signatureHex: string): Promise<boolean> {
    const worker = await this.start();
    if (worker) {
      const id = this.nextId++;
      try {
        return await new Promise<boolean>((resolve, reject) => {
          this.pending.set(id, { resolve, reject });
          worker.postMessage({ id, publicKey, round, signature: signatureHex });
        });
      } catch (err) {
        this.onLoop(err);
      }
    }
    const { verifyRoundSignature } = await import('../fairness/drand.js');
    return verifyRoundSignature({ publicKey }, round, signatureHex);
  }

  /**
   * Stops the worker (one still starting is stopped once it has started: close does not wait for
   * that); a check in flight then runs on the loop. Idempotent.
   */
  async close(): Promise<void> {
    this.closed = true;
    const starting = this.worker;
    this.worker = Promise.resolve(undefined);
    for (const p of this.pending.values()) p.reject(new Error('the round checker is closed'));
    this.pending.clear();
    const stop = starting?.then(async (w) => {
      w?.removeAllListeners('exit');
      await w?.terminate();
    });
    stop?.catch(() => undefined);
  }
}
