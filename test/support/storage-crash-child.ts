/**
 * Child process for the SIGKILL test: opens a repository on argv[2] (real clock, default 50 ms
 * flush), saves an open draw, then appends one entrant every 2 ms forever, printing
 * `appended <count> <epoch ms>` after each, until it is killed.
 */
import { FileDrawRepository } from '../../src/storage/index.js';
import { makeEntrant } from './fairness-records.js';
import { openRecord } from './storage-helpers.js';

const dataDir = process.argv[2]!;
const repo = await FileDrawRepository.open(dataDir);
await repo.saveDraw(openRecord('crash'));
let count = 0;
setInterval(() => {
  for (let k = 0; k < 5; k++) {
    repo.appendEntrant('crash', makeEntrant(count));
    count += 1;
  }
  process.stdout.write(`appended ${count} ${Date.now()}\n`);
}, 2);
