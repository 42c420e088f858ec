/**
 * Run by test/giveaway-owned-string.test.ts in its own process (`node --expose-gc --import tsx`):
 * how much of a 16 MB chat "frame" each kind of kept string holds on to after the frame is dropped,
 * in bytes of JS heap after a full gc. Prints one JSON object.
 */
import { ownedString } from '../../src/giveaway/entrants/owned-string.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const FRAME_CHARS = 1 << 24;
const kept: string[] = [];

/** Heap still held after the frame is gone while `cut(frame)` is kept. */
function retained(cut: (frame: string) => string): number {
  kept.length = 0;
  gc!();
  const base = process.memoryUsage().heapUsed;
  let frame: string | undefined = `@user-id=${Math.random()} :someviewer PRIVMSG #chan :!enter `.padEnd(
    FRAME_CHARS,
    'x',
  );
  kept.push(cut(frame));
  frame = undefined;
  gc!();
  const held = process.memoryUsage().heapUsed - base;
  if (kept[0]!.length === 0) throw new Error('nothing kept');
  return held;
}

const at = 30;
process.stdout.write(
  JSON.stringify({
    frameBytes: FRAME_CHARS,
    slice12: retained((f) => f.slice(at, at + 12)),
    slice13: retained((f) => f.slice(at, at + 13)),
    owned13: retained((f) => ownedString(f.slice(at, at + 13))),
    owned40: retained((f) => ownedString(f.slice(at, at + 40))),
  }) + '\n',
);
