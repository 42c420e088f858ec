/**
 * `npm run verify` on beacon (drand-v2) draws: an honest draw passes, and every kind of tampering
 * the issue lists is rejected with its reason: an entrant, a weight, the seed, the beacon
 * randomness, the beacon signature, a round published before the close (or a later, cherry-picked
 * round), and a reroll log that does not follow the pick sequence. Records are checked directly
 * and through the CLI over a real data directory whose files are edited behind the bot's back.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runVerifyCli } from '../src/cli/verify.js';
import type { DrawRecord } from '../src/giveaway/model.js';
import { verifyDraw } from '../src/fairness/verify.js';
import { randomnessOf, signRound } from '../src/fairness/drand.js';
import { FileDrawRepository } from '../src/storage/index.js';
import { KNOWN_ANSWERS, localChain, sandboxRecord, vectorRecord } from './support/beacon-vectors.js';
import { runCli } from './support/cli-io.js';
import { tamperHistory, tempDataDir } from './support/storage-helpers.js';

type Beacon = { chain: string; round: number; randomness: string; signature: string };
const beaconOf = (r: DrawRecord) => r.fairness.beacon as Beacon;
const flipHex = (hex: string, at = 10) => hex.slice(0, at) + (hex[at] === '0' ? '1' : '0') + hex.slice(at + 1);

function reason(record: DrawRecord): string {
  const result = verifyDraw(record);
  expect(result.ok).toBe(false);
  return result.ok ? '' : result.reason;
}

describe('verify: drand-v2 records', () => {
  it('accepts honest quicknet and sandbox draws, with rerolls', () => {
    expect(verifyDraw(vectorRecord(KNOWN_ANSWERS[1]!)).ok).toBe(true);
    expect(verifyDraw(sandboxRecord({ id: 's1', rerolls: 2 }))).toMatchObject({ ok: true });
  });

  it('rejects a tampered entrant and a tampered weight', () => {
    const a = vectorRecord(KNOWN_ANSWERS[0]!);
    a.frozenEntrants![2] = { ...a.frozenEntrants![2]!, login: 'sockpuppet' };
    expect(reason(a)).toMatch(/digest mismatch/);
    const b = vectorRecord(KNOWN_ANSWERS[0]!);
    b.frozenEntrants![2] = { ...b.frozenEntrants![2]!, weight: b.frozenEntrants![2]!.weight + 1 };
    expect(reason(b)).toMatch(/digest mismatch/);
  });

  it('rejects a tampered seed', () => {
    const r = vectorRecord(KNOWN_ANSWERS[0]!);
    r.fairness.seed = flipHex(r.fairness.seed!);
    expect(reason(r)).toMatch(/seed does not match commitment/);
  });

  it('rejects tampered beacon randomness, even when the picks are recomputed to match it', () => {
    const r = vectorRecord(KNOWN_ANSWERS[0]!);
    beaconOf(r).randomness = flipHex(beaconOf(r).randomness);
    expect(reason(r)).toMatch(/randomness is not SHA-256 of its signature/);
  });

  it('rejects a tampered beacon signature (and a signature of another round)', () => {
    const r = vectorRecord(KNOWN_ANSWERS[0]!);
    beaconOf(r).signature = flipHex(beaconOf(r).signature, 40);
    beaconOf(r).randomness = randomnessOf(beaconOf(r).signature);
    expect(reason(r)).toMatch(/does not verify against the chain's public key/);
    const other = vectorRecord(KNOWN_ANSWERS[0]!);
    beaconOf(other).signature = KNOWN_ANSWERS[1]!.signature;
    beaconOf(other).randomness = KNOWN_ANSWERS[1]!.randomness;
    expect(reason(other)).toMatch(/does not verify/);
  });

  it('rejects a round published before the entrant list was frozen, and a later cherry-picked round', () => {
    const early = vectorRecord(KNOWN_ANSWERS[0]!); // round 3 = genesis + 6 s
    early.fairness.frozenAt = new Date(Date.parse(early.fairness.frozenAt!) + 2_500).toISOString(); // genesis + 6.5 s
    expect(reason(early)).toMatch(/before the entrant list was frozen/);

    const late = sandboxRecord({ id: 'late' });
    const { secretKey } = localChain();
    const b = beaconOf(late);
    b.round += 1; // a validly signed round, but not the first after the freeze
    b.signature = signRound(secretKey, b.round);
    b.randomness = randomnessOf(b.signature);
    expect(reason(late)).toMatch(/not the first round after the entrant list was frozen \(that is round 101\)/);
  });

  it('rejects a live record resting on a sandbox beacon (the operator holds that key)', () => {
    const live = { ...sandboxRecord({ id: 'live-sb' }), mode: 'live' as const };
    expect(verifyDraw(live)).toMatchObject({ ok: false });
    expect(verifyDraw({ ...live, mode: 'sandbox' })).toMatchObject({ ok: true });
  });

  it('rejects an unknown chain and a sandbox record whose key does not match its chain hash', () => {
    const r = vectorRecord(KNOWN_ANSWERS[0]!);
    beaconOf(r).chain = 'f'.repeat(64);
    expect(reason(r)).toMatch(/unknown beacon chain/);
    const s = sandboxRecord({ id: 's2' });
    (s.fairness.beacon as { sandbox: { period: number } }).sandbox.period = 30;
    expect(reason(s)).toMatch(/chain hash does not match/);
  });

  it('rejects a reroll log that does not follow the sequence', () => {
    const swapped = sandboxRecord({ id: 'rr1', rerolls: 2 });
    swapped.rerolls = [swapped.rerolls![1]!, swapped.rerolls![0]!];
    expect(reason(swapped)).toMatch(/reroll 1 took pick 4, but the next unused pick then was 3/);
    const wrongName = sandboxRecord({ id: 'rr2', rerolls: 1 });
    wrongName.rerolls![0]!.newUserId = wrongName.frozenEntrants!.find(
      (e) => !wrongName.winners.some((w) => w.userId === e.userId),
    )!.userId;
    expect(reason(wrongName)).toMatch(/names .* as the replacement, but pick 3 is/);
    const skipped = sandboxRecord({ id: 'rr3', rerolls: 1 });
    skipped.rerolls = []; // the log hides a reroll: the current winner's pick is then out of range
    expect(reason(skipped)).toMatch(/invalid pick position|neither a current winner/);
  });

  it('rejects a v2 record without its beacon round', () => {
    const r = vectorRecord(KNOWN_ANSWERS[0]!);
    delete r.fairness.beacon;
    expect(reason(r)).toMatch(/must record its beacon round/);
  });
});

describe('npm run verify over a data directory', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDataDir());
    const repo = await FileDrawRepository.open(dir);
    await repo.saveDraw(vectorRecord(KNOWN_ANSWERS[0]!));
    await repo.saveDraw({ ...vectorRecord(KNOWN_ANSWERS[1]!), id: 'weight-edited' });
    await repo.saveDraw({ ...vectorRecord(KNOWN_ANSWERS[1]!), id: 'sig-edited' });
    await repo.close();
    const file = join(dir, 'draws', 'weight-edited.entrants.tsv');
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines[1] = lines[1]!.replace(/\t(\d+)$/, (_, w: string) => `\t${Number(w) + 1}`);
    await writeFile(file, lines.join('\n'));
    await tamperHistory(dir, 'sig-edited', (rec) => {
      rec.fairness.beacon!['signature'] = KNOWN_ANSWERS[0]!.signature;
      rec.fairness.beacon!['randomness'] = KNOWN_ANSWERS[0]!.randomness;
    });
  });
  afterAll(() => cleanup());

  const run = (...argv: string[]) => runCli(runVerifyCli, dir, ...argv);

  it('explains an honest beacon draw and exits 0', async () => {
    const r = await run('draw-kat-a');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/beacon\s+drand quicknet round 3: BLS signature valid/);
    expect(r.out).toMatch(/winners\s+viewer_1, viewer_10, viewer_4/);
  });

  it('exits 1 naming the problem for an edited weight and an edited signature', async () => {
    const w = await run('weight-edited');
    expect(w.code).toBe(1);
    expect(w.err).toMatch(/does NOT verify: entrant list digest mismatch/);
    const s = await run('sig-edited');
    expect(s.code).toBe(1);
    expect(s.err).toMatch(/signature of round 2 does not verify/);
  });
});
