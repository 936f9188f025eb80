/**
 * Retention on SQLite: stored outcomes older than a cutoff, and audit entries through a verified
 * seq, deleted in short write transactions of at most CHUNK rows, so commits are never held up for
 * long. Outcomes carry no index on their age (it would cost every commit one more B-tree): a pass
 * walks the table in key order instead.
 */
import { writeTransaction, read, type SqliteDatabase } from './sqlite-database.js';

const CHUNK = 5000;

export function pruneOperations(db: SqliteDatabase, createdBefore: number): number {
  const page = db.prepare(
    `SELECT tenant, operation_id AS id, created_at AS at FROM operations
     WHERE (tenant, operation_id) > (?, ?) ORDER BY tenant, operation_id LIMIT ${CHUNK}`,
  );
  const remove = db.prepare(
    'DELETE FROM operations WHERE tenant = ? AND operation_id = ? AND created_at < ?',
  );
  let after: [string, string] = ['', ''];
  let deleted = 0;
  for (;;) {
    const rows = read(() => page.all(...after) as { tenant: string; id: string; at: number }[]);
    const last = rows.at(-1);
    if (last === undefined) return deleted;
    const old = rows.filter((row) => row.at < createdBefore);
    if (old.length > 0) {
      deleted += writeTransaction(db, () =>
        old.reduce((n, row) => n + remove.run(row.tenant, row.id, createdBefore).changes, 0),
      );
    }
    after = [last.tenant, last.id];
  }
}

/**
 * Deletes audit entries with seq <= throughSeq and records how far the log is pruned. The newest
 * entry of the log always stays: seq is the rowid, and SQLite would hand out a deleted newest
 * rowid again, putting new entries below the checkpoint where verify never reads.
 */
export function pruneAudit(db: SqliteDatabase, throughSeq: number): number {
  const remove = db.prepare(
    `DELETE FROM audit WHERE seq IN (
       SELECT seq FROM audit WHERE seq <= ? AND seq < (SELECT max(seq) FROM audit)
       ORDER BY seq LIMIT ${CHUNK})`,
  );
  const mark = db.prepare(
    `INSERT INTO audit_retention (id, pruned_through) VALUES (1, ?)
     ON CONFLICT (id) DO UPDATE SET pruned_through = max(pruned_through, excluded.pruned_through)`,
  );
  // The mark first: from then on a verify without the checkpoint is refused, even mid-prune.
  writeTransaction(db, () => mark.run(throughSeq));
  let deleted = 0;
  for (;;) {
    const changes = writeTransaction(db, () => remove.run(throughSeq).changes);
    deleted += changes;
    if (changes < CHUNK) return deleted;
  }
}

export function auditPrunedThrough(db: SqliteDatabase): number {
  const row = read(
    () =>
      db.prepare('SELECT pruned_through AS seq FROM audit_retention WHERE id = 1').get() as
        { seq: number } | undefined,
  );
  return row?.seq ?? 0;
}

export const SQLITE_RETENTION_MIGRATION = `
  CREATE TABLE audit_retention (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    pruned_through INTEGER NOT NULL
  );
`;
