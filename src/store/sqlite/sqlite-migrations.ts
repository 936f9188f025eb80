/**
 * The SQLite schema as data: an ordered list applied at open inside one write transaction and
 * recorded in `fencegate_migrations`, so several processes opening one file agree on it.
 */
import { SQLITE_FENCE_GRANTS_MIGRATION } from './sqlite-fence-grants.js';
import {
  SQLITE_RETENTION_MIGRATION,
  SQLITE_STORE_ID_AND_OUTCOMES_BY_AGE_SQL,
} from './sqlite-retention.js';
import { SQLITE_STORE_MARKS_MIGRATION } from './sqlite-store-marks.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'authority, records, operations, intents, audit, tokens',
    sql: `
      CREATE TABLE scopes (
        tenant TEXT NOT NULL,
        scope TEXT NOT NULL,
        fence INTEGER NOT NULL,
        holder TEXT,
        lease_expires_at INTEGER,
        policy_version TEXT,
        status TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (tenant, scope)
      ) WITHOUT ROWID;

      CREATE TABLE records (
        tenant TEXT NOT NULL,
        scope TEXT NOT NULL,
        name TEXT NOT NULL,
        present INTEGER NOT NULL,
        value TEXT,
        revision INTEGER NOT NULL,
        incarnation INTEGER NOT NULL,
        fingerprint TEXT,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (tenant, scope, name)
      ) WITHOUT ROWID;

      CREATE TABLE operations (
        tenant TEXT NOT NULL,
        operation_id TEXT NOT NULL,
        request_fingerprint TEXT NOT NULL,
        outcome TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (tenant, operation_id)
      ) WITHOUT ROWID;

      CREATE TABLE intents (
        tenant TEXT NOT NULL,
        effect_key TEXT NOT NULL,
        scope TEXT NOT NULL,
        target TEXT NOT NULL,
        payload TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        fence INTEGER NOT NULL,
        operation_id TEXT NOT NULL,
        claim_fence INTEGER NOT NULL DEFAULT 0,
        claimed_by TEXT,
        claim_expires_at INTEGER,
        next_attempt_at INTEGER,
        provider_ref TEXT,
        last_error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (tenant, effect_key)
      ) WITHOUT ROWID;
      CREATE INDEX intents_by_scope ON intents (tenant, scope, status);
      CREATE INDEX intents_by_status ON intents (tenant, status, effect_key);

      CREATE TABLE audit (
        seq INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        tenant TEXT NOT NULL,
        scope TEXT,
        kind TEXT NOT NULL,
        outcome TEXT NOT NULL,
        reason TEXT,
        task_id TEXT,
        operation_id TEXT,
        holder TEXT,
        policy_version TEXT,
        fence INTEGER,
        current_fence INTEGER,
        lease_expires_at INTEGER,
        records TEXT,
        effect_key TEXT
      );
      CREATE INDEX audit_by_scope ON audit (tenant, scope, seq);

      CREATE TABLE tokens (
        id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        role TEXT NOT NULL,
        label TEXT,
        hash TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'dispatch claims, policies, cutovers, jobs',
    sql: `
      ALTER TABLE intents ADD COLUMN unknown_outcomes INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX intents_due ON intents (tenant, status, next_attempt_at);

      CREATE TABLE policies (
        tenant TEXT NOT NULL,
        version TEXT NOT NULL,
        digest TEXT,
        description TEXT,
        registered_by TEXT,
        registered_at INTEGER NOT NULL,
        PRIMARY KEY (tenant, version)
      ) WITHOUT ROWID;

      CREATE TABLE cutovers (
        tenant TEXT NOT NULL,
        cutover_id TEXT NOT NULL,
        request_fingerprint TEXT NOT NULL,
        to_policy TEXT NOT NULL,
        holder TEXT NOT NULL,
        lease_ttl_ms INTEGER,
        reason TEXT,
        status TEXT NOT NULL,
        start_seq INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        completed_at INTEGER,
        PRIMARY KEY (tenant, cutover_id)
      ) WITHOUT ROWID;

      CREATE TABLE cutover_scopes (
        tenant TEXT NOT NULL,
        cutover_id TEXT NOT NULL,
        scope TEXT NOT NULL,
        fence INTEGER,
        PRIMARY KEY (tenant, cutover_id, scope)
      ) WITHOUT ROWID;

      CREATE TABLE jobs (
        tenant TEXT NOT NULL,
        job_id TEXT NOT NULL,
        scope TEXT NOT NULL,
        policy_version TEXT NOT NULL,
        fence INTEGER NOT NULL,
        state TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        at INTEGER NOT NULL,
        PRIMARY KEY (tenant, job_id)
      ) WITHOUT ROWID;
      CREATE INDEX jobs_by_scope ON jobs (tenant, scope);
    `,
  },
  {
    version: 3,
    name: 'record deletions',
    sql: `
      CREATE TABLE record_deletions (
        tenant TEXT NOT NULL,
        scope TEXT NOT NULL,
        name TEXT NOT NULL,
        revision INTEGER NOT NULL,
        PRIMARY KEY (tenant, scope, name, revision)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 4,
    name: 'audit without a scope index',
    // Every commit appends an audit row; a (tenant, scope, seq) index put one more B-tree page
    // in every commit's WAL frames (about a quarter of the commit's cost). Reading one scope's
    // entries scans from afterSeq instead, which operators can afford and commits cannot.
    sql: `DROP INDEX IF EXISTS audit_by_scope;`,
  },
  {
    version: 5,
    name: 'cutover scopes skipped as deleted',
    // A skipped scope gets its (deleted) fence in cutover_scopes so it is no longer pending.
    sql: `ALTER TABLE cutover_scopes ADD COLUMN skipped INTEGER NOT NULL DEFAULT 0;`,
  },
  {
    version: 6,
    name: 'audit by tenant',
    // Without it, reading one tenant's entries (the audit endpoint, verify) walked every tenant's
    // rows. Each entry's key is appended at the right edge of its tenant's range, so a group
    // commit batch dirties one more page, not one per commit (BENCHMARKS.md has the cost).
    sql: `CREATE INDEX IF NOT EXISTS audit_by_tenant ON audit (tenant, seq);`,
  },
  {
    version: 7,
    name: "audit of a commit's dependency reads",
    sql: `ALTER TABLE audit ADD COLUMN reads TEXT;`,
  },
  { version: 8, name: 'audit retention mark', sql: SQLITE_RETENTION_MIGRATION },
  { version: 9, name: 'fence grants', sql: SQLITE_FENCE_GRANTS_MIGRATION },
  {
    version: 10,
    name: 'fence grants written by the plans',
    // Every write now applies a core plan, and the plans put each grant's row themselves
    // (core/plan/plan-leases.ts): the triggers would be the same rule a second time.
    sql: `DROP TRIGGER IF EXISTS fence_granted_on_insert;
      DROP TRIGGER IF EXISTS fence_granted_on_update;`,
  },
  {
    version: 11,
    name: 'due intents in claim order',
    // A claim takes the first due intents by due time, then effect key: in this order the index
    // hands them over without reading (and sorting) every pending intent of the tenant.
    sql: `DROP INDEX IF EXISTS intents_due;
      CREATE INDEX intents_due_order
        ON intents (tenant, status, COALESCE(next_attempt_at, created_at), effect_key);`,
  },
  {
    version: 12,
    name: 'compact stored outcomes',
    // No table changes: stored outcomes are now written in compact rows (sqlite-operation-row.ts),
    // which earlier versions would misread. The version marks the file so they refuse it.
    sql: `SELECT 1;`,
  },
  {
    version: 13,
    name: 'intents of a scope by effect key',
    // Claims and completions change an intent's status, never its scope: with the status in this
    // index every one of them moved the intent's entry (one more B-tree page in the transaction's
    // WAL frames). By effect key the entry stays put, and a scope's intents list in page order.
    sql: `DROP INDEX IF EXISTS intents_by_scope;
      CREATE INDEX intents_by_scope_key ON intents (tenant, scope, effect_key);`,
  },
  {
    version: 14,
    name: 'compact stored refusals and audit record changes',
    // No table changes: a refusal's error and an audit entry's record changes are now stored
    // without their field names (sqlite-operation-row.ts, sqlite-audit-row.ts), which earlier
    // versions would misread. The version marks the file so they refuse it.
    sql: `SELECT 1;`,
  },
  {
    version: 15,
    name: 'take-over right of worker tokens',
    // A JSON list of scope prefixes the token may take over; null for none (every earlier token).
    sql: `ALTER TABLE tokens ADD COLUMN may_take_over TEXT;`,
  },
  {
    version: 16,
    name: 'store id, stored outcomes by age, hash of the last pruned audit entry',
    sql: SQLITE_STORE_ID_AND_OUTCOMES_BY_AGE_SQL,
  },
  {
    version: 17,
    name: 'verified checkpoint and first-run tokens mark',
    sql: SQLITE_STORE_MARKS_MIGRATION,
  },
];
