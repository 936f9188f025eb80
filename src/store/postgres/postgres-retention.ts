/**
 * Retention on PostgreSQL: stored outcomes older than a cutoff, and audit entries through a
 * verified seq, deleted in statements of at most CHUNK rows, so no transaction holds many locks
 * for long. Outcomes carry no index on their age (it would cost every commit one more B-tree): a
 * pass walks the table in key order instead.
 */
import type { PostgresCalls } from './postgres-calls.js';

const CHUNK = 5000;

export async function pruneOperations(
  calls: PostgresCalls,
  createdBefore: number,
): Promise<number> {
  const s = calls.schema;
  let after: [string, string] = ['', ''];
  let deleted = 0;
  for (;;) {
    const rows = await calls.rows<{ tenant: string; id: string; removed: boolean }>(
      `WITH page AS (
         SELECT tenant, operation_id, created_at FROM ${s}.operations
         WHERE (tenant, operation_id) > ($1, $2) ORDER BY tenant, operation_id LIMIT ${CHUNK}),
       removed AS (
         DELETE FROM ${s}.operations o USING page
         WHERE o.tenant = page.tenant AND o.operation_id = page.operation_id AND o.created_at < $3
         RETURNING o.tenant, o.operation_id)
       SELECT page.tenant, page.operation_id AS id,
              EXISTS (SELECT 1 FROM removed r WHERE r.tenant = page.tenant AND r.operation_id = page.operation_id) AS removed
       FROM page ORDER BY page.tenant, page.operation_id`,
      [after[0], after[1], createdBefore],
      'prune_operations',
    );
    const last = rows.at(-1);
    if (last === undefined) return deleted;
    deleted += rows.filter((row) => row.removed).length;
    after = [last.tenant, last.id];
  }
}

export async function pruneAudit(calls: PostgresCalls, throughSeq: number): Promise<number> {
  const s = calls.schema;
  // The mark first: from then on a verify without the checkpoint is refused, even mid-prune.
  await calls.rows(
    `INSERT INTO ${s}.audit_retention (id, pruned_through) VALUES (1, $1)
     ON CONFLICT (id) DO UPDATE SET pruned_through = greatest(${s}.audit_retention.pruned_through, excluded.pruned_through)`,
    [throughSeq],
  );
  let deleted = 0;
  for (;;) {
    const rows = await calls.rows<{ n: string }>(
      `WITH removed AS (
         DELETE FROM ${s}.audit WHERE seq IN (
           SELECT seq FROM ${s}.audit WHERE seq <= $1 ORDER BY seq LIMIT ${CHUNK})
         RETURNING 1)
       SELECT count(*) AS n FROM removed`,
      [throughSeq],
    );
    const changes = Number(rows[0]?.n ?? 0);
    deleted += changes;
    if (changes < CHUNK) return deleted;
  }
}

export async function auditPrunedThrough(calls: PostgresCalls): Promise<number> {
  const rows = await calls.rows<{ seq: string }>(
    `SELECT pruned_through AS seq FROM ${calls.schema}.audit_retention WHERE id = 1`,
    [],
  );
  return Number(rows[0]?.seq ?? 0);
}

export const POSTGRES_RETENTION_SQL = `
CREATE TABLE @schema@.audit_retention (
  id integer PRIMARY KEY CHECK (id = 1),
  pruned_through bigint NOT NULL
);
`;
