/** Runs once before the test files: services the suites need are found or started here. */
import type { TestProject } from 'vitest/node';
import { findOrStartPostgres } from './postgres/pg-service.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The PostgreSQL URL for tests, or null when none could be found or started. */
    pgUrl: string | null;
    /** Why there is no PostgreSQL (what is missing), when pgUrl is null. */
    pgProblem: string | null;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
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
  return () => postgres.stop();
}
