/**
 * Child process for the kill -9 test of history writes: opens a repository on argv[2] and saves
 * one more finished draw after another, forever (each save appends to history.jsonl and syncs it), printing
 * `finished <id>` once a save has resolved, until it is killed. Ids continue from the history it
 * found, so a run after a kill adds to what the previous one left.
 */
import { FileDrawRepository } from '../../src/storage/index.js';
import { finishedRecord } from './fairness-records.js';

const repo = await FileDrawRepository.open(process.argv[2]!);
let n = (await repo.listDraws()).length;
process.stdout.write(`ready ${n}\n`);
for (;;) {
  const id = `kill_${n++}`;
  await repo.saveDraw(finishedRecord({ id, entrants: 3, winners: 1 }));
  process.stdout.write(`finished ${id}\n`);
}
