/** Runs once before the test files: services the suites need are found or started here. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { findOrStartEtcd } from './etcd/etcd-service.js';
import { SKIPS_FILE_ENV } from './helpers/missing.js';
import { printSkippedGroups } from './helpers/skip-reporter.js';
import { useTestTempDir } from './helpers/test-temp-root.js';
import { redisProblem } from './integrations/redis-service.js';
import { findOrStartPostgres } from './postgres/pg-service.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The PostgreSQL URL for tests, or null when none could be found or started. */
    pgUrl: string | null;
    /** Why there is no PostgreSQL (what is missing), when pgUrl is null. */
    pgProblem: string | null;
    /** etcd URLs for tests (a single member and a 3-member cluster), or null with the reason. */
    etcdUrl: string | null;
    etcdClusterUrl: string | null;
    etcdProblem: string | null;
    /** What the Redis tests lack (no Redis answers and no redis-server to start), or null. */
    redisProblem: string | null;
    /** The file where the workers record the groups skipped for something missing. */
    skipsFile: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // First: everything started from here on (etcd's data, the workers, their servers) uses it.
  const temp = useTestTempDir();
  console.log(`temporary files of the tests: ${temp.path} (${temp.why})`);
  const removeSkipsFile = setupSkipsFile(project);
  const stopEtcd = await setupEtcd(project);
  const stopPostgres = await setupPostgres(project);
  project.provide('redisProblem', await redisProblem());
  return async () => {
    await stopPostgres();
    await stopEtcd();
    removeSkipsFile();
    temp.remove();
  };
}

/** A run directory whose file collects the skipped groups from every worker. */
function setupSkipsFile(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-test-run-'));
  const file = join(dir, 'skipped.jsonl');
  project.provide('skipsFile', file);
  process.env[SKIPS_FILE_ENV] = file;
  return () => {
    // The skip reporter printed them after the summary; a run with other reporters prints here.
    printSkippedGroups();
    rmSync(dir, { recursive: true, force: true });
  };
}

async function setupEtcd(project: TestProject): Promise<() => Promise<void>> {
  const etcd = await findOrStartEtcd();
  if (etcd instanceof Error) {
    project.provide('etcdUrl', null);
    project.provide('etcdClusterUrl', null);
    project.provide('etcdProblem', etcd.message);
    return () => Promise.resolve();
  }
  console.log(`etcd for the tests: ${etcd.origin}`);
  project.provide('etcdUrl', etcd.url);
  project.provide('etcdClusterUrl', etcd.clusterUrl);
  project.provide('etcdProblem', null);
  process.env.FENCEGATE_TEST_ETCD_URL_STARTED = etcd.url;
  return () => etcd.stop();
}

async function setupPostgres(project: TestProject): Promise<() => Promise<void>> {
  const postgres = await findOrStartPostgres();
  if (postgres instanceof Error) {
    // Only the files that need PostgreSQL fail (with this message); the others still run.
    project.provide('pgUrl', null);
    project.provide('pgProblem', postgres.message);
    return () => Promise.resolve();
  }
  console.log(`PostgreSQL for the tests: ${postgres.origin}`);
  project.provide('pgUrl', postgres.url);
  project.provide('pgProblem', null);
  // Child processes spawned by tests (multi-process cases) read it from the environment.
  process.env.FENCEGATE_TEST_PG_URL = postgres.url;
  // Every connection of the run, in the workers and in their child processes, commits without
  // waiting for its WAL flush (the pg driver reads PGOPTIONS). A transaction stays atomic,
  // isolated and visible in commit order; only a crash of the database server could lose its last
  // ones, and no test crashes a server it shares. The tests check what the stores decide, not
  // PostgreSQL's own durability: the cluster the tests start themselves runs with fsync=off for
  // the same reason. A PGOPTIONS of the caller's own is kept.
  process.env.PGOPTIONS ??= '-c synchronous_commit=off';
  return () => postgres.stop();
}
