/**
 * Applies the schema (postgres-migrations.ts) at open, in one transaction under an advisory lock,
 * so processes opening the store together apply each version once. A schema made before the
 * baseline, or by a newer version, is refused with nothing changed. Kept apart from the list so the
 * public types do not reach pg's.
 */
import { createHash } from 'node:crypto';
import type { PoolClient } from 'pg';
import { FencegateError } from '../../errors.js';
import {
  POSTGRES_MIGRATIONS,
  renderMigration,
  type PostgresMigration,
} from './postgres-migrations.js';

/** A version's text as recorded beside it, so a schema made from another text of it is known. */
function digestOf(migration: PostgresMigration): string {
  return createHash('sha256').update(migration.sql).digest('hex');
}

/** Applies the missing versions; returns the versions applied now. */
export async function migrate(client: PoolClient, schema: string): Promise<number[]> {
  const applied: number[] = [];
  await client.query('BEGIN');
  try {
    // Waiting for another process's migration, or building an index over a large table, may take
    // longer than the statement timeout that guards commits.
    await client.query('SET LOCAL statement_timeout = 0');
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `fencegate.migrate:${schema}`,
    ]);
    await refusePreBaseline(client, schema);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.schema_versions (version integer PRIMARY KEY,
         name text NOT NULL, digest text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const current = await refuseOtherTexts(client, schema);
    const known = POSTGRES_MIGRATIONS.at(-1)?.version ?? 0;
    if (current > known) {
      throw new FencegateError(
        'store_unavailable',
        `the PostgreSQL schema ${schema} is at version ${current}, made by a newer fencegate; this version knows up to ${known}: run the newer version`,
      );
    }
    for (const migration of POSTGRES_MIGRATIONS) {
      if (migration.version <= current) continue;
      await client.query(renderMigration(migration.sql, schema));
      await client.query(
        `INSERT INTO ${schema}.schema_versions (version, name, digest) VALUES ($1, $2, $3)`,
        [migration.version, migration.name, digestOf(migration)],
      );
      applied.push(migration.version);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
  return applied;
}

/**
 * The highest version applied, once every applied version is known to be this build's text of it.
 * Before the first release a version's text may still change; a schema made from another text (a
 * function that reads another payload, say) would not do what this build asks of it.
 */
async function refuseOtherTexts(client: PoolClient, schema: string): Promise<number> {
  const digested = await client.query(
    `SELECT 1 FROM information_schema.columns
      WHERE table_schema = $1 AND table_name = 'schema_versions' AND column_name = 'digest'`,
    [schema],
  );
  const { rows } = await client.query<{ version: number; digest: string | null }>(
    `SELECT version, ${digested.rowCount === 0 ? 'NULL' : 'digest'} AS digest
       FROM ${schema}.schema_versions ORDER BY version`,
  );
  for (const { version, digest } of rows) {
    const ours = POSTGRES_MIGRATIONS.find((migration) => migration.version === version);
    if (ours !== undefined && digest !== digestOf(ours)) {
      throw new FencegateError(
        'store_unavailable',
        `the PostgreSQL schema ${schema} was made by another pre-release build of fencegate, whose version ${version} differs from this one's, which this version does not open: no release made it, so drop the schema (DROP SCHEMA ${schema} CASCADE) or open the store with a new ?schema=`,
      );
    }
  }
  return rows.at(-1)?.version ?? 0;
}

async function refusePreBaseline(client: PoolClient, schema: string): Promise<void> {
  const { rows } = await client.query<{ earlier: string | null; decided: string | null }>(
    `SELECT to_regclass($1)::text AS earlier,
       (SELECT p.proname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = $2 AND p.proname = 'commit_under_lock' LIMIT 1) AS decided`,
    [`${schema}.migrations`, schema],
  );
  if (rows[0]?.decided != null) {
    throw new FencegateError(
      'store_unavailable',
      `the PostgreSQL schema ${schema} was made by a pre-release fencegate whose functions decided in SQL (its version 1), which this version does not open: no release made it, so drop the schema (DROP SCHEMA ${schema} CASCADE) or open the store with a new ?schema=`,
    );
  }
  if (rows[0]?.earlier == null) return;
  const versions = await client.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${schema}.migrations`,
  );
  const version = versions.rows[0]?.version ?? 0;
  throw new FencegateError(
    'store_unavailable',
    `the PostgreSQL schema ${schema} was made by a pre-release fencegate (version ${version} of the pre-release numbering), which this version does not open: no release made it, so drop the schema (DROP SCHEMA ${schema} CASCADE) or open the store with a new ?schema=`,
  );
}
