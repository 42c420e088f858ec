/**
 * DrandBeacon (the live adapter) against local relays over real sockets: with quicknet pinned it
 * accepts the real round 3 and rejects a relay that serves a forged one; it waits on its clock
 * until the round is due and retries a relay that is not ready; it gives up at the deadline.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BeaconError, DrandBeacon } from '../src/beacon/drand-client.js';
import { startBeaconSandbox } from '../src/sandbox/beacon/index.js';
import { ManualClock } from '../src/shared/clock.js';
import { QUICKNET, roundTimeMs } from '../src/fairness/drand.js';
import { KNOWN_ANSWERS } from './support/beacon-vectors.js';
import { waitFor } from './support/giveaway-fakes.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** A relay that answers round 3 of quicknet with `signature` (real or forged). */
async function relay(signature: string, randomness: string): Promise<{ url: string; hits: string[] }> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const body = JSON.stringify({ round: 3, randomness, signature });
    if (req.url === `/${QUICKNET.hash}/public/3`) res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

describe('DrandBeacon', () => {
  it('accepts the real quicknet round 3 and rejects a forged one (the pinned key decides, not the relay)', async () => {
    const v = KNOWN_ANSWERS[0]!;
    const clock = new ManualClock(roundTimeMs(QUICKNET, 3) + 1000);
    const good = await relay(v.signature, v.randomness);
    const client = new DrandBeacon({ url: good.url, clock });
    closers.push(() => client.close());
    expect(client.chain).toBe(QUICKNET.hash);
    expect(client.sandbox).toBeUndefined();
    await expect(client.fetch(3, clock.now() + 5000)).resolves.toEqual({
      round: 3,
      randomness: v.randomness,
      signature: v.signature,
    });

    const other = KNOWN_ANSWERS[1]!; // round 2's real signature, served as round 3
    const forged = await relay(other.signature, other.randomness);
    const fooled = new DrandBeacon({ url: forged.url, clock });
    closers.push(() => fooled.close());
    await expect(fooled.fetch(3, clock.now() + 5000)).rejects.toThrow(/BLS signature does not verify/);
  });

  it('waits until the round is due, retries while the relay says 425, and gives up at the deadline', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const sandbox = await startBeaconSandbox({ clock, period: 3 });
    closers.push(() => sandbox.close());
    const client = await DrandBeacon.connectSandbox({ url: sandbox.url, clock, retryMs: 250 });
    closers.push(() => client.close());
    expect(client.sandbox).toEqual({ publicKey: sandbox.chain.publicKey, genesis: sandbox.chain.genesis, period: 3 });
    const round = client.roundAfter(clock.now());
    const due = client.roundTime(round);
    const got = client.fetch(round, due + 2000);
    await waitFor(() => clock.pending() > 0, 'the client to wait for the round');
    expect(sandbox.requests.filter((p) => p.includes('/public/'))).toEqual([]); // nothing asked before it is due
    clock.advance(due - clock.now());
    await expect(got).resolves.toMatchObject({ round });

    sandbox.setFault('unavailable');
    const late = client.fetch(round + 1, client.roundTime(round + 1) + 600);
    clock.advance(client.roundTime(round + 1) - clock.now());
    let settled = false;
    late.then(
      () => (settled = true),
      () => (settled = true),
    );
    while (!settled) {
      await waitFor(() => settled || clock.pending() > 0, 'a retry wait');
      if (!settled) clock.advance(250);
    }
    await expect(late).rejects.toBeInstanceOf(BeaconError);
    await expect(late).rejects.toThrow(/was not available in time \(HTTP 503\)/);
    expect(sandbox.requests.filter((p) => p.endsWith(`/public/${round + 1}`)).length).toBeGreaterThanOrEqual(2);
  });

  it('ends its waits when closed', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const sandbox = await startBeaconSandbox({ clock });
    closers.push(() => sandbox.close());
    const client = await DrandBeacon.connectSandbox({ url: sandbox.url, clock });
    const pending = client.fetch(client.roundAfter(clock.now()), clock.now() + 10_000);
    await waitFor(() => clock.pending() > 0, 'the client to wait');
    await client.close();
    await expect(pending).rejects.toThrow(/closed/);
  });
});
