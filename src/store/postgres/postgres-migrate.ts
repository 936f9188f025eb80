/**
 * Applies the schema (postgres-migrations.ts) at open, in one transaction under an advisory lock,
 * so processes opening the store together apply each migration once. Kept apart from the list so
 * the public types do not reach pg's.
 */
import type { PoolClient } from 'pg';
import { POSTGRES_MIGRATIONS, renderMigration } from './postgres-migrations.js';

/** Applies the missing migrations; returns the versions applied now. */
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
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.migrations (
         version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const { rows } = await client.query<{ version: number | null }>(
      `SELECT max(version) AS version FROM ${schema}.migrations`,
    );
    const current = rows[0]?.version ?? 0;
    for (const migration of POSTGRES_MIGRATIONS) {
      if (migration.version <= current) continue;
      await client.query(renderMigration(migration.sql, schema));
      await client.query(`INSERT INTO ${schema}.migrations (version, name) VALUES ($1, $2)`, [
        migration.version,
        migration.name,
      ]);
      applied.push(migration.version);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
  return applied;
}
