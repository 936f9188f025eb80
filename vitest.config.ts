import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import LongestFirst from './test/helpers/longest-first.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/global-setup.ts'],
    // Most files wait on something else (a server process, PostgreSQL, etcd, a browser, pytest):
    // more files at once than cores keeps the cores busy. vitest's default is one per core less
    // one; on 2 cores, 4 at once ran the suite in 333 s against 358 s with 3.
    maxWorkers: Math.max(4, availableParallelism()),
    sequence: { sequencer: LongestFirst },
    // The skip reporter prints, after the summary, each group skipped for something missing.
    reporters: ['default', './test/helpers/skip-reporter.ts'],
  },
});
