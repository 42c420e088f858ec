/**
 * The beacon step of a draw, between freezing the entrant list and taking the picks: announce the
 * list's digest and the drand round the draw waits for, wait for that round, and return the key
 * the pick sequence runs with (beacon-fairness.ts).
 *
 * Contract: without a BeaconPort the key is the seed (v1) and nothing is said. With one, the
 * round is the first published strictly after the freeze; the record (freeze time and round) is
 * saved BEFORE the announcement, so a restart waits for the same round instead of choosing a new
 * one; the announcement goes out before the round can be published. The round's signature is
 * checked by the port. A round not fetched within `beaconWaitMs` (or one that does not verify)
 * falls back to the seed alone, says so in chat and records `{ unavailable: true }`. Returns
 * undefined when the engine stopped meanwhile (the draw stays journaled as drawing).
 */
import { isoNow, persistQuietly, type Engine } from './engine.js';
import { FAIRNESS_ALGORITHM_V2, drawKey, fetchedRound } from './beacon-fairness.js';
import { FAIRNESS_ALGORITHM } from './fairness.js';
import type { BeaconRound } from './ports.js';
import type { DrawSession } from './session.js';

/** Default wait for the beacon round after entries close. */
export const DEFAULT_BEACON_WAIT_MS = 10_000;

type Outcome = { kind: 'round'; round: BeaconRound } | { kind: 'failed'; err: unknown } | { kind: 'timeout' } | { kind: 'stopped' };

/** The key for the draw's picks, after waiting for its beacon round (see the module contract). */
export async function keyForPicks(e: Engine, s: DrawSession, digest: string, entrants: number): Promise<Buffer | undefined> {
  const { ctx } = e;
  const r = s.record;
  const beacon = ctx.beacon;
  if (!beacon) {
    r.fairness.algorithm = FAIRNESS_ALGORITHM;
    return s.seed;
  }
  const done = fetchedRound(r.fairness.beacon);
  if (done && r.fairness.algorithm === FAIRNESS_ALGORITHM_V2) return drawKey(s.seed, digest, done.round, done.randomness);

  // A restarted draw keeps the round it announced; a new one takes the first round after now.
  const pending = r.fairness.beacon && !('unavailable' in r.fairness.beacon) && r.fairness.beacon.chain === beacon.chain ? r.fairness.beacon : undefined;
  if (!pending || !r.fairness.frozenAt) r.fairness.frozenAt = isoNow(ctx.clock);
  const round = pending?.round ?? beacon.roundAfter(Date.parse(r.fairness.frozenAt));
  r.fairness.beacon = { chain: beacon.chain, round, ...(beacon.sandbox ? { sandbox: { ...beacon.sandbox } } : {}) };
  await persistQuietly(e, s);
  const inSeconds = Math.max(0, Math.ceil((beacon.roundTime(round) - ctx.clock.now()) / 1000));
  ctx.chat.say(
    `🔒 Entries closed for ${r.offer.name}: ${entrants} entrant(s), list digest ${digest}. ` +
      `Winners come from draw ${r.id}'s committed seed + ${beacon.sandbox ? 'the sandbox beacon' : 'drand quicknet'} round ${round} (due in ~${inSeconds}s).`,
    { priority: 'normal' },
  );
  ctx.logger.info({ drawId: r.id, round, chain: beacon.chain, digest }, 'waiting for the beacon round');

  const waitMs = ctx.beaconWaitMs ?? DEFAULT_BEACON_WAIT_MS;
  const started = ctx.clock.now();
  const outcome = await Promise.race<Outcome>([
    beacon.fetch(round, started + waitMs).then(
      (value): Outcome => ({ kind: 'round', round: value }),
      (err: unknown): Outcome => ({ kind: 'failed', err }),
    ),
    ctx.sleep(waitMs).then((elapsed): Outcome => (elapsed ? { kind: 'timeout' } : { kind: 'stopped' })),
  ]);
  if (outcome.kind === 'stopped' || ctx.isStopped()) return undefined;
  if (outcome.kind === 'round' && outcome.round.round === round) {
    r.fairness.beacon = { ...r.fairness.beacon, randomness: outcome.round.randomness, signature: outcome.round.signature };
    r.fairness.algorithm = FAIRNESS_ALGORITHM_V2;
    ctx.logger.info({ drawId: r.id, round, ms: ctx.clock.now() - started }, 'beacon round verified');
    return drawKey(s.seed, digest, round, outcome.round.randomness);
  }
  const why = outcome.kind === 'failed' ? (outcome.err as Error)?.message ?? String(outcome.err) : `not published within ${waitMs} ms`;
  ctx.logger.warn({ drawId: r.id, round, reason: why }, 'beacon round unavailable: drawing from the seed alone');
  r.fairness.beacon = { unavailable: true, chain: beacon.chain, round };
  r.fairness.algorithm = FAIRNESS_ALGORITHM;
  ctx.chat.say(
    `⚠️ The randomness beacon (round ${round}) could not be fetched and verified in time, so draw ${r.id}'s winners come from its committed seed alone.`,
    { priority: 'high' },
  );
  return s.seed;
}
