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

/** Tables a fresh store already holds rows in, which emptying it for reuse keeps. */
const KEPT_ON_REUSE = ['schema_versions', 'store_identity'];

/**
 * Empties a migrated schema's tables, but for KEPT_ON_REUSE, and restarts its sequences, so it
 * answers as a fresh store without migrating again. DELETE, not TRUNCATE: on tables this small
 * TRUNCATE costs a new file per table and a sync (about 200 ms for the schema against 2 ms).
 */
export async function emptySchema(url: string, schema: string): Promise<void> {
  await withClient(url, async (client) => {
    const { rows } = await client.query<{ relname: string; relkind: string }>(
      `SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind IN ('r', 'S')`,
      [schema],
    );
    const statements = rows
      .filter((row) => !KEPT_ON_REUSE.includes(row.relname))
      .map((row) =>
        row.relkind === 'S'
          ? `ALTER SEQUENCE ${schema}.${row.relname} RESTART;`
          : `DELETE FROM ${schema}.${row.relname};`,
      );
    await client.query(`BEGIN; ${statements.join(' ')} COMMIT;`);
  });
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

/** What a statement was sent as: its text, or a prepared statement's config. */
export type SentQuery = string | { name?: unknown; text?: unknown; values?: unknown[] } | undefined;

/**
 * Runs `work` with each query any pg client of this process sends shown to `seen` first; the real
 * driver still runs it, and the driver is put back as it was afterwards.
 */
export async function observingQueries(
  seen: (query: SentQuery) => void,
  work: () => Promise<unknown>,
): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back as it was, and called with its own `this`
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    seen(args[0] as SentQuery);
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = query;
  }
}

/** A fencegate prepared statement's name without its prefix and schema: `apply`, `load_rows`. */
export function statementName(name: string, schema: string): string {
  return name.replace(/^fencegate_/, '').replace(`_${schema}`, '');
}
