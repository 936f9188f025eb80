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
    // A worker keeps its module cache from one file to the next instead of importing the library,
    // Fastify, the drivers and the frameworks again for each of ~180 files: on 2 cores that import
    // was the largest single cost of the run. Test files keep no state in shared modules (servers,
    // stores and clients are made and closed by each file), and files are still handed out one at a
    // time, longest first.
    isolate: false,
    sequence: { sequencer: LongestFirst },
    // The skip reporter prints, after the summary, each group skipped for something missing.
    reporters: ['default', './test/helpers/skip-reporter.ts'],
  },
});
