/**
 * The tables of the baseline schema, with their indexes, and store time. `@schema@` is replaced
 * by the store's schema name when the schema is applied. Key columns use the "C" collation so
 * names sort by code unit, as in every other adapter, whatever the database's default collation is.
 */
import { OPEN_INTENT_SQL_LIST } from '../open-intent-sql.js';

export const TABLES_SQL = `
CREATE TABLE @schema@.scopes (
  tenant text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  fence bigint NOT NULL,
  holder text,
  lease_expires_at bigint,
  policy_version text,
  status text NOT NULL,
  updated_at bigint NOT NULL,
  -- The id of the transaction that wrote the row last (postgres-sql-apply.ts).
  row_version bigint NOT NULL,
  PRIMARY KEY (tenant, scope)
) WITH (fillfactor = 80);

CREATE TABLE @schema@.records (
  tenant text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  name text COLLATE "C" NOT NULL,
  live boolean NOT NULL,
  -- The JSON text as written: kept as text (not jsonb) so a value reads back exactly, key order
  -- and \\u0000 escapes included.
  value text,
  revision bigint NOT NULL,
  incarnation bigint NOT NULL,
  fingerprint text,
  updated_at bigint NOT NULL,
  -- The id of the transaction that wrote the row last (postgres-sql-apply.ts).
  row_version bigint NOT NULL,
  PRIMARY KEY (tenant, scope, name)
) WITH (fillfactor = 80);

-- Every revision at which a record was deleted: a writer that read the absence a deletion left
-- read no lifetime, so its stale write is stale_revision, not incarnation_changed.
CREATE TABLE @schema@.record_deletions (
  tenant text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  name text COLLATE "C" NOT NULL,
  revision bigint NOT NULL,
  -- The id of the transaction that wrote the row last (postgres-sql-apply.ts).
  row_version bigint NOT NULL,
  PRIMARY KEY (tenant, scope, name, revision)
);

CREATE TABLE @schema@.operations (
  tenant text COLLATE "C" NOT NULL,
  operation_id text COLLATE "C" NOT NULL,
  request_fingerprint text NOT NULL,
  outcome jsonb NOT NULL,
  created_at bigint NOT NULL,
  -- The id of the transaction that wrote the row last (postgres-sql-apply.ts).
  row_version bigint NOT NULL,
  PRIMARY KEY (tenant, operation_id)
);
-- Retention deletes the oldest outcomes through it.
CREATE INDEX operations_by_age ON @schema@.operations (created_at);

CREATE TABLE @schema@.intents (
  tenant text COLLATE "C" NOT NULL,
  effect_key text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  target text NOT NULL,
  payload text NOT NULL,
  status text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  fence bigint NOT NULL,
  operation_id text NOT NULL,
  claim_fence bigint NOT NULL DEFAULT 0,
  claimed_by text,
  claim_expires_at bigint,
  next_attempt_at bigint,
  provider_ref text,
  last_error text,
  unknown_outcomes integer NOT NULL DEFAULT 0,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  -- The id of the transaction that wrote the row last (postgres-sql-apply.ts).
  row_version bigint NOT NULL,
  PRIMARY KEY (tenant, effect_key)
);
CREATE INDEX intents_by_scope ON @schema@.intents (tenant, scope, status);
CREATE INDEX intents_due ON @schema@.intents (tenant, status, next_attempt_at);
CREATE INDEX intents_claimable ON @schema@.intents
  (tenant, (coalesce(next_attempt_at, created_at)), effect_key)
  WHERE status IN ${OPEN_INTENT_SQL_LIST};

CREATE TABLE @schema@.audit (
  seq bigserial PRIMARY KEY,
  at bigint NOT NULL,
  tenant text COLLATE "C" NOT NULL,
  scope text COLLATE "C",
  kind text NOT NULL,
  outcome text NOT NULL,
  reason text,
  task_id text,
  operation_id text,
  holder text,
  policy_version text,
  fence bigint,
  current_fence bigint,
  lease_expires_at bigint,
  records jsonb,
  effect_key text,
  -- A commit's dependency reads, [{scope, name, expected, actual}]; null without reads.
  reads jsonb
);
-- One tenant's page (the audit endpoint, verify) without walking the primary key past every
-- other tenant's rows; keys append at the right edge of each tenant's range. No index by scope:
-- every commit appends an entry, and reading one scope's entries scans from afterSeq instead.
CREATE INDEX audit_by_tenant ON @schema@.audit (tenant, seq);

CREATE TABLE @schema@.tokens (
  id text PRIMARY KEY,
  tenant text NOT NULL,
  role text NOT NULL,
  label text,
  hash text NOT NULL UNIQUE,
  created_at bigint NOT NULL,
  -- A JSON list of scope prefixes a worker token may take over; null for none.
  may_take_over text
);

-- Whom each fence was granted to (core/fence-holder.ts).
CREATE TABLE @schema@.fence_grants (
  tenant text NOT NULL,
  scope text NOT NULL,
  fence bigint NOT NULL,
  holder text NOT NULL,
  -- The id of the transaction that wrote the row last (postgres-sql-apply.ts).
  row_version bigint NOT NULL,
  PRIMARY KEY (tenant, scope, fence)
);

CREATE TABLE @schema@.policies (
  tenant text COLLATE "C" NOT NULL,
  version text COLLATE "C" NOT NULL,
  digest text,
  description text,
  registered_by text,
  registered_at bigint NOT NULL,
  -- The id of the transaction that wrote the row last (postgres-sql-apply.ts).
  row_version bigint NOT NULL,
  PRIMARY KEY (tenant, version)
);

CREATE TABLE @schema@.cutovers (
  tenant text COLLATE "C" NOT NULL,
  cutover_id text COLLATE "C" NOT NULL,
  request_fingerprint text NOT NULL,
  to_policy text NOT NULL,
  holder text NOT NULL,
  lease_ttl_ms bigint,
  reason text,
  status text NOT NULL,
  start_seq bigint NOT NULL,
  started_at bigint NOT NULL,
  completed_at bigint,
  -- The id of the transaction that wrote the row last (postgres-sql-apply.ts).
  row_version bigint NOT NULL,
  PRIMARY KEY (tenant, cutover_id)
);

CREATE TABLE @schema@.cutover_scopes (
  tenant text COLLATE "C" NOT NULL,
  cutover_id text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  -- The fence the cutover gave the scope; null until the scope is moved.
  fence bigint,
  -- A scope found deleted gets its fence too, marked skipped, so it is no longer pending.
  skipped boolean NOT NULL DEFAULT false,
  -- The id of the transaction that wrote the row last (postgres-sql-apply.ts).
  row_version bigint NOT NULL,
  PRIMARY KEY (tenant, cutover_id, scope)
);
-- The scopes still to move, so each chunk finds its scopes without walking the moved ones.
CREATE INDEX cutover_scopes_pending ON @schema@.cutover_scopes (tenant, cutover_id, scope)
  WHERE fence IS NULL;

CREATE TABLE @schema@.jobs (
  tenant text COLLATE "C" NOT NULL,
  job_id text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  policy_version text NOT NULL,
  fence bigint NOT NULL,
  state text NOT NULL,
  attempt integer NOT NULL,
  at bigint NOT NULL,
  -- The id of the transaction that wrote the row last (postgres-sql-apply.ts).
  row_version bigint NOT NULL,
  PRIMARY KEY (tenant, job_id)
);
CREATE INDEX jobs_by_scope ON @schema@.jobs (tenant, scope);

-- How far retention pruned the audit log, and the hash of the last pruned entry, which a verify
-- checkpoint ending there must match.
CREATE TABLE @schema@.audit_retention (
  id integer PRIMARY KEY CHECK (id = 1),
  pruned_through bigint NOT NULL,
  pruned_hash text
);

-- The checkpoint the log was verified through (postgres-store-marks.ts).
CREATE TABLE @schema@.verified_checkpoint (
  id integer PRIMARY KEY CHECK (id = 1),
  last_seq bigint NOT NULL,
  checkpoint text NOT NULL
);

-- The mark that the store's first-run tokens were made (once per store, ever).
CREATE TABLE @schema@.first_run_tokens (
  id integer PRIMARY KEY CHECK (id = 1),
  made_at bigint NOT NULL
);

-- The store's id, made once at random; verify checkpoints name it.
CREATE TABLE @schema@.store_identity (
  id integer PRIMARY KEY CHECK (id = 1),
  store_id text NOT NULL
);
INSERT INTO @schema@.store_identity (id, store_id) VALUES (1, replace(gen_random_uuid()::text, '-', ''));

-- Store time in ms by the database clock: the clock that judges leases when no test clock is
-- injected.
CREATE FUNCTION @schema@.db_now() RETURNS bigint
LANGUAGE sql VOLATILE AS $$ SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint $$;
`;

/**
 * Version 3: the records of a scope in revision order, so a page in that order is a range of this
 * index starting at its cursor (store/record-page-sql.ts) instead of a sort of the scope; the
 * primary key serves name order the same way. Every record write updates it too.
 */
export const RECORDS_BY_REVISION_SQL = `
CREATE INDEX records_by_revision ON @schema@.records (tenant, scope, revision, name);
`;

/**
 * Version 5: a scope's intents by effect key, so a cancel's page is a range of this index starting
 * at its cursor (core/cancel-intents-page.ts) instead of a sort of the scope's every intent.
 * SQLite files have had the same index (intents_by_scope_key) since their baseline.
 */
export const INTENTS_BY_SCOPE_KEY_SQL = `
CREATE INDEX intents_by_scope_key ON @schema@.intents (tenant, scope, effect_key);
`;

/**
 * Version 7: a build before version 5 left a tenant's active rollouts as an empty document once
 * its last rollout finished; since version 5 the last one to finish deletes it. The empty ones
 * left are deleted here, so such a tenant's new-scope acquires read no row and lock none.
 */
export const EMPTY_ACTIVE_ROLLOUTS_SQL = `
DELETE FROM @schema@.rollout_rows
 WHERE key = 'active' AND value = '{"kind": "active", "rollouts": []}'::jsonb;
`;
