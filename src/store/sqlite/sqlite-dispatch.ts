/**
 * Dispatch reads on SQLite; claims and completions are the plans of core/plan/plan-intents.ts.
 */
import type { IntentStatus } from '../../types.js';
import { OPEN_INTENT_SQL_LIST } from '../open-intent-sql.js';
import type { SqliteDatabase } from './sqlite-database.js';

export function countIntents(
  db: SqliteDatabase,
  tenant: string | undefined,
): Partial<Record<IntentStatus, number>> {
  const rows = db
    .prepare(
      `SELECT status, COUNT(*) AS n FROM intents ${tenant === undefined ? '' : 'WHERE tenant = ?'} GROUP BY status`,
    )
    .all(...(tenant === undefined ? [] : [tenant])) as { status: IntentStatus; n: number }[];
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

/**
 * Tenants with open intents, by a loose index scan: one index probe per tenant (the next tenant
 * name, then whether it has an open intent), not a scan of every intent ever delivered.
 */
export function listTenantsWithOpenIntents(db: SqliteDatabase): string[] {
  const rows = db
    .prepare(
      `WITH RECURSIVE tenants(tenant) AS (
         SELECT min(tenant) FROM intents
         UNION ALL
         SELECT (SELECT min(tenant) FROM intents WHERE tenant > tenants.tenant) FROM tenants
         WHERE tenants.tenant IS NOT NULL)
       SELECT tenant FROM tenants WHERE tenant IS NOT NULL AND EXISTS (
         SELECT 1 FROM intents i WHERE i.tenant = tenants.tenant
           AND i.status IN ${OPEN_INTENT_SQL_LIST})`,
    )
    .all() as { tenant: string }[];
  return rows.map((row) => row.tenant);
}
