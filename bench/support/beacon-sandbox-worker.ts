/**
 * The sandbox beacon on a thread of its own (bench/e2e-support.ts `startBeaconThread`): the bench's
 * stand-in for drand signs its rounds (a BLS signature takes tens of milliseconds) here, not on
 * the thread whose event loop the bench measures, as drand's relays sign elsewhere. Posts
 * `{ url }` once listening; closes when it gets 'close'. Reads no environment.
 */
import { parentPort } from 'node:worker_threads';
import { startBeaconSandbox } from '../../src/sandbox/beacon/index.js';

const port = parentPort;
if (!port) throw new Error('bench/support/beacon-sandbox-worker.ts runs as a worker thread');
const beacon = await startBeaconSandbox({ period: 3 });
port.on('message', (m: unknown) => {
  if (m === 'close') void beacon.close().then(() => port.close());
});
port.postMessage({ url: beacon.url });
