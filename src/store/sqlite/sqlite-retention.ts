/**
 * Retention on SQLite: stored outcomes older than a cutoff, and audit entries through a verified
 * seq, deleted in short write transactions of at most a chunk of rows each. The store runs one
 * step at a time and gives the event loop back between steps (sqlite-store.ts), so neither commits
 * nor the process's other requests wait for a whole pass.
 */
import {
  rolloutDriverKey,
  rolloutKey,
  rolloutScopesEnd,
  rolloutScopesPrefix,
} from '../../core/rollout-rows.js';
import { writeTransaction, read, type SqliteDatabase } from './sqlite-database.js';

/** Audit entries deleted in one step: rowid ranges, so a step is as short as an outcome step. */
export const AUDIT_PRUNE_CHUNK = 2000;
/**
 * Outcomes deleted in one step. An outcome row and its index entries are a few hundred bytes: a
 * step of this size takes a few milliseconds.
 */
export const OUTCOME_PRUNE_CHUNK = 1000;

/**
 * Deletes up to OUTCOME_PRUNE_CHUNK stored outcomes created before the cutoff, oldest first,
 * found through the index by age: a step costs what it deletes, not the size of the table.
 */
export function pruneOperationsStep(db: SqliteDatabase, createdBefore: number): number {
  const remove = db.prepare(
    `DELETE FROM operations WHERE (tenant, operation_id) IN (
       SELECT tenant, operation_id FROM operations
       WHERE created_at < ? ORDER BY created_at LIMIT ${OUTCOME_PRUNE_CHUNK})`,
  );
  return writeTransaction(db, () => remove.run(createdBefore).changes);
}

/**
 * Records that the audit log starts after `throughSeq`. The mark comes first: from then on a verify
 * without the checkpoint is refused, even mid-prune.
 */
export function markAuditPruned(
  db: SqliteDatabase,
  throughSeq: number,
  lastHash: string | null,
): void {
  // SET expressions read the row as it was: the hash follows the mark only when the mark moves.
  const mark = db.prepare(
    `INSERT INTO audit_retention (id, pruned_through, pruned_hash) VALUES (1, ?, ?)
     ON CONFLICT (id) DO UPDATE SET
       pruned_through = max(pruned_through, excluded.pruned_through),
       pruned_hash = CASE WHEN excluded.pruned_through >= pruned_through
                          THEN excluded.pruned_hash ELSE pruned_hash END`,
  );
  writeTransaction(db, () => mark.run(throughSeq, lastHash));
}

/** The hash of the entry the log is pruned through; null when none was recorded. */
export function auditPrunedHash(db: SqliteDatabase): string | null {
  const row = read(
    () =>
      db.prepare('SELECT pruned_hash AS hash FROM audit_retention WHERE id = 1').get() as
        { hash: string | null } | undefined,
  );
  return row?.hash ?? null;
}

/** The store's id, made with the schema (verify checkpoints name it). */
export function storeIdOf(db: SqliteDatabase): string {
  return read(
    () =>
      (db.prepare('SELECT store_id AS id FROM store_identity WHERE id = 1').get() as { id: string })
        .id,
  );
}

/**
 * Deletes up to AUDIT_PRUNE_CHUNK audit entries with seq <= throughSeq. The newest entry of the log
 * always stays: seq is the rowid, and SQLite would hand out a deleted newest rowid again, putting
 * new entries below the checkpoint where verify never reads.
 */
export function pruneAuditStep(db: SqliteDatabase, throughSeq: number): number {
  const remove = db.prepare(
    `DELETE FROM audit WHERE seq IN (
       SELECT seq FROM audit WHERE seq <= ? AND seq < (SELECT max(seq) FROM audit)
       ORDER BY seq LIMIT ${AUDIT_PRUNE_CHUNK})`,
  );
  return writeTransaction(db, () => remove.run(throughSeq).changes);
}

export function auditPrunedThrough(db: SqliteDatabase): number {
  const row = read(
    () =>
      db.prepare('SELECT pruned_through AS seq FROM audit_retention WHERE id = 1').get() as
        { seq: number } | undefined,
  );
  return row?.seq ?? 0;
}

/** Rollout documents deleted in one step, as many as outcomes. */
export const ROLLOUT_PRUNE_CHUNK = OUTCOME_PRUNE_CHUNK;

/** The first tenant after `after` with rollout documents: one seek in the primary key. */
export function nextRolloutTenant(db: SqliteDatabase, after: string): string | null {
  const row = read(
    () =>
      db
        .prepare('SELECT tenant FROM rollout_rows WHERE tenant > ? ORDER BY tenant LIMIT 1')
        .get(after) as { tenant: string } | undefined,
  );
  return row?.tenant ?? null;
}

/**
 * Deletes up to ROLLOUT_PRUNE_CHUNK of a rollout's scope documents, and the rollout's own once
 * none is left.
 */
export function deleteRolloutStep(db: SqliteDatabase, tenant: string, rolloutId: string): number {
  const scopes = db.prepare(
    `DELETE FROM rollout_rows WHERE tenant = ? AND key IN (
       SELECT key FROM rollout_rows WHERE tenant = ? AND key >= ? AND key < ?
       LIMIT ${ROLLOUT_PRUNE_CHUNK})`,
  );
  const own = db.prepare('DELETE FROM rollout_rows WHERE tenant = ? AND key = ?');
  return writeTransaction(db, () => {
    const changes = scopes.run(
      tenant,
      tenant,
      rolloutScopesPrefix(rolloutId),
      rolloutScopesEnd(rolloutId),
    ).changes;
    if (changes === ROLLOUT_PRUNE_CHUNK) return changes;
    const driver = own.run(tenant, rolloutDriverKey(rolloutId)).changes;
    return changes + driver + own.run(tenant, rolloutKey(rolloutId)).changes;
  });
}
