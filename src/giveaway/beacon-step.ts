/**
 * The beacon step of a draw, between freezing the entrant list and taking the picks: announce the
 * list's digest and the drand round the draw waits for, wait for that round, and return the key
 * the pick sequence runs with (fairness/beacon-key.ts).
 *
 * Contract: without a BeaconPort the key is the seed (v1) and nothing is said. With one, the
 * round is the first published strictly after the freeze; the record (freeze time and round) is
 * durably saved BEFORE the announcement, so a restart waits for the same round instead of choosing
 * a new one; the announcement goes out before the round can be published. A failed save is
 * retried (1 s, doubling) within `beaconWaitMs`, each time with the first round after the retry;
 * a round never saved is never announced: when no save succeeds in time the operator is told and
 * the draw goes on from its committed seed alone (`{ unavailable: true }`, said in chat). The
 * announcement is the `entriesClosed` template (the list code: the digest's first 16 hex digits,
 * fairness/procedure.ts step 1). The round's signature is
 * checked by the port. A round not fetched within `beaconWaitMs` (or one that does not verify)
 * falls back to the seed alone, says so in chat and records `{ unavailable: true }`. Returns
 * undefined when the engine stopped meanwhile (the draw stays journaled as drawing).
 */
import { isoNow, type FlowContext } from './context.js';
import { FAIRNESS_ALGORITHM, FAIRNESS_ALGORITHM_V2, drawKey, fairCode, fetchedRound } from '../fairness/index.js';
import type { BeaconRecord, BeaconRound } from './model.js';
import type { DrawSession } from './session.js';
import { plural } from '../shared/plural.js';

/** Default wait for the beacon round after entries close. */
const DEFAULT_BEACON_WAIT_MS = 10_000;
/** First retry delay of a failed save of the beacon round (doubles per attempt). */
const SAVE_RETRY_MS = 1_000;

type Outcome =
  { kind: 'round'; round: BeaconRound } | { kind: 'failed'; err: unknown } | { kind: 'timeout' } | { kind: 'stopped' };

/** The key for the draw's picks, after waiting for its beacon round (see the module contract). */
export async function keyForPicks(
  c: FlowContext,
  s: DrawSession,
  digest: string,
  entrants: number,
): Promise<Buffer | undefined> {
  const r = s.record;
  const beacon = c.beacon;
  // Nothing a beacon round could change: nobody to pick, or a gift draw handed back whatever the
  // picks (fewer entrants than gifts, settle.ts handBack). No round, no "entries closed" line.
  const noPickStands = entrants === 0 || (r.kind === 'gift-draw' && entrants < r.gifts);
  if (!beacon || noPickStands) {
    r.fairness.algorithm = FAIRNESS_ALGORITHM;
    return s.seed;
  }
  const done = fetchedRound(r.fairness.beacon);
  if (done && r.fairness.algorithm === FAIRNESS_ALGORITHM_V2)
    return drawKey(s.seed, digest, done.round, done.randomness);

  const waitMs = c.beaconWaitMs ?? DEFAULT_BEACON_WAIT_MS;
  const round = await saveRound(c, s, waitMs);
  if (round === 'stopped') return undefined;
  if (round === 'unsaved') return s.seed;
  const inSeconds = Math.max(0, Math.ceil((beacon.roundTime(round) - c.clock.now()) / 1000));
  c.announce.say(
    'entriesClosed',
    {
      product: r.offer.name,
      entrants: plural(entrants, 'entrant'),
      beacon: beacon.sandbox ? 'the sandbox beacon' : 'drand quicknet',
      round,
      seconds: inSeconds,
      listCode: fairCode(digest),
      digest,
      id: r.id,
    },
    'normal',
  );
  c.logger.info({ drawId: r.id, round, chain: beacon.chain, digest }, 'waiting for the beacon round');

  const started = c.clock.now();
  const outcome = await Promise.race<Outcome>([
    beacon.fetch(round, started + waitMs).then(
      (value): Outcome => ({ kind: 'round', round: value }),
      (err: unknown): Outcome => ({ kind: 'failed', err }),
    ),
    c.work.sleep(waitMs).then((elapsed): Outcome => (elapsed ? { kind: 'timeout' } : { kind: 'stopped' })),
  ]);
  if (outcome.kind === 'stopped' || c.work.isStopped()) return undefined;
  if (outcome.kind === 'round' && outcome.round.round === round) {
    const named = r.fairness.beacon as Exclude<BeaconRecord, { unavailable: true }>; // set by saveRound
    r.fairness.beacon = { ...named, randomness: outcome.round.randomness, signature: outcome.round.signature };
    r.fairness.algorithm = FAIRNESS_ALGORITHM_V2;
    c.logger.info({ drawId: r.id, round, ms: c.clock.now() - started }, 'beacon round verified');
    return drawKey(s.seed, digest, round, outcome.round.randomness);
  }
  const why =
    outcome.kind === 'failed'
      ? ((outcome.err as Error)?.message ?? String(outcome.err))
      : `not published within ${waitMs} ms`;
  c.logger.warn({ drawId: r.id, round, reason: why }, 'beacon round unavailable: drawing from the seed alone');
  r.fairness.beacon = { unavailable: true, chain: beacon.chain, round };
  r.fairness.algorithm = FAIRNESS_ALGORITHM;
  c.chat.say(
    `⚠️ The randomness beacon (round ${round}) could not be fetched and verified in time, so draw ${r.id}'s winners come from its committed seed alone.`,
    { priority: 'high' },
  );
  return s.seed;
}

/**
 * Names the draw's round in its record and saves it durably, retrying a failed save within
 * `waitMs` (see the module contract). Returns the saved round, 'stopped' when the engine stopped
 * meanwhile, or 'unsaved' after falling back to the seed alone (reported, said in chat).
 */
async function saveRound(c: FlowContext, s: DrawSession, waitMs: number): Promise<number | 'stopped' | 'unsaved'> {
  const r = s.record;
  const beacon = c.beacon!;
  // A restarted draw keeps the round it announced; a new one takes the first round after now.
  const pending =
    r.fairness.beacon && !('unavailable' in r.fairness.beacon) && r.fairness.beacon.chain === beacon.chain
      ? r.fairness.beacon
      : undefined;
  const saveBy = c.clock.now() + waitMs;
  let retryMs = SAVE_RETRY_MS;
  let failure: unknown;
  for (;;) {
    if (!pending || !r.fairness.frozenAt) r.fairness.frozenAt = isoNow(c.clock);
    const round = pending?.round ?? beacon.roundAfter(Date.parse(r.fairness.frozenAt));
    r.fairness.beacon = { chain: beacon.chain, round, ...(beacon.sandbox ? { sandbox: { ...beacon.sandbox } } : {}) };
    try {
      await s.persist(c.repo);
      return round;
    } catch (err) {
      failure = err;
    }
    const left = saveBy - c.clock.now();
    c.logger.error(
      { drawId: r.id, round, err: failure, ...(left > 0 ? { retryInMs: Math.min(retryMs, left) } : {}) },
      'could not save the beacon round; it is not announced until it is saved',
    );
    if (left <= 0) break;
    if (!(await c.work.sleep(Math.min(retryMs, left))) || c.work.isStopped()) return 'stopped';
    retryMs *= 2;
  }
  const why = (failure as Error)?.message ?? String(failure);
  r.fairness.beacon = { unavailable: true, chain: beacon.chain };
  r.fairness.algorithm = FAIRNESS_ALGORITHM;
  c.operator.notify(
    `draw ${r.id}: its beacon round could not be saved within ${waitMs} ms (${why}); it was not announced and the winners come from the committed seed alone. Check the disk holding DATA_DIR.`,
    { drawId: r.id },
  );
  c.chat.say(
    `⚠️ Draw ${r.id}'s randomness beacon round could not be recorded, so its winners come from its committed seed alone.`,
    { priority: 'high' },
  );
  return 'unsaved';
}
