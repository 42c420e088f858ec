/**
 * DrandBeacon: the BeaconPort over a drand HTTP relay (`GET /<chain>/info`,
 * `GET /<chain>/public/<round>`), with undici and zod at the edge.
 *
 * Contract:
 * - Live: the chain is drand quicknet, pinned (hash, public key, schedule in drand-chain.ts);
 *   what a relay says about the chain is never trusted, every round is checked against the pinned
 *   key. Sandbox (`DrandBeacon.connectSandbox`): the chain info is read from the local sandbox
 *   beacon once, and its key and schedule are recorded with each round (marked sandbox).
 * - `fetch(round, deadlineMs)` waits on the injected clock until the round is due, then asks the
 *   relay; a 404/425/5xx or a network error is retried every `retryMs` until the deadline; each
 *   attempt is bounded by `requestTimeoutMs` (real time). A round whose BLS signature does not
 *   verify, whose randomness is not SHA-256(signature) or whose number differs is rejected at once
 *   (BeaconError). Never logs anything but the round, status and duration.
 * - A round's BLS signature is checked on a worker thread (round-check.ts), started by the first
 *   `fetch` while it waits for the round: the event loop never runs the pairing check. The BLS
 *   code is not loaded on this thread at all (but by `connectSandbox`, at start-up, for the
 *   sandbox chain's hash); the randomness check is node:crypto's SHA-256.
 */
import { createHash } from 'node:crypto';
import { LazyPool, undici } from '../http-client/undici.js';
import { z } from 'zod';
import type { Logger } from '../logging/index.js';
import { silentLogger } from '../logging/index.js';
import type { BeaconRound } from '../giveaway/model.js';
import type { BeaconPort } from '../giveaway/ports.js';
import { systemClock, type Clock, type TimerHandle } from '../shared/clock.js';
import { GiftdropError } from '../shared/errors.js';
import { QUICKNET, roundAfter, roundTimeMs, type DrandChain } from '../fairness/drand-chain.js';

import { RoundChecker } from './round-check.js';

/** The default public relay. */
export const DEFAULT_BEACON_URL = 'https://api.drand.sh';

export class BeaconError extends GiftdropError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('BEACON_UNAVAILABLE', message, options);
  }
}

const hex = (n: number) => z.string().regex(new RegExp(`^[0-9a-f]{${n}}$`), `must be ${n} lower-case hex characters`);

/** `GET /<chain>/public/<round>` (extra fields, e.g. previous_signature, are ignored). */
const roundSchema = z.looseObject({
  round: z.number().int().positive(),
  randomness: hex(64),
  signature: hex(96),
});

/** `GET /<chain>/info`. */
const infoSchema = z.looseObject({
  public_key: hex(192),
  period: z.number().int().positive(),
  genesis_time: z.number().int().positive(),
  hash: hex(64),
  schemeID: z.literal('bls-unchained-g1-rfc9380'),
});

export interface DrandBeaconOptions {
  /** Relay root, e.g. https://api.drand.sh. */
  url: string;
  clock?: Clock;
  logger?: Logger;
  /** Pause between attempts while a round is not available yet. Default 250 ms. */
  retryMs?: number;
  /** Real-time bound of one HTTP attempt. Default 2000 ms. */
  requestTimeoutMs?: number;
}

export class DrandBeacon implements BeaconPort {
  readonly chain: string;
  readonly sandbox?: { publicKey: string; genesis: number; period: number };
  private readonly info: DrandChain;
  private readonly base: string;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly retryMs: number;
  private readonly timeoutMs: number;
  private readonly agent: LazyPool;
  private readonly checker: RoundChecker;
  private readonly sleeping = new Set<{ cancel(): void; timer: TimerHandle }>();
  private closed = false;

  constructor(options: DrandBeaconOptions, chain: DrandChain = QUICKNET, sandbox = false) {
    this.info = chain;
    this.chain = chain.hash;
    if (sandbox) this.sandbox = { publicKey: chain.publicKey, genesis: chain.genesis, period: chain.period };
    this.base = options.url.replace(/\/+$/, '');
    this.clock = options.clock ?? systemClock;
    this.logger = (options.logger ?? silentLogger()).child({ module: 'beacon' });
    this.retryMs = options.retryMs ?? 250;
    this.timeoutMs = options.requestTimeoutMs ?? 2000;
    this.agent = new LazyPool({ connections: 2, keepAliveTimeout: 4000 });
    this.checker = new RoundChecker(this.logger);
  }

  /** A client for a local sandbox beacon: reads its chain info once and records rounds as sandbox. */
  static async connectSandbox(options: DrandBeaconOptions & { chainHash?: string }): Promise<DrandBeacon> {
    const base = options.url.replace(/\/+$/, '');
    const path = options.chainHash ? `/${options.chainHash}/info` : '/info';
    const { request } = await undici();
    const res = await request(`${base}${path}`, { headersTimeout: 5000, bodyTimeout: 5000 });
    const body = await res.body.json().catch(() => undefined);
    if (res.statusCode !== 200) throw new BeaconError(`sandbox beacon info answered ${res.statusCode}`);
    const parsed = infoSchema.safeParse(body);
    if (!parsed.success)
      throw new BeaconError(`sandbox beacon info is malformed: ${parsed.error.issues[0]?.message ?? '?'}`);
    const i = parsed.data;
    const chain: DrandChain = {
      hash: i.hash,
      publicKey: i.public_key,
      genesis: i.genesis_time,
      period: i.period,
      scheme: i.schemeID,
    };
    if ((await import('../fairness/drand.js')).chainHashOf(chain) !== i.hash)
      throw new BeaconError('sandbox beacon chain hash does not match its key and schedule');
    return new DrandBeacon(options, chain, true);
  }

  roundAfter(timeMs: number): number {
    return roundAfter(this.info, timeMs);
  }

  roundTime(round: number): number {
    return roundTimeMs(this.info, round);
  }

  async fetch(round: number, deadlineMs: number): Promise<BeaconRound> {
    const started = this.clock.now();
    const due = this.roundTime(round);
    if (due > deadlineMs) throw new BeaconError(`round ${round} is due after the deadline`);
    this.checker.prepare(); // starts while the round is awaited; attempt() uses it
    if (due > this.clock.now()) await this.sleep(due - this.clock.now());
    let last = 'no attempt';
    for (;;) {
      if (this.closed) throw new BeaconError('the beacon client is closed');
      const got = await this.attempt(round);
      if (got.kind === 'round') {
        this.logger.debug({ round, ms: this.clock.now() - started }, 'beacon round fetched and verified');
        return got.round;
      }
      last = got.reason;
      if (this.clock.now() + this.retryMs > deadlineMs) break;
      await this.sleep(this.retryMs);
    }
    throw new BeaconError(`round ${round} was not available in time (${last})`);
  }

  private async attempt(
    round: number,
  ): Promise<{ kind: 'round'; round: BeaconRound } | { kind: 'retry'; reason: string }> {
    let status: number;
    let body: unknown;
    try {
      const { request } = await undici();
      const res = await request(`${this.base}/${this.chain}/public/${round}`, {
        dispatcher: await this.agent.get(),
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        headers: { accept: 'application/json' },
      });
      status = res.statusCode;
      body = status === 200 ? await res.body.json() : (await res.body.dump(), undefined);
    } catch (err) {
      this.logger.debug({ round, err: (err as Error).message }, 'beacon request failed');
      return { kind: 'retry', reason: `network error: ${(err as Error).message}` };
    }
    if (status !== 200) {
      this.logger.debug({ round, status }, 'beacon round not available yet');
      return { kind: 'retry', reason: `HTTP ${status}` };
    }
    const parsed = roundSchema.safeParse(body);
    if (!parsed.success)
      throw new BeaconError(`beacon answered a malformed round: ${parsed.error.issues[0]?.message ?? '?'}`);
    const r = parsed.data;
    if (r.round !== round) throw new BeaconError(`asked for round ${round}, the beacon answered round ${r.round}`);
    if (!(await this.checker.verify(this.info.publicKey, round, r.signature))) {
      throw new BeaconError(`round ${round}'s BLS signature does not verify against the chain's public key`);
    }
    if (createHash('sha256').update(Buffer.from(r.signature, 'hex')).digest('hex') !== r.randomness) {
      throw new BeaconError(`round ${round}'s randomness is not SHA-256 of its signature`);
    }
    return { kind: 'round', round: { round, randomness: r.randomness, signature: r.signature } };
  }

  private sleep(ms: number): Promise<void> {
    if (this.closed) return Promise.reject(new BeaconError('the beacon client is closed'));
    return new Promise((resolve, reject) => {
      const wake = {
        cancel: () => reject(new BeaconError('the beacon client is closed')),
        timer: this.clock.setTimeout(() => (this.sleeping.delete(wake), resolve()), ms),
      };
      this.sleeping.add(wake);
    });
  }

  /** Ends pending waits (their fetches reject) and closes the connections. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.sleeping) {
      s.timer.cancel();
      s.cancel();
    }
    this.sleeping.clear();
    await Promise.all([this.agent.close(), this.checker.close()]);
  }
}
