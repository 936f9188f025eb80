/**
 * The PostgreSQL schema as data: an ordered list of SQL texts, applied at open in one transaction
 * under an advisory lock (so processes opening the store together apply each migration once) and
 * recorded in `<schema>.migrations`. Every object lives in the store's own schema; `@schema@` in
 * the texts is replaced by its name. A migration is never edited once released: changes are new
 * entries (CREATE OR REPLACE FUNCTION for function bodies).
 */
import { AFTER_LOCKS_SQL } from './postgres-sql-after-locks.js';
import { AUDIT_SQL } from './postgres-sql-audit.js';
import { COMMIT_SQL } from './postgres-sql-commit.js';
import { COMMIT_READS_SQL } from './postgres-sql-commit-reads.js';
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
import {
  POSTGRES_RETENTION_SQL,
  POSTGRES_STORE_ID_AND_OUTCOMES_BY_AGE_SQL,
} from './postgres-retention.js';
import { TABLES_SQL } from './postgres-sql-tables.js';
import { POSTGRES_STORE_MARKS_SQL } from './postgres-store-marks.js';

export interface PostgresMigration {
  version: number;
  name: string;
  sql: string;
}

export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  { version: 1, name: 'authority, records, operations, intents, audit, tokens', sql: TABLES_SQL },
  { version: 2, name: 'commit function', sql: COMMIT_SQL },
  { version: 3, name: 'lease functions', sql: LEASES_SQL },
  { version: 4, name: 'audit horizon', sql: AUDIT_SQL },
  { version: 5, name: 'assert_fence for caller-owned tables', sql: FENCE_SQL },
  { version: 6, name: 'group commit function', sql: GROUP_COMMIT_SQL },
  { version: 7, name: 'intent claims and completions', sql: DISPATCH_SQL },
  { version: 8, name: 'policies, cutovers, jobs ledger', sql: CUTOVER_SQL },
  // Every commit appends an audit row; a per-scope index made each append maintain one more
  // B-tree. Reading one scope's entries scans from afterSeq instead (an operator's query).
  {
    version: 9,
    name: 'audit without a scope index',
    sql: 'DROP INDEX IF EXISTS @schema@.audit_by_scope;',
  },
  { version: 10, name: 'cutovers skip deleted scopes', sql: CUTOVER_SKIP_SQL },
  // Without it, one tenant's audit page (the audit endpoint, verify) walked the primary key past
  // every other tenant's rows. Keys append at the right edge of each tenant's range.
  {
    version: 11,
    name: 'audit by tenant',
    sql: 'CREATE INDEX IF NOT EXISTS audit_by_tenant ON @schema@.audit (tenant, seq);',
  },
  { version: 12, name: 'intent notifications', sql: INTENT_NOTIFY_SQL },
  { version: 13, name: "audit of a commit's dependency reads", sql: COMMIT_READS_SQL },
  {
    version: 14,
    name: 'store time read after the scope locks; abandoned operations',
    sql: AFTER_LOCKS_SQL,
  },
  { version: 15, name: 'audit retention mark', sql: POSTGRES_RETENTION_SQL },
  { version: 16, name: 'job events of lease operations', sql: LEASE_JOBS_SQL },
  {
    version: 17,
    name: 'completion reasons; store time after the locks of completions and cutover steps; fence grants',
    sql: COMPLETION_REASON_SQL + CUTOVER_CLOCK_SQL + FENCE_GRANTS_SQL,
  },
  { version: 18, name: 'group commit of plain commits in one pass', sql: PLAIN_BATCH_SQL },
  { version: 19, name: 'a commit that releases its lease', sql: COMMIT_RELEASE_SQL },
  { version: 20, name: 'intent completions in batches', sql: COMPLETE_BATCH_SQL },
  // A JSON list of scope prefixes a worker token may take over; null for none (every earlier token).
  {
    version: 21,
    name: 'take-over right of worker tokens',
    sql: 'ALTER TABLE @schema@.tokens ADD COLUMN IF NOT EXISTS may_take_over text;',
  },
  {
    version: 22,
    name: 'store id, stored outcomes by age, hash of the last pruned audit entry',
    sql: POSTGRES_STORE_ID_AND_OUTCOMES_BY_AGE_SQL,
  },
  {
    version: 23,
    name: 'verified checkpoint and first-run tokens mark',
    sql: POSTGRES_STORE_MARKS_SQL,
  },
];

/** Schema names are interpolated into SQL, so only plain lowercase identifiers are accepted. */
export const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

export function renderMigration(sql: string, schema: string): string {
  return sql.replaceAll('@schema@', schema);
}
