/**
 * The sandbox randomness beacon: a local drand-compatible HTTP server with its own BLS key, so
 * sandbox mode and the tests exercise the whole beacon path offline.
 *
 * Wire format (as drand's HTTP relays): `GET /info` and `GET /<chain>/info` (chain info),
 * `GET /chains`, `GET /<chain>/public/<round>` and `GET /<chain>/public/latest` (`{ round,
 * randomness, signature }`). Scheme `bls-unchained-g1-rfc9380` (fairness/drand.ts), signatures made
 * with this server's own secret key. Round r is published at genesis + (r - 1) * period on the
 * INJECTED clock: a round that is not due yet answers 425 (Too Early), so a test decides exactly
 * when a round exists by moving its ManualClock. Listens on 127.0.0.1 with an OS-chosen port by
 * default. `setFault` makes it answer 503 or serve a wrongly signed round (for fallback tests).
 * Does not: persist anything (a new key per start unless one is given).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import {
  chainHashOf,
  publicKeyOf,
  randomnessOf,
  roundAfter,
  signRound,
  type DrandChain,
} from '../../fairness/drand.js';

type BeaconFault = 'none' | 'unavailable' | 'bad-signature';

export interface BeaconSandboxOptions {
  clock?: Clock;
  /** 32-byte BLS secret key; random by default. */
  secretKey?: Uint8Array;
  /** Unix seconds of round 1; default: the clock's current second. */
  genesis?: number;
  /** Seconds between rounds; default 3 (as quicknet). */
  period?: number;
  host?: string;
  port?: number;
}

export interface BeaconSandbox {
  /** Base URL, e.g. http://127.0.0.1:PORT (the bot's GIFTDROP_BEACON_URL). */
  readonly url: string;
  readonly chain: DrandChain;
  /** The latest round published at the clock's current time (0 before genesis). */
  latestRound(): number;
  /** Requests served, by path (for tests). */
  readonly requests: string[];
  setFault(fault: BeaconFault): void;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

export async function startBeaconSandbox(options: BeaconSandboxOptions = {}): Promise<BeaconSandbox> {
  const clock = options.clock ?? systemClock;
  const secretKey = options.secretKey ?? bls12_381.utils.randomSecretKey();
  const period = options.period ?? 3;
  const genesis = options.genesis ?? Math.floor(clock.now() / 1000);
  const partial = { publicKey: publicKeyOf(secretKey), genesis, period, scheme: 'bls-unchained-g1-rfc9380' as const };
  const chain: DrandChain = { ...partial, hash: chainHashOf(partial) };
  const signatures = new Map<number, string>();
  const requests: string[] = [];
  let fault: BeaconFault = 'none';

  const latestRound = () => roundAfter(chain, clock.now()) - 1;
  const info = {
    public_key: chain.publicKey,
    period: chain.period,
    genesis_time: chain.genesis,
    hash: chain.hash,
    groupHash: chain.hash,
    schemeID: chain.scheme,
    metadata: { beaconID: 'giftdrop-sandbox' },
  };
  const roundBody = (round: number) => {
    let signature = signatures.get(round);
    if (!signature) {
      signature = signRound(secretKey, round);
      signatures.set(round, signature);
    }
    if (fault === 'bad-signature') signature = signRound(secretKey, round + 1);
    return { round, randomness: randomnessOf(signature), signature };
  };

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    requests.push(path);
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { error: 'method not allowed' });
    if (fault === 'unavailable') return send(res, 503, { error: 'unavailable' });
    if (path === '/info' || path === `/${chain.hash}/info`) return send(res, 200, info);
    if (path === '/chains') return send(res, 200, [chain.hash]);
    const m = /^\/([0-9a-f]{64})\/public\/(latest|\d{1,15})$/.exec(path);
    if (!m || m[1] !== chain.hash) return send(res, 404, { error: 'not found' });
    const latest = latestRound();
    const round = m[2] === 'latest' ? latest : Number(m[2]);
    if (round < 1) return send(res, m[2] === 'latest' ? 425 : 404, { error: 'no such round' });
    if (round > latest) return send(res, 425, { error: `round ${round} is not published yet` });
    return send(res, 200, roundBody(round));
  });
  server.keepAliveTimeout = 2000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? '127.0.0.1';
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    chain,
    latestRound,
    requests,
    setFault(f) {
      fault = f;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
