import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Vitest's default outside watch mode is one worker fewer than the cores: a single worker on a
    // 2-core machine. The tests spend most of their time waiting on sockets, child processes and
    // timers, not on the CPU, so at least two files run at once (the whole suite on Node 24 took
    // 495 s with one worker and 315 s with two on a loaded 2-core machine, all passing in both).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
