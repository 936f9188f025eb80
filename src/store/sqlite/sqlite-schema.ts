/**
 * The SQLite schema a new file gets (version 1 of sqlite-migrations.ts), grouped by concern.
 * Columns and indexes are in the order the pre-release steps created them (SQLite lists a table's
 * indexes, and the planner weighs equal ones, in that order). Comments stay outside
 * the CREATE statements: SQLite keeps a statement's text as written in `sqlite_master`.
 */

/** Leases, fences and whom each fence was granted to; policies, cutovers and the jobs ledger. */
const AUTHORITY = `
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

  -- One row per grant (an acquire of a new fence, a takeover, a cutover step), put by the plans
  -- (core/plan/plan-leases.ts) and kept also when the scope is deleted, so a late commit with an
  -- old fence is still attributed (core/fence-holder.ts). Retention does not prune them.
  CREATE TABLE fence_grants (
    tenant TEXT NOT NULL,
    scope TEXT NOT NULL,
    fence INTEGER NOT NULL,
    holder TEXT NOT NULL,
    PRIMARY KEY (tenant, scope, fence)
  ) WITHOUT ROWID;

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

  -- A scope gets its fence here when a step moves it; a scope found deleted gets it too, marked
  -- skipped, so it is no longer pending.
  CREATE TABLE cutover_scopes (
    tenant TEXT NOT NULL,
    cutover_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    fence INTEGER,
    skipped INTEGER NOT NULL DEFAULT 0,
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
`;

/** Records, the revisions at which they were deleted, and stored outcomes. */
const RECORDS = `
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

  CREATE TABLE record_deletions (
    tenant TEXT NOT NULL,
    scope TEXT NOT NULL,
    name TEXT NOT NULL,
    revision INTEGER NOT NULL,
    PRIMARY KEY (tenant, scope, name, revision)
  ) WITHOUT ROWID;

  -- Outcomes in compact rows (sqlite-operation-row.ts).
  CREATE TABLE operations (
    tenant TEXT NOT NULL,
    operation_id TEXT NOT NULL,
    request_fingerprint TEXT NOT NULL,
    outcome TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, operation_id)
  ) WITHOUT ROWID;
  -- A retention step finds the oldest outcomes without walking the table. Store time only grows,
  -- so entries append at the right edge: a commit batch dirties one more page, not one per commit.
  CREATE INDEX operations_by_age ON operations (created_at);
`;

/** The intents outbox. */
const INTENTS = `
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
    unknown_outcomes INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, effect_key)
  ) WITHOUT ROWID;
  CREATE INDEX intents_by_status ON intents (tenant, status, effect_key);
  -- A claim takes the first due intents by due time, then effect key: in this order the index
  -- hands them over without reading and sorting every pending intent of the tenant.
  CREATE INDEX intents_due_order
    ON intents (tenant, status, COALESCE(next_attempt_at, created_at), effect_key);
  -- Claims and completions change an intent's status, never its scope: keyed by effect key, a
  -- scope's entry stays put when they run (one B-tree page fewer in their WAL frames).
  CREATE INDEX intents_by_scope_key ON intents (tenant, scope, effect_key);
`;

/** The audit log, how far retention pruned it, and the checkpoint verified through. */
const AUDIT = `
  -- Record changes in compact rows (sqlite-audit-row.ts); reads are a commit's dependency reads.
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
    effect_key TEXT,
    reads TEXT
  );
  -- By tenant only: one tenant's entries (the audit endpoint, verify) without walking every
  -- tenant's. A scope index would put one more B-tree page in every commit's WAL frames (about a
  -- quarter of its cost); reading one scope's entries scans from afterSeq instead.
  CREATE INDEX audit_by_tenant ON audit (tenant, seq);

  -- pruned_hash: the hash of the last pruned entry, which a checkpoint ending there must match.
  CREATE TABLE audit_retention (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    pruned_through INTEGER NOT NULL,
    pruned_hash TEXT
  );

  CREATE TABLE verified_checkpoint (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    last_seq INTEGER NOT NULL,
    checkpoint TEXT NOT NULL
  );
`;

/** Tokens, the mark that the first-run tokens were made, and the store's id. */
const STORE = `
  -- may_take_over: a JSON list of scope prefixes a worker token may take over; null for none.
  CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    role TEXT NOT NULL,
    label TEXT,
    hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    may_take_over TEXT
  );

  CREATE TABLE first_run_tokens (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    made_at INTEGER NOT NULL
  );

  -- Made once at random; verify checkpoints name it.
  CREATE TABLE store_identity (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    store_id TEXT NOT NULL
  );
  INSERT INTO store_identity (id, store_id) VALUES (1, lower(hex(randomblob(16))));
`;

export const SQLITE_BASELINE_SQL = [AUTHORITY, RECORDS, INTENTS, AUDIT, STORE].join('');

/**
 * Version 2: the worker token a scope's current grant is bound to (core/grant-token.ts), and the
 * token an audit entry's request was made with. Rows written before have neither (null).
 */
export const SQLITE_GRANT_TOKENS_SQL = `
  ALTER TABLE scopes ADD COLUMN grant_token_id TEXT;
  ALTER TABLE audit ADD COLUMN token_id TEXT;
`;

/**
 * The records of a scope in revision order, so a page in that order is a range of this index
 * starting at its cursor (store/record-page-sql.ts) instead of a sort of the scope. Every record
 * write updates it too; the name is part of the key as the tie-break of the listing's order.
 */
export const SQLITE_RECORDS_BY_REVISION_SQL = `
  CREATE INDEX records_by_revision ON records (tenant, scope, revision, name);
`;

/**
 * Version 4: rollouts (core/rollout-rows.ts). Their state, the tenant's active rollouts and what a
 * rollout did to each scope, as JSON documents by key.
 */
export const SQLITE_ROLLOUTS_SQL = `
  CREATE TABLE rollout_rows (
    tenant TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (tenant, key)
  ) WITHOUT ROWID;
`;
