import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/global-setup.ts'],
    // The skip reporter prints, after the summary, each group skipped for something missing.
    reporters: ['default', './test/helpers/skip-reporter.ts'],
  },
});
