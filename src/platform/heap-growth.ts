/**
 * How far the bot's JavaScript heap may grow between full garbage collections: V8's
 * old-generation limit is set to 4x the live heap after each full collection (V8's own ceiling),
 * instead of the about 2x V8 picks for the bot on its own.
 *
 * Why, measured with bench/chat-process.bench.ts (`BENCH_BOT_NODE_ARGS=--trace-gc-nvp`, Node 26,
 * 5 rounds of 200,000 new entrants then 200,000 repeats): in a chat flood, tmi.js and the
 * WebSocket reader leave about 40 bytes per line that outlive two young-generation collections,
 * in the bot and in a bare tmi.js client alike (55 MB and 51 MB over 3 rounds). V8 starts marking
 * the whole heap once the room left under its limit is less than the young generation (about
 * 32 MB under a flood); with the bot's live heap (about 35 MB: its code and modules) and a limit
 * of about twice that, the room is gone soon after each full collection: 14 full marks, 2.06 s
 * of marking on V8's helper threads (about 1 us per line, while tmi.js spends about 6.5 us
 * reading one); the bare client, with a heap of a few MB, had 3 in 3 rounds. With the limit at
 * 4x: 4 full marks, 0.40 s. The peak heap of that flood stayed where it was (100 MB of objects;
 * 137 MB reserved, 145 MB before).
 *
 * Contract: `widenHeapGrowth()` sets V8's `--heap-growing-percent=300` through Node's public
 * `v8.setFlagsFromString`, before the bot allocates its draws. V8 reads the option each time it
 * sets a limit, so it holds from the next full collection on (every Node line this project runs
 * on, 22, 24 and 26, has it). It changes when the collector runs, never what it keeps.
 */
import { setFlagsFromString } from 'node:v8';

/** Sets the heap-growing factor for the rest of the process (see the module header). */
export function widenHeapGrowth(): void {
  setFlagsFromString('--heap-growing-percent=300');
}
