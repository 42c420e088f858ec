/**
 * One giveaway harness (giveaway-fakes.ts) per test: `harnessPerTest(setUp?)` returns `make`,
 * which builds a harness and hands it to `setUp` first (products, say); after each test every
 * harness it made is shut down and its data folder removed (per-test.ts, vitest's hooks:
 * giveaway-fakes.ts itself uses none, so benches can use it).
 */
import { harness, removeDir, type Harness } from './giveaway-fakes.js';
import { perTest, type PerTest } from './per-test.js';

export function harnessPerTest(setUp?: (h: Harness) => void): PerTest<Parameters<typeof harness>, Harness> {
  return perTest(
    async (...args: Parameters<typeof harness>) => {
      const h = await harness(...args);
      setUp?.(h);
      return h;
    },
    async (h) => {
      await h.shutdown();
      await removeDir(h.dir);
    },
  );
}
