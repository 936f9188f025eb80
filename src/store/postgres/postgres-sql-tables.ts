/**
 * Migration 1: the tables. `@schema@` is replaced by the store's schema name when the migration
 * is applied. Key columns use the "C" collation so names sort by code unit, as in every other
 * adapter, whatever the database's default collation is.
 */
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
  PRIMARY KEY (tenant, scope, name)
) WITH (fillfactor = 80);

-- Every revision at which a record was deleted: a writer that read the absence a deletion left
-- read no lifetime, so its stale write is stale_revision, not incarnation_changed.
CREATE TABLE @schema@.record_deletions (
  tenant text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  name text COLLATE "C" NOT NULL,
  revision bigint NOT NULL,
  PRIMARY KEY (tenant, scope, name, revision)
);

CREATE TABLE @schema@.operations (
  tenant text COLLATE "C" NOT NULL,
  operation_id text COLLATE "C" NOT NULL,
  request_fingerprint text NOT NULL,
  outcome jsonb NOT NULL,
  created_at bigint NOT NULL,
  PRIMARY KEY (tenant, operation_id)
);

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
  PRIMARY KEY (tenant, effect_key)
);
CREATE INDEX intents_by_scope ON @schema@.intents (tenant, scope, status);
CREATE INDEX intents_due ON @schema@.intents (tenant, status, next_attempt_at);

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
  effect_key text
);
-- Reads by scope use this index; reads by tenant walk the primary key in seq order. One index
-- fewer to maintain on every commit.
CREATE INDEX audit_by_scope ON @schema@.audit (tenant, scope, seq);

CREATE TABLE @schema@.tokens (
  id text PRIMARY KEY,
  tenant text NOT NULL,
  role text NOT NULL,
  label text,
  hash text NOT NULL UNIQUE,
  created_at bigint NOT NULL
);

-- Store time in ms by the database clock: the clock that judges leases when no test clock is
-- injected.
CREATE FUNCTION @schema@.db_now() RETURNS bigint
LANGUAGE sql VOLATILE AS $$ SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint $$;
`;
