/**
 * The PostgreSQL schema's versions: an ordered list of SQL texts, applied at open in one
 * transaction under an advisory lock (so processes opening the store together apply each once) and
 * recorded in `<schema>.schema_versions`. Every object lives in the store's own schema; `@schema@`
 * in the texts is replaced by its name.
 *
 * Version 1 is the baseline, the first of a numbering that starts again with the first release:
 * the schema the pre-release versions built step by step, in one piece, grouped by concern (the
 * tables, then the functions, then the triggers that call them). A change from now on is a new
 * entry here, never an edit of one already released. Schemas made before the baseline recorded
 * their steps in `<schema>.migrations` instead; no release made them, so they are refused, not
 * upgraded (postgres-migrate.ts).
 */
import { AFTER_LOCKS_SQL } from './postgres-sql-after-locks.js';
import { AUDIT_SQL } from './postgres-sql-audit.js';
import { COMMIT_SQL } from './postgres-sql-commit.js';
import { COMMIT_RELEASE_SQL } from './postgres-sql-commit-release.js';
import { COMPLETE_BATCH_SQL } from './postgres-sql-complete-batch.js';
import { COMPLETION_REASON_SQL } from './postgres-sql-completion-reason.js';
import { CUTOVER_SQL } from './postgres-sql-cutover.js';
import { CUTOVER_CLOCK_SQL } from './postgres-sql-cutover-clock.js';
import { CUTOVER_SKIP_SQL } from './postgres-sql-cutover-skip.js';
import { DISPATCH_SQL } from './postgres-sql-dispatch.js';
import { FENCE_SQL } from './postgres-sql-fence.js';
import { FENCE_GRANTS_SQL } from './postgres-sql-fence-grants.js';
import { GROUP_COMMIT_SQL } from './postgres-sql-group-commit.js';
import { INTENT_NOTIFY_SQL } from './postgres-sql-intent-notify.js';
import { LEASES_SQL } from './postgres-sql-leases.js';
import { LEASE_JOBS_SQL } from './postgres-sql-lease-jobs.js';
import { PLAIN_BATCH_SQL } from './postgres-sql-plain-batch.js';
import { TABLES_SQL } from './postgres-sql-tables.js';

export interface PostgresMigration {
  version: number;
  name: string;
  sql: string;
}

/**
 * In the order each text needs the one before: SQL-language functions are checked against the
 * tables when created, and triggers name their functions.
 */
const BASELINE_SQL = [
  TABLES_SQL,
  // Commits, one at a time, in batches and with a release; abandon.
  COMMIT_SQL,
  // Authority: leases and the fence check for the caller's own transactions.
  LEASES_SQL,
  AUDIT_SQL,
  FENCE_SQL,
  GROUP_COMMIT_SQL,
  // Dispatch: claims and completions.
  DISPATCH_SQL,
  // Policies, cutovers and the jobs ledger.
  CUTOVER_SQL,
  CUTOVER_SKIP_SQL,
  INTENT_NOTIFY_SQL,
  // The locks-first wrappers of the functions above that read store time.
  AFTER_LOCKS_SQL,
  LEASE_JOBS_SQL,
  COMPLETION_REASON_SQL,
  CUTOVER_CLOCK_SQL,
  FENCE_GRANTS_SQL,
  PLAIN_BATCH_SQL,
  COMMIT_RELEASE_SQL,
  COMPLETE_BATCH_SQL,
].join('');

export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  { version: 1, name: 'baseline', sql: BASELINE_SQL },
];

/** Schema names are interpolated into SQL, so only plain lowercase identifiers are accepted. */
export const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

export function renderMigration(sql: string, schema: string): string {
  return sql.replaceAll('@schema@', schema);
}
