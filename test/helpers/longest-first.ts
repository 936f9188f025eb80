/**
 * Runs the longest test files first, so that the last files to start are short ones and no worker
 * is left running a long file alone at the end (on two cores the order alone moved the wall time
 * of `npm test` by minutes). Durations come from `test/file-durations.json`, written by
 * `node scripts/file-durations.js <vitest JSON report>`, because CI starts from a clean clone
 * with no vitest cache. A file missing from it counts as the median.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const DURATIONS_FILE = new URL('../file-durations.json', import.meta.url);

function readDurations(): Map<string, number> {
  try {
    const parsed = JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as Record<string, number>;
    return new Map(Object.entries(parsed));
  } catch {
    return new Map();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

export default class LongestFirst extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations = readDurations();
    const unknown = median([...durations.values()]);
    const root = this.ctx.config.root;
    const estimate = (file: TestSpecification): number =>
      durations.get(relative(root, file.moduleId)) ?? unknown;
    return Promise.resolve([...files].sort((a, b) => estimate(b) - estimate(a)));
  }
}
