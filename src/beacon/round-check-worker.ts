/**
 * The worker thread of round-check.ts: checks drand rounds' BLS signatures (drand.ts) off the
 * bot's event loop. Bundled into one script with what it imports (round-check.ts
 * `bundleRoundCheckWorker`) and started from that text, so it runs the same from the sources, from
 * dist/ and inside the single executable. Messages in: `{ id, publicKey, round, signature }`;
 * out: `{ id, ok }`. Does nothing else.
 */
import { parentPort } from 'node:worker_threads';
import { verifyRoundSignature } from '../fairness/drand.js';

interface Check {
  id: number;
  publicKey: string;
  round: number;
  signature: string;
}

parentPort?.on('message', (m: Check) => {
  parentPort?.postMessage({ id: m.id, ok: verifyRoundSignature({ publicKey: m.publicKey }, m.round, m.signature) });
});
