/**
 * Shared by the PostgreSQL test files: the database URL from the global setup, a schema of its own
 * per test file (dropped at the end), and a plain pg client for looking behind the store.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/** The URL the global setup found or started; throws its explanation when there is none. */
export function pgUrl(): string {
  const provided = inject('pgUrl');
  if (typeof provided === 'string') return provided;
  if (provided === null) {
    throw new Error(inject('pgProblem') ?? 'no PostgreSQL could be found or started for the tests');
  }
  // Not run under the project's vitest setup.
  const fromEnv = process.env.FENCEGATE_TEST_PG_URL;
  if (fromEnv === undefined || fromEnv === '') throw new Error('FENCEGATE_TEST_PG_URL is not set');
  return fromEnv;
}

/** A fresh schema name for one test file (or one test). */
export function testSchema(label: string): string {
  const clean = label
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 30);
  return `fgt_${clean}_${randomBytes(4).toString('hex')}`;
}

export async function withClient<T>(
  url: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  await withClient(url, (client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
}

/** Empties every fencegate table of a migrated schema (a fresh store without re-migrating). */
export async function truncateSchema(url: string, schema: string): Promise<void> {
  await withClient(url, (client) =>
    client.query(
      `TRUNCATE ${[
        'scopes',
        'fence_grants',
        'records',
        'record_deletions',
        'operations',
        'intents',
        'audit',
        'tokens',
        'policies',
        'cutovers',
        'cutover_scopes',
        'jobs',
        'rollout_rows',
      ]
        .map((table) => `${schema}.${table}`)
        .join(', ')} RESTART IDENTITY`,
    ),
  );
}

/**
 * Polls the database (not the wall clock) until `check` holds. Each poll waits a millisecond, so
 * the bound is seconds on any machine: a fast database answers 2,000 polls within a 300 ms lease.
 */
export async function untilDatabase(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 5000; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Some session is blocked on a lock while running a statement that calls `fn` of `schema`. */
export function someoneWaitsIn(url: string, schema: string, fn: string): Promise<boolean> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE wait_event_type = 'Lock' AND position($1 in query) > 0`,
      [`${schema}.${fn}(`],
    );
    return (rows[0]?.n ?? 0) > 0;
  });
}
