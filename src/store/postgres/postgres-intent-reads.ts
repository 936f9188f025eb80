/**
 * Reads of the outbox on PostgreSQL. Claims and completions are core's plans
 * (core/plan/plan-intents.ts), applied like every other write (postgres-engine.ts).
 */
import type { IntentStatus } from '../../types.js';
import { OPEN_INTENT_SQL_LIST } from '../open-intent-sql.js';
import type { PostgresCalls } from './postgres-calls.js';

export async function countIntents(
  db: PostgresCalls,
  tenant: string | undefined,
): Promise<Partial<Record<IntentStatus, number>>> {
  const rows =
    tenant === undefined
      ? await db.rows<{ status: IntentStatus; n: number }>(
          `SELECT status, count(*)::integer AS n FROM ${db.schema}.intents GROUP BY status`,
          [],
          'count_intents_all',
        )
      : await db.rows<{ status: IntentStatus; n: number }>(
          `SELECT status, count(*)::integer AS n FROM ${db.schema}.intents WHERE tenant = $1
           GROUP BY status`,
          [tenant],
          'count_intents',
        );
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

/**
 * Tenants with open intents, by a loose index scan: one index probe per tenant (the next tenant
 * name, then whether it has an open intent), not a scan of every intent ever delivered.
 */
export async function listTenantsWithOpenIntents(db: PostgresCalls): Promise<string[]> {
  const rows = await db.rows<{ tenant: string }>(
    `WITH RECURSIVE tenants(tenant) AS (
       SELECT min(tenant) FROM ${db.schema}.intents
       UNION ALL
       SELECT (SELECT min(i.tenant) FROM ${db.schema}.intents i WHERE i.tenant > t.tenant)
       FROM tenants t WHERE t.tenant IS NOT NULL)
     SELECT tenant FROM tenants WHERE tenant IS NOT NULL AND EXISTS (
       SELECT 1 FROM ${db.schema}.intents i WHERE i.tenant = tenants.tenant
         AND i.status IN ${OPEN_INTENT_SQL_LIST})`,
    [],
    'open_intent_tenants',
  );
  return rows.map((row) => row.tenant);
}
