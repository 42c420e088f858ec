/**
 * The beacon step inside a real draw: the giveaway engine (real file repository) with the real
 * drand client talking over a socket to the sandbox beacon, both on one ManualClock, so the test
 * decides when the beacon round is published. Checks: the close announcement (digest + round) is
 * in chat while that round still answers 425 Too Early; the winners come after the round, under
 * drand-v2, and verify; the unrevealed seed lives in a 0600 file and never in the history; an
 * unreachable beacon falls back to the seed alone, says so and records it; the round is announced
 * only once the record naming it is saved (a failed save is retried, and a round never saved is
 * never announced).
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DrandBeacon } from '../src/beacon/drand-client.js';
import { FAIRNESS_ALGORITHM_V2 } from '../src/fairness/beacon-key.js';
import { GiveawayEngine } from '../src/giveaway/engine.js';
import { mergeGiveawaySettings } from '../src/giveaway/settings.js';
import { verifyDraw } from '../src/fairness/verify.js';
import { createLogger } from '../src/logging/index.js';
import { startBeaconSandbox, type BeaconSandbox } from '../src/sandbox/beacon/index.js';
import { ManualClock } from '../src/shared/clock.js';
import { roundTimeMs } from '../src/fairness/drand.js';
import { FileDrawRepository } from '../src/storage/index.js';
import { FailingSaves } from './support/failing-repository.js';
import {
  CountingRandom,
  FakeChat,
  FakeOperator,
  FakeShop,
  START_MS,
  chatMsg,
  makeTempDir,
  purchase,
  removeDir,
  waitFor,
} from './support/giveaway-fakes.js';
import { LogCapture } from './support/log-capture.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setup(
  reuse?: { dir: string; clock: ManualClock; beacon: BeaconSandbox },
  faults?: (repo: FileDrawRepository) => FailingSaves,
): Promise<{
  svc: GiveawayEngine;
  chat: FakeChat;
  clock: ManualClock;
  beacon: BeaconSandbox;
  repo: FileDrawRepository;
  dir: string;
  log: LogCapture;
  operator: FakeOperator;
}> {
  const dir = reuse?.dir ?? (await makeTempDir());
  if (!reuse) cleanups.push(() => removeDir(dir));
  const clock = reuse?.clock ?? new ManualClock(START_MS);
  const beacon = reuse?.beacon ?? (await startBeaconSandbox({ clock, genesis: START_MS / 1000 - 300, period: 3 }));
  if (!reuse) cleanups.push(() => beacon.close());
  const client = await DrandBeacon.connectSandbox({ url: beacon.url, clock });
  cleanups.push(() => client.close());
  const repo = await FileDrawRepository.open(dir, { flushIntervalMs: 0, mode: 'sandbox' }); // the sandbox beacon's data
  cleanups.push(() => repo.close());
  const chat = new FakeChat();
  const log = new LogCapture();
  const operator = new FakeOperator();
  const svc = new GiveawayEngine({
    chat,
    shop: new FakeShop(),
    repo: faults ? faults(repo) : repo,
    clock,
    random: new CountingRandom(dir),
    logger: createLogger({ destination: log, level: 'debug' }),
    settings: mergeGiveawaySettings({ giftFlow: 'purchase' }),
    operator,
    beacon: client,
    beaconWaitMs: 10_000,
  });
  await svc.start();
  cleanups.push(() => svc.stop());
  return { svc, chat, clock, beacon, repo, dir, log, operator };
}

async function openWithEntrants(svc: GiveawayEngine, id: string, logins: string[]): Promise<void> {
  await svc.handleGiftPurchase(purchase(id, 2));
  for (const login of logins) svc.enter(chatMsg(login));
}

describe('a draw with the sandbox beacon', () => {
  it('announces digest and round before the round exists, then draws from it (drand-v2), keeping the seed 0600 until then', async () => {
    const { svc, chat, clock, beacon, repo, dir } = await setup();
    await openWithEntrants(svc, 'p1', ['alice', 'bob', 'carol', 'dave', 'erin']);

    // Open: the seed is in an owner-only file, not in the history.
    const seedFile = join(dir, 'seeds', 'p1.seed');
    expect((await stat(seedFile)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'seeds'))).mode & 0o777).toBe(0o700);
    const seedHex = (await readFile(seedFile, 'utf8')).trim();
    expect(seedHex).toMatch(/^[0-9a-f]{64}$/);
    await repo.flush();
    expect(await readFile(join(dir, 'history.jsonl'), 'utf8')).not.toContain(seedHex);

    expect(svc.endNow()).toBe(1);
    await waitFor(() => chat.matching(/Entries closed/).length === 1, 'the close announcement');
    const line = chat.matching(/Entries closed/)[0]!;
    const m = /round (\d+) in ~(\d+)s \(list code ([0-9a-f]{16})\)\.$/.exec(line);
    expect(m, line).not.toBeNull();
    const round = Number(m![1]);
    expect(round).toBe(beacon.latestRound() + 1);
    expect(line).not.toMatch(/[0-9a-f]{17}/); // the list code, not the whole digest
    // The named round is not published yet: the real endpoint says so, over the socket.
    const early = await fetch(`${beacon.url}/${beacon.chain.hash}/public/${round}`);
    expect(early.status).toBe(425);
    expect(chat.matching(/Anyone can check draw/)).toEqual([]);
    expect((await repo.getDraw('p1'))!.winners).toEqual([]);

    // Publish the round (move the shared clock to its time): the draw completes.
    clock.advance(roundTimeMs(beacon.chain, round) - clock.now());
    await waitFor(() => chat.matching(/Anyone can check draw/).length === 1, 'the winners and the check line', 10_000);
    const closeAt = chat.texts().findIndex((t) => /Entries closed/.test(t));
    const revealAt = chat.texts().findIndex((t) => /Anyone can check draw/.test(t));
    expect(closeAt).toBeLessThan(revealAt);
    await svc.whenIdle();

    const record = (await repo.getDraw('p1'))!;
    expect(record.fairness.algorithm).toBe(FAIRNESS_ALGORITHM_V2);
    expect(record.fairness.entrantsDigest!.slice(0, 16)).toBe(m![3]);
    expect(record.fairness.beacon).toMatchObject({
      chain: beacon.chain.hash,
      round,
      sandbox: { publicKey: beacon.chain.publicKey },
    });
    expect(record.fairness.seed).toBe(seedHex);
    expect(Date.parse(record.fairness.frozenAt!)).toBeLessThan(roundTimeMs(beacon.chain, round));
    expect(verifyDraw(record)).toMatchObject({ ok: true });
    expect(record.winners).toHaveLength(2);
    // Revealed: the vault file is gone.
    await expect(stat(seedFile)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('falls back to the seed alone when the beacon does not answer in time, says so and records it', async () => {
    const { svc, chat, clock, beacon, repo } = await setup();
    await openWithEntrants(svc, 'p2', ['alice', 'bob', 'carol']);
    beacon.setFault('unavailable');
    svc.endNow();
    await waitFor(() => chat.matching(/Entries closed/).length === 1, 'the close announcement');
    const round = Number(/round (\d+)/.exec(chat.matching(/Entries closed/)[0]!)![1]);
    clock.advance(roundTimeMs(beacon.chain, round) - clock.now());
    await waitFor(() => beacon.requests.some((p) => p.endsWith(`/public/${round}`)), 'the first beacon request');
    clock.advance(10_000);
    await waitFor(
      () => chat.matching(/could not be fetched and verified in time/).length === 1,
      'the fallback line',
      10_000,
    );
    await svc.whenIdle();
    const record = (await repo.getDraw('p2'))!;
    expect(record.fairness.beacon).toEqual({ unavailable: true, chain: beacon.chain.hash, round });
    expect(record.fairness.algorithm).toBe('giftdrop-hmac-sha256-v1');
    expect(verifyDraw(record)).toMatchObject({ ok: true });
    expect(chat.matching(/Anyone can check draw/)).toHaveLength(1);
  });

  it('rejects a wrongly signed round and falls back instead of drawing from it', async () => {
    const { svc, chat, clock, beacon, repo } = await setup();
    await openWithEntrants(svc, 'p3', ['alice', 'bob']);
    beacon.setFault('bad-signature');
    svc.endNow();
    await waitFor(() => chat.matching(/Entries closed/).length === 1, 'the close announcement');
    const round = Number(/round (\d+)/.exec(chat.matching(/Entries closed/)[0]!)![1]);
    clock.advance(roundTimeMs(beacon.chain, round) - clock.now());
    await waitFor(
      () => chat.matching(/could not be fetched and verified in time/).length === 1,
      'the fallback line',
      10_000,
    );
    await svc.whenIdle();
    expect((await repo.getDraw('p3'))!.fairness.beacon).toMatchObject({ unavailable: true, round });
  });

  it('after a restart during the wait, draws from the round it announced, not a new one', async () => {
    const first = await setup();
    await openWithEntrants(first.svc, 'p4', ['alice', 'bob', 'carol']);
    first.svc.endNow();
    await waitFor(() => first.chat.matching(/Entries closed/).length === 1, 'the close announcement');
    const round = Number(/round (\d+)/.exec(first.chat.matching(/Entries closed/)[0]!)![1]);
    await first.svc.stop(); // the bot stops before the round exists
    await first.repo.close();
    expect((await stat(join(first.dir, 'seeds', 'p4.seed'))).mode & 0o777).toBe(0o600);

    first.clock.advance(60_000); // the bot comes back a minute later: many rounds have passed
    const second = await setup({ dir: first.dir, clock: first.clock, beacon: first.beacon });
    await waitFor(
      () => second.chat.matching(/Anyone can check draw/).length === 1,
      'the draw to finish after the restart',
      10_000,
    );
    await second.svc.whenIdle();
    expect(second.chat.matching(/Entries closed/)[0]).toContain(`round ${round} `);
    const record = (await second.repo.getDraw('p4'))!;
    expect(record.fairness.beacon).toMatchObject({ round });
    expect(record.fairness.algorithm).toBe(FAIRNESS_ALGORITHM_V2);
    expect(verifyDraw(record)).toMatchObject({ ok: true });
  });

  /** A save naming a beacon round (not fetched yet): the one the announcement must wait for. */
  const namesRound = (r: { fairness: { beacon?: object } }) =>
    !!r.fairness.beacon &&
    'round' in r.fairness.beacon &&
    !('randomness' in r.fairness.beacon) &&
    !('unavailable' in r.fairness.beacon);
  const saveFailures = (log: LogCapture) =>
    log.lines.filter((l) => l.includes('could not save the beacon round')).length;

  it('announces the round only once its save succeeded: a failed save is retried, with the first round after the retry', async () => {
    let storage!: FailingSaves;
    const { svc, chat, clock, beacon, repo, log } = await setup(undefined, (r) => (storage = new FailingSaves(r)));
    await openWithEntrants(svc, 'p5', ['alice', 'bob', 'carol']);
    storage.failNext(namesRound, 1);
    svc.endNow();
    await waitFor(() => saveFailures(log) === 1, 'the failed save');
    const unsaved = (storage.failed[0]!.fairness.beacon as { round: number }).round;
    expect(chat.matching(/Entries closed/)).toEqual([]); // never announced while unsaved
    expect((await repo.getDraw('p5'))!.fairness.beacon).toBeUndefined();

    clock.advance(3000); // the retry (due after 1 s; one round period later): saved this time, then announced
    await waitFor(() => chat.matching(/Entries closed/).length === 1, 'the close announcement after the retry');
    const round = Number(/round (\d+)/.exec(chat.matching(/Entries closed/)[0]!)![1]);
    expect(round).toBeGreaterThan(unsaved); // the first round after the retry, not the stale one
    const saved = (await repo.getDraw('p5'))!.fairness;
    expect(saved.beacon).toMatchObject({ round }); // durably saved before it was said
    expect(Date.parse(saved.frozenAt!)).toBeGreaterThan(Date.parse(storage.failed[0]!.fairness.frozenAt!));

    clock.advance(roundTimeMs(beacon.chain, round) - clock.now());
    await waitFor(() => chat.matching(/Anyone can check draw/).length === 1, 'the winners', 10_000);
    await svc.whenIdle();
    const record = (await repo.getDraw('p5'))!;
    expect(record.fairness.algorithm).toBe(FAIRNESS_ALGORITHM_V2);
    expect(verifyDraw(record)).toMatchObject({ ok: true });
  });

  it('never announces a round it could not save: past the wait it tells the operator and draws from the seed alone', async () => {
    let storage!: FailingSaves;
    const { svc, chat, clock, repo, log, operator } = await setup(undefined, (r) => (storage = new FailingSaves(r)));
    await openWithEntrants(svc, 'p6', ['alice', 'bob']);
    storage.failNext(namesRound, 100);
    svc.endNow();
    // 10 s of wait: attempts at 0, 1, 3, 7 and 10 s.
    for (const [n, step] of [
      [1, 1000],
      [2, 2000],
      [3, 4000],
      [4, 3000],
    ] as const) {
      await waitFor(() => saveFailures(log) === n, `failed save ${n}`);
      clock.advance(step);
    }
    await waitFor(() => chat.matching(/could not be recorded/).length === 1, 'the seed-alone line', 10_000);
    await svc.whenIdle();
    expect(saveFailures(log)).toBe(5);
    expect(chat.matching(/Entries closed/)).toEqual([]);
    expect(operator.lines.some((l) => l.line.includes('draw p6') && l.line.includes('could not be saved'))).toBe(true);
    const record = (await repo.getDraw('p6'))!;
    expect(record.fairness.beacon).toEqual({ unavailable: true, chain: expect.any(String) });
    expect(record.fairness.algorithm).toBe('giftdrop-hmac-sha256-v1');
    expect(verifyDraw(record)).toMatchObject({ ok: true });
    expect(chat.matching(/Anyone can check draw/)).toHaveLength(1);
  });
});
