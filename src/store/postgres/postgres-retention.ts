/**
 * Retention on PostgreSQL: stored outcomes older than a cutoff, and audit entries through a
 * verified seq, deleted in statements of at most a chunk of rows, so no transaction holds many
 * locks for long. Outcomes are found through their index by age: a pass costs what it deletes.
 */
import { fail } from '../../errors.js';
import {
  rolloutDriverKey,
  rolloutKey,
  rolloutScopesEnd,
  rolloutScopesPrefix,
} from '../../core/rollout-rows.js';
import type { PostgresCalls } from './postgres-calls.js';

const CHUNK = 5000;

export async function pruneOperations(
  calls: PostgresCalls,
  createdBefore: number,
): Promise<number> {
  const s = calls.schema;
  return await deleteInChunks(
    calls,
    `DELETE FROM ${s}.operations WHERE (tenant, operation_id) IN (
       SELECT tenant, operation_id FROM ${s}.operations
       WHERE created_at < $1 ORDER BY created_at LIMIT ${CHUNK})`,
    [createdBefore],
    'prune_operations',
  );
}

/** Runs a DELETE of at most CHUNK rows until one deletes fewer; how many went. */
async function deleteInChunks(
  calls: PostgresCalls,
  remove: string,
  values: unknown[],
  name?: string,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const rows = await calls.rows<{ n: string }>(
      `WITH removed AS (${remove} RETURNING 1) SELECT count(*) AS n FROM removed`,
      values,
      name,
    );
    const changes = Number(rows[0]?.n ?? 0);
    deleted += changes;
    if (changes < CHUNK) return deleted;
  }
}

export async function pruneAudit(
  calls: PostgresCalls,
  throughSeq: number,
  lastHash: string | null,
): Promise<number> {
  const s = calls.schema;
  // The mark first: from then on a verify without the checkpoint is refused, even mid-prune. The
  // hash of the entry at the mark follows the mark only when the mark moves.
  await calls.rows(
    `INSERT INTO ${s}.audit_retention (id, pruned_through, pruned_hash) VALUES (1, $1, $2)
     ON CONFLICT (id) DO UPDATE SET
       pruned_through = greatest(${s}.audit_retention.pruned_through, excluded.pruned_through),
       pruned_hash = CASE WHEN excluded.pruned_through >= ${s}.audit_retention.pruned_through
                          THEN excluded.pruned_hash ELSE ${s}.audit_retention.pruned_hash END`,
    [throughSeq, lastHash],
  );
  return await deleteInChunks(
    calls,
    `DELETE FROM ${s}.audit WHERE seq IN (
       SELECT seq FROM ${s}.audit WHERE seq <= $1 ORDER BY seq LIMIT ${CHUNK})`,
    [throughSeq],
  );
}

export async function auditPrunedThrough(calls: PostgresCalls): Promise<number> {
  const rows = await calls.rows<{ seq: string }>(
    `SELECT pruned_through AS seq FROM ${calls.schema}.audit_retention WHERE id = 1`,
    [],
  );
  return Number(rows[0]?.seq ?? 0);
}

export async function auditPrunedHash(calls: PostgresCalls): Promise<string | null> {
  const rows = await calls.rows<{ hash: string | null }>(
    `SELECT pruned_hash AS hash FROM ${calls.schema}.audit_retention WHERE id = 1`,
    [],
  );
  return rows[0]?.hash ?? null;
}

/** The store's id, made with the schema (verify checkpoints name it). */
export async function storeIdOf(calls: PostgresCalls): Promise<string> {
  const rows = await calls.rows<{ id: string }>(
    `SELECT store_id AS id FROM ${calls.schema}.store_identity WHERE id = 1`,
    [],
  );
  const id = rows[0]?.id;
  if (id === undefined)
    return fail('internal_error', 'the store has no id: its schema is incomplete');
  return id;
}

/** The first tenant after `after` with rollout documents: one seek in the primary key. */
export async function nextRolloutTenant(
  calls: PostgresCalls,
  after: string,
): Promise<string | null> {
  const rows = await calls.rows<{ tenant: string }>(
    `SELECT tenant FROM ${calls.schema}.rollout_rows WHERE tenant > $1 ORDER BY tenant LIMIT 1`,
    [after],
    'next_rollout_tenant',
  );
  return rows[0]?.tenant ?? null;
}

/** A rollout's scope documents a chunk at a time, then the rollout's own. */
export async function deleteRollout(
  calls: PostgresCalls,
  tenant: string,
  rolloutId: string,
): Promise<number> {
  const s = calls.schema;
  const scopes = await deleteInChunks(
    calls,
    `DELETE FROM ${s}.rollout_rows WHERE tenant = $1 AND key IN (
       SELECT key FROM ${s}.rollout_rows WHERE tenant = $1 AND key >= $2 AND key < $3
       ORDER BY key LIMIT ${CHUNK})`,
    [tenant, rolloutScopesPrefix(rolloutId), rolloutScopesEnd(rolloutId)],
    'delete_rollout_scopes',
  );
  // The driver's lease before the rollout itself: an interrupted deletion still finds the rollout.
  const driver = await deleteInChunks(
    calls,
    `DELETE FROM ${s}.rollout_rows WHERE tenant = $1 AND key = $2`,
    [tenant, rolloutDriverKey(rolloutId)],
    'delete_rollout_driver',
  );
  const own = await deleteInChunks(
    calls,
    `DELETE FROM ${s}.rollout_rows WHERE tenant = $1 AND key = $2`,
    [tenant, rolloutKey(rolloutId)],
    'delete_rollout',
  );
  return scopes + driver + own;
}
