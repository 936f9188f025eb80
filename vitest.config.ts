import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import LongestFirst from './test/helpers/longest-first.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/global-setup.ts'],
    // Most files wait on something else (a server process, PostgreSQL, etcd, a browser): more
    // files at once than cores keeps both cores busy. vitest's default is one per core less one.
    maxWorkers: Math.max(3, availableParallelism()),
    sequence: { sequencer: LongestFirst },
    // The skip reporter prints, after the summary, each group skipped for something missing.
    reporters: ['default', './test/helpers/skip-reporter.ts'],
  },
});
