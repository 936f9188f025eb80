/**
 * Groups of tests that need something this machine lacks (etcd, Chromium, strace, redis-server,
 * PostgreSQL binaries, Python or a Python package): skipped on a developer's machine, with one line
 * per group at the end of the run saying what is missing and how to install it; refused under
 * CI=true or FENCEGATE_TEST_STRICT=1, where nothing may be skipped for a missing dependency.
 *
 * The test files run in several vitest workers, so each skip is appended as one JSON line to a file
 * the global setup creates (test/global-setup.ts); the skip reporter (test/helpers/skip-reporter.ts)
 * prints them after vitest's summary.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { inject } from 'vitest';

/** Names the file that collects the skips of one run, for the workers and the skip reporter. */
export const SKIPS_FILE_ENV = 'FENCEGATE_TEST_SKIPS_FILE';

export interface SkippedGroup {
  group: string;
  missing: string;
  install: string;
}

/** Whether a missing dependency must fail the run instead of skipping its tests. */
export function strictAboutMissing(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CI === 'true' || env.FENCEGATE_TEST_STRICT === '1';
}

function skipsFile(): string | undefined {
  try {
    const provided = inject('skipsFile');
    if (typeof provided === 'string') return provided;
  } catch {
    // Not inside a vitest worker of this project: the environment says where, if anywhere.
  }
  return process.env[SKIPS_FILE_ENV];
}

/**
 * A group of tests needs something absent. Returns true when the group must be skipped and
 * records the group, what is missing and the install command for the end-of-run summary. Under
 * CI=true or FENCEGATE_TEST_STRICT=1 it throws instead. `missing` null means present: false.
 *
 *   describe.skipIf(skipForMissing('etcd store', problem, 'apt-get install etcd-server etcd-client'))(…)
 */
export function skipForMissing(group: string, missing: string | null, install: string): boolean {
  return skipOrRefuse({ group, missing, install }, process.env, skipsFile());
}

/** skipForMissing with its environment and skips file given (tested on their own). */
export function skipOrRefuse(
  need: { group: string; missing: string | null; install: string },
  env: NodeJS.ProcessEnv,
  file: string | undefined,
): boolean {
  const { group, missing, install } = need;
  if (missing === null) return false;
  if (strictAboutMissing(env)) {
    throw new Error(
      `${group} cannot run: ${missing}. Install it with: ${install} ` +
        `(CI=true or FENCEGATE_TEST_STRICT=1 allows no skip for a missing dependency)`,
    );
  }
  if (file !== undefined) {
    const entry: SkippedGroup = { group, missing, install };
    appendFileSync(file, `${JSON.stringify(entry)}\n`);
  }
  return true;
}

/** The path of `command` on PATH, or null when there is none. */
export function onPath(command: string): string | null {
  try {
    const found = execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim();
    return found === '' ? null : found;
  } catch {
    return null;
  }
}

/** `missing` for a group that runs the program `command`: null when it is on PATH. */
export function programMissing(command: string): string | null {
  return onPath(command) === null ? `${command} is not on PATH` : null;
}

/** The groups recorded in `file`, one per group name, in the order they were first skipped. */
export function readSkippedGroups(file: string): SkippedGroup[] {
  if (!existsSync(file)) return [];
  const byGroup = new Map<string, SkippedGroup>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const entry = JSON.parse(line) as SkippedGroup;
    if (!byGroup.has(entry.group)) byGroup.set(entry.group, entry);
  }
  return [...byGroup.values()];
}

/** One line per skipped group, as printed at the end of the run. */
export function skipSummary(groups: readonly SkippedGroup[]): string[] {
  if (groups.length === 0) return [];
  return [
    `Skipped ${groups.length} group(s) of tests for something missing on this machine ` +
      `(CI=true or FENCEGATE_TEST_STRICT=1 makes these failures):`,
    ...groups.map(
      (entry) => `  skipped: ${entry.group}: ${entry.missing}; install: ${entry.install}`,
    ),
  ];
}
