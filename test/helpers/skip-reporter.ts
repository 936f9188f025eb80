/**
 * Prints, after vitest's own summary, one line per group of tests skipped for something missing on
 * this machine (recorded by skipForMissing in the workers, see test/helpers/missing.ts).
 */
import { rmSync } from 'node:fs';
import type { Reporter } from 'vitest/node';
import { readSkippedGroups, SKIPS_FILE_ENV, skipSummary } from './missing.js';

/** Prints the skip lines of the run once, then forgets them; called by the reporter or teardown. */
export function printSkippedGroups(): void {
  const file = process.env[SKIPS_FILE_ENV];
  if (file === undefined || file === '') return;
  const lines = skipSummary(readSkippedGroups(file));
  rmSync(file, { force: true });
  if (lines.length > 0) process.stdout.write(`\n${lines.join('\n')}\n`);
}

export default class SkipReporter implements Reporter {
  onTestRunEnd(): void {
    printSkippedGroups();
  }
}
