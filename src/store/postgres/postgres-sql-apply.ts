/**
 * The one step that writes: `apply` takes the transitions core planned in the process and applies
 * those whose rows still hold, in one transaction. Nothing here decides what core decides: it
 * locks, compares versions, writes rows and appends audit entries.
 *
 * 1. Locks. Rows that exist are locked FOR NO KEY UPDATE, table by table in a fixed order and by
 *    key within a table; keys read as absent, and the ranges a plan listed or joins, are locked
 *    through transaction-level advisory locks in hash order (shared for a joiner, exclusive for a
 *    plan that listed the range). One global order, so these locks never deadlock each other.
 * 2. Compares, under the locks. Each row's `row_version` (the transaction id that last wrote it,
 *    0 when absent) against the one the plan read; each listed range's names against the hash of
 *    the names the plan read; and store time: the plan ran at an estimate of the database clock,
 *    so every time a locked row holds (a lease's or a claim's expiry, a retry's due time) must be
 *    on the same side of the database clock now as of the estimate, and the estimate within
 *    `p_skew_ms` of it. Without an injected clock this is what makes the database clock judge
 *    every lease.
 * 3. Writes, for the transitions that held: set-based upserts per table, then the audit entries in
 *    transition order under the shared audit lock (postgres-sql-audit.ts).
 *
 * The answer names the transitions that did not hold and carries the current rows of every key
 * they locked, so the caller plans them again without another read.
 */
const OPEN = `('pending', 'unknown', 'claimed')`;

export const APPLY_SQL = `
CREATE FUNCTION @schema@.range_names(p_tenant text, r jsonb) RETURNS text[]
LANGUAGE plpgsql STABLE AS $fn$
BEGIN
  CASE r->>'type'
  WHEN 'scopeRecords' THEN
    RETURN ARRAY(SELECT x.name FROM @schema@.records x
      WHERE x.tenant = p_tenant AND x.scope = r->>'scope' ORDER BY x.name);
  WHEN 'scopeIntents' THEN
    RETURN ARRAY(SELECT x.effect_key FROM @schema@.intents x
      WHERE x.tenant = p_tenant AND x.scope = r->>'scope' ORDER BY x.effect_key);
  WHEN 'openIntents' THEN
    IF jsonb_typeof(r->'due') = 'object' THEN
      RETURN ARRAY(SELECT x.effect_key FROM @schema@.intents x
        WHERE x.tenant = p_tenant AND x.status IN ${OPEN}
          AND (x.next_attempt_at IS NULL OR x.next_attempt_at <= (r->'due'->>'at')::bigint)
          AND (jsonb_typeof(r->'due'->'targets') <> 'array'
               OR x.target IN (SELECT jsonb_array_elements_text(r->'due'->'targets')))
        ORDER BY coalesce(x.next_attempt_at, x.created_at), x.effect_key
        LIMIT (r->'due'->>'limit')::integer);
    END IF;
    RETURN ARRAY(SELECT x.effect_key FROM @schema@.intents x
      WHERE x.tenant = p_tenant AND x.status IN ${OPEN} ORDER BY x.effect_key);
  WHEN 'scopes' THEN
    RETURN ARRAY(SELECT x.scope FROM @schema@.scopes x
      WHERE x.tenant = p_tenant AND x.scope >= r->>'prefix' AND starts_with(x.scope, r->>'prefix')
      ORDER BY x.scope);
  WHEN 'cutoverSteps' THEN
    RETURN ARRAY(SELECT x.scope FROM @schema@.cutover_scopes x
      WHERE x.tenant = p_tenant AND x.cutover_id = r->>'cutoverId' AND x.fence IS NOT NULL
      ORDER BY x.scope);
  END CASE;
  RAISE EXCEPTION 'unknown range type %', r->>'type';
END
$fn$;

CREATE FUNCTION @schema@.range_hash(p_names text[]) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT md5(to_json(p_names)::text) $$;

-- The rows of the given keys ({type: [key columns…]}), as stored, with their row_version.
CREATE FUNCTION @schema@.load_rows(p_tenant text, p_keys jsonb) RETURNS jsonb
LANGUAGE sql STABLE AS $fn$
SELECT jsonb_build_object(
  'scope', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM @schema@.scopes x
    JOIN jsonb_to_recordset(coalesce(p_keys->'scope', '[]')) k(scope text)
      ON x.tenant = p_tenant AND x.scope = k.scope),
  'fenceGrant', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM @schema@.fence_grants x
    JOIN jsonb_to_recordset(coalesce(p_keys->'fenceGrant', '[]')) k(scope text, fence bigint)
      ON x.tenant = p_tenant AND x.scope = k.scope AND x.fence = k.fence),
  'record', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM @schema@.records x
    JOIN jsonb_to_recordset(coalesce(p_keys->'record', '[]')) k(scope text, name text)
      ON x.tenant = p_tenant AND x.scope = k.scope AND x.name = k.name),
  'deletion', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM @schema@.record_deletions x
    JOIN jsonb_to_recordset(coalesce(p_keys->'deletion', '[]')) k(scope text, name text, revision bigint)
      ON x.tenant = p_tenant AND x.scope = k.scope AND x.name = k.name AND x.revision = k.revision),
  'operation', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM @schema@.operations x
    JOIN jsonb_to_recordset(coalesce(p_keys->'operation', '[]')) k(operation_id text)
      ON x.tenant = p_tenant AND x.operation_id = k.operation_id),
  'intent', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM @schema@.intents x
    JOIN jsonb_to_recordset(coalesce(p_keys->'intent', '[]')) k(effect_key text)
      ON x.tenant = p_tenant AND x.effect_key = k.effect_key),
  'policy', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM @schema@.policies x
    JOIN jsonb_to_recordset(coalesce(p_keys->'policy', '[]')) k(version text)
      ON x.tenant = p_tenant AND x.version = k.version),
  'cutover', (SELECT coalesce(jsonb_agg(to_jsonb(x) || jsonb_build_object('scopes',
      (SELECT coalesce(jsonb_agg(s.scope ORDER BY s.scope), '[]') FROM @schema@.cutover_scopes s
        WHERE s.tenant = p_tenant AND s.cutover_id = x.cutover_id))), '[]')
    FROM @schema@.cutovers x
    JOIN jsonb_to_recordset(coalesce(p_keys->'cutover', '[]')) k(cutover_id text)
      ON x.tenant = p_tenant AND x.cutover_id = k.cutover_id),
  'cutoverStep', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM @schema@.cutover_scopes x
    JOIN jsonb_to_recordset(coalesce(p_keys->'cutoverStep', '[]')) k(cutover_id text, scope text)
      ON x.tenant = p_tenant AND x.cutover_id = k.cutover_id AND x.scope = k.scope),
  'job', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM @schema@.jobs x
    JOIN jsonb_to_recordset(coalesce(p_keys->'job', '[]')) k(job_id text)
      ON x.tenant = p_tenant AND x.job_id = k.job_id)
)
$fn$;

-- Ranges as a plan reads them ([range…]): each range's names and their hash, and the rows named.
CREATE FUNCTION @schema@.load_ranges(p_tenant text, p_ranges jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $fn$
DECLARE
  r jsonb;
  v_names text[];
  v_ranges jsonb := '[]';
  v_keys jsonb := '{}';
  v_type text;
BEGIN
  FOR r IN SELECT value FROM jsonb_array_elements(p_ranges) LOOP
    v_names := @schema@.range_names(p_tenant, r);
    v_ranges := v_ranges || jsonb_build_array(jsonb_build_object(
      'names', to_jsonb(v_names), 'hash', @schema@.range_hash(v_names)));
    v_type := r->>'type';
    v_keys := v_keys || CASE v_type
      WHEN 'scopeRecords' THEN jsonb_build_object('record', coalesce(v_keys->'record', '[]') ||
        (SELECT coalesce(jsonb_agg(jsonb_build_object('scope', r->>'scope', 'name', n)), '[]')
          FROM unnest(v_names) n))
      WHEN 'scopes' THEN jsonb_build_object('scope', coalesce(v_keys->'scope', '[]') ||
        (SELECT coalesce(jsonb_agg(jsonb_build_object('scope', n)), '[]') FROM unnest(v_names) n))
      WHEN 'cutoverSteps' THEN jsonb_build_object('cutoverStep', coalesce(v_keys->'cutoverStep', '[]') ||
        (SELECT coalesce(jsonb_agg(jsonb_build_object('cutover_id', r->>'cutoverId', 'scope', n)), '[]')
          FROM unnest(v_names) n))
      ELSE jsonb_build_object('intent', coalesce(v_keys->'intent', '[]') ||
        (SELECT coalesce(jsonb_agg(jsonb_build_object('effect_key', n)), '[]') FROM unnest(v_names) n))
    END;
  END LOOP;
  RETURN jsonb_build_object('ranges', v_ranges, 'rows', @schema@.load_rows(p_tenant, v_keys));
END
$fn$;

CREATE FUNCTION @schema@.apply(
  p_tenant text, p_now bigint, p_fixed_clock boolean, p_skew_ms bigint, p jsonb
) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  k jsonb := coalesce(p->'lock', '{}');
  w jsonb := coalesce(p->'put', '{}');
  v_now bigint;
  v_version bigint;
  v_bad int[];
  v_failed int[] := '{}';
BEGIN
  -- 1. Locks: rows that exist, in table order and key order; then absent keys and ranges.
  IF k ? 'scope' THEN
    PERFORM 1 FROM @schema@.scopes x
      JOIN jsonb_to_recordset(k->'scope') j(scope text, v bigint)
        ON x.tenant = p_tenant AND x.scope = j.scope
      WHERE j.v > 0 ORDER BY x.scope FOR NO KEY UPDATE OF x;
  END IF;
  IF k ? 'fenceGrant' THEN
    PERFORM 1 FROM @schema@.fence_grants x
      JOIN jsonb_to_recordset(k->'fenceGrant') j(scope text, fence bigint, v bigint)
        ON x.tenant = p_tenant AND x.scope = j.scope AND x.fence = j.fence
      WHERE j.v > 0 ORDER BY x.scope, x.fence FOR NO KEY UPDATE OF x;
  END IF;
  IF k ? 'record' THEN
    PERFORM 1 FROM @schema@.records x
      JOIN jsonb_to_recordset(k->'record') j(scope text, name text, v bigint)
        ON x.tenant = p_tenant AND x.scope = j.scope AND x.name = j.name
      WHERE j.v > 0 ORDER BY x.scope, x.name FOR NO KEY UPDATE OF x;
  END IF;
  IF k ? 'operation' THEN
    PERFORM 1 FROM @schema@.operations x
      JOIN jsonb_to_recordset(k->'operation') j(operation_id text, v bigint)
        ON x.tenant = p_tenant AND x.operation_id = j.operation_id
      WHERE j.v > 0 ORDER BY x.operation_id FOR NO KEY UPDATE OF x;
  END IF;
  IF k ? 'intent' THEN
    PERFORM 1 FROM @schema@.intents x
      JOIN jsonb_to_recordset(k->'intent') j(effect_key text, v bigint)
        ON x.tenant = p_tenant AND x.effect_key = j.effect_key
      WHERE j.v > 0 ORDER BY x.effect_key FOR NO KEY UPDATE OF x;
  END IF;
  IF k ? 'policy' THEN
    PERFORM 1 FROM @schema@.policies x
      JOIN jsonb_to_recordset(k->'policy') j(version text, v bigint)
        ON x.tenant = p_tenant AND x.version = j.version
      WHERE j.v > 0 ORDER BY x.version FOR NO KEY UPDATE OF x;
  END IF;
  IF k ? 'cutover' THEN
    PERFORM 1 FROM @schema@.cutovers x
      JOIN jsonb_to_recordset(k->'cutover') j(cutover_id text, v bigint)
        ON x.tenant = p_tenant AND x.cutover_id = j.cutover_id
      WHERE j.v > 0 ORDER BY x.cutover_id FOR NO KEY UPDATE OF x;
  END IF;
  IF k ? 'cutoverStep' THEN
    PERFORM 1 FROM @schema@.cutover_scopes x
      JOIN jsonb_to_recordset(k->'cutoverStep') j(cutover_id text, scope text, v bigint)
        ON x.tenant = p_tenant AND x.cutover_id = j.cutover_id AND x.scope = j.scope
      WHERE j.v > 0 ORDER BY x.cutover_id, x.scope FOR NO KEY UPDATE OF x;
  END IF;
  IF k ? 'job' THEN
    PERFORM 1 FROM @schema@.jobs x
      JOIN jsonb_to_recordset(k->'job') j(job_id text, v bigint)
        ON x.tenant = p_tenant AND x.job_id = j.job_id
      WHERE j.v > 0 ORDER BY x.job_id FOR NO KEY UPDATE OF x;
  END IF;
  IF p ? 'advisory' THEN
    PERFORM CASE WHEN a.shared THEN pg_advisory_xact_lock_shared(a.h)
                 ELSE pg_advisory_xact_lock(a.h) END
      FROM (SELECT hashtextextended('@schema@:' || p_tenant || ':' || j.key, 0) AS h,
                   bool_and(j.shared) AS shared
              FROM jsonb_to_recordset(p->'advisory') j(key text, shared boolean)
              GROUP BY 1 ORDER BY 1) a;
  END IF;

  -- 2. Compares, each statement on a snapshot taken after the locks.
  v_now := CASE WHEN p_fixed_clock THEN p_now ELSE @schema@.db_now() END;
  IF NOT p_fixed_clock AND abs(v_now - p_now) > p_skew_ms THEN
    RETURN jsonb_build_object('now', v_now, 'failed', to_jsonb(ARRAY(
      SELECT generate_series(0, (p->>'n')::integer - 1))), 'rows', @schema@.load_rows(p_tenant, k));
  END IF;
  IF k ? 'scope' THEN
    SELECT array_agg(j.t) INTO v_bad FROM jsonb_to_recordset(k->'scope') j(t int, scope text, v bigint)
      LEFT JOIN @schema@.scopes x ON x.tenant = p_tenant AND x.scope = j.scope
      WHERE coalesce(x.row_version, 0) <> j.v
         OR sign(p_now - x.lease_expires_at) <> sign(v_now - x.lease_expires_at);
    v_failed := v_failed || coalesce(v_bad, '{}');
  END IF;
  IF k ? 'fenceGrant' THEN
    SELECT array_agg(j.t) INTO v_bad
      FROM jsonb_to_recordset(k->'fenceGrant') j(t int, scope text, fence bigint, v bigint)
      LEFT JOIN @schema@.fence_grants x
        ON x.tenant = p_tenant AND x.scope = j.scope AND x.fence = j.fence
      WHERE coalesce(x.row_version, 0) <> j.v;
    v_failed := v_failed || coalesce(v_bad, '{}');
  END IF;
  IF k ? 'record' THEN
    SELECT array_agg(j.t) INTO v_bad
      FROM jsonb_to_recordset(k->'record') j(t int, scope text, name text, v bigint)
      LEFT JOIN @schema@.records x ON x.tenant = p_tenant AND x.scope = j.scope AND x.name = j.name
      WHERE coalesce(x.row_version, 0) <> j.v;
    v_failed := v_failed || coalesce(v_bad, '{}');
  END IF;
  IF k ? 'deletion' THEN
    SELECT array_agg(j.t) INTO v_bad
      FROM jsonb_to_recordset(k->'deletion') j(t int, scope text, name text, revision bigint, v bigint)
      LEFT JOIN @schema@.record_deletions x ON x.tenant = p_tenant AND x.scope = j.scope
        AND x.name = j.name AND x.revision = j.revision
      WHERE coalesce(x.row_version, 0) <> j.v;
    v_failed := v_failed || coalesce(v_bad, '{}');
  END IF;
  IF k ? 'operation' THEN
    SELECT array_agg(j.t) INTO v_bad
      FROM jsonb_to_recordset(k->'operation') j(t int, operation_id text, v bigint)
      LEFT JOIN @schema@.operations x ON x.tenant = p_tenant AND x.operation_id = j.operation_id
      WHERE coalesce(x.row_version, 0) <> j.v;
    v_failed := v_failed || coalesce(v_bad, '{}');
  END IF;
  IF k ? 'intent' THEN
    SELECT array_agg(j.t) INTO v_bad
      FROM jsonb_to_recordset(k->'intent') j(t int, effect_key text, v bigint)
      LEFT JOIN @schema@.intents x ON x.tenant = p_tenant AND x.effect_key = j.effect_key
      WHERE coalesce(x.row_version, 0) <> j.v
         OR sign(p_now - x.claim_expires_at) <> sign(v_now - x.claim_expires_at)
         OR sign(p_now - x.next_attempt_at) <> sign(v_now - x.next_attempt_at);
    v_failed := v_failed || coalesce(v_bad, '{}');
  END IF;
  IF k ? 'policy' THEN
    SELECT array_agg(j.t) INTO v_bad FROM jsonb_to_recordset(k->'policy') j(t int, version text, v bigint)
      LEFT JOIN @schema@.policies x ON x.tenant = p_tenant AND x.version = j.version
      WHERE coalesce(x.row_version, 0) <> j.v;
    v_failed := v_failed || coalesce(v_bad, '{}');
  END IF;
  IF k ? 'cutover' THEN
    SELECT array_agg(j.t) INTO v_bad
      FROM jsonb_to_recordset(k->'cutover') j(t int, cutover_id text, v bigint)
      LEFT JOIN @schema@.cutovers x ON x.tenant = p_tenant AND x.cutover_id = j.cutover_id
      WHERE coalesce(x.row_version, 0) <> j.v;
    v_failed := v_failed || coalesce(v_bad, '{}');
  END IF;
  IF k ? 'cutoverStep' THEN
    SELECT array_agg(j.t) INTO v_bad
      FROM jsonb_to_recordset(k->'cutoverStep') j(t int, cutover_id text, scope text, v bigint)
      LEFT JOIN @schema@.cutover_scopes x
        ON x.tenant = p_tenant AND x.cutover_id = j.cutover_id AND x.scope = j.scope
      WHERE coalesce(x.row_version, 0) <> j.v;
    v_failed := v_failed || coalesce(v_bad, '{}');
  END IF;
  IF k ? 'job' THEN
    SELECT array_agg(j.t) INTO v_bad FROM jsonb_to_recordset(k->'job') j(t int, job_id text, v bigint)
      LEFT JOIN @schema@.jobs x ON x.tenant = p_tenant AND x.job_id = j.job_id
      WHERE coalesce(x.row_version, 0) <> j.v;
    v_failed := v_failed || coalesce(v_bad, '{}');
  END IF;
  IF p ? 'ranges' THEN
    SELECT array_agg(j.t) INTO v_bad FROM jsonb_to_recordset(p->'ranges') j(t int, range jsonb, hash text)
      WHERE @schema@.range_hash(@schema@.range_names(p_tenant, j.range)) <> j.hash;
    v_failed := v_failed || coalesce(v_bad, '{}');
  END IF;
  v_failed := ARRAY(SELECT DISTINCT f FROM unnest(v_failed) f ORDER BY f);
  IF cardinality(v_failed) >= (p->>'n')::integer THEN
    RETURN jsonb_build_object('now', v_now, 'failed', to_jsonb(v_failed),
      'rows', @schema@.load_rows(p_tenant, k));
  END IF;

  -- 3. Writes of the transitions that held, and their audit entries.
  v_version := pg_current_xact_id()::text::bigint;
  IF w ? 'scope' THEN
    INSERT INTO @schema@.scopes AS x (tenant, scope, fence, holder, lease_expires_at,
        policy_version, status, updated_at, row_version)
      SELECT p_tenant, j.scope, j.fence, j.holder, j.lease_expires_at, j.policy_version, j.status,
        j.updated_at, v_version
      FROM jsonb_to_recordset(w->'scope') j(t int, scope text, fence bigint, holder text,
        lease_expires_at bigint, policy_version text, status text, updated_at bigint)
      WHERE j.t <> ALL (v_failed)
    ON CONFLICT (tenant, scope) DO UPDATE SET fence = excluded.fence, holder = excluded.holder,
      lease_expires_at = excluded.lease_expires_at, policy_version = excluded.policy_version,
      status = excluded.status, updated_at = excluded.updated_at, row_version = excluded.row_version;
  END IF;
  IF w ? 'fenceGrant' THEN
    INSERT INTO @schema@.fence_grants (tenant, scope, fence, holder, row_version)
      SELECT p_tenant, j.scope, j.fence, j.holder, v_version
      FROM jsonb_to_recordset(w->'fenceGrant') j(t int, scope text, fence bigint, holder text)
      WHERE j.t <> ALL (v_failed)
    ON CONFLICT (tenant, scope, fence) DO UPDATE SET holder = excluded.holder,
      row_version = excluded.row_version;
  END IF;
  IF w ? 'record' THEN
    INSERT INTO @schema@.records (tenant, scope, name, live, value, revision, incarnation,
        fingerprint, updated_at, row_version)
      SELECT p_tenant, j.scope, j.name, j.live, j.value, j.revision, j.incarnation, j.fingerprint,
        j.updated_at, v_version
      FROM jsonb_to_recordset(w->'record') j(t int, scope text, name text, live boolean,
        value text, revision bigint, incarnation bigint, fingerprint text, updated_at bigint)
      WHERE j.t <> ALL (v_failed)
    ON CONFLICT (tenant, scope, name) DO UPDATE SET live = excluded.live, value = excluded.value,
      revision = excluded.revision, incarnation = excluded.incarnation,
      fingerprint = excluded.fingerprint, updated_at = excluded.updated_at,
      row_version = excluded.row_version;
  END IF;
  IF w ? 'deletion' THEN
    INSERT INTO @schema@.record_deletions (tenant, scope, name, revision, row_version)
      SELECT p_tenant, j.scope, j.name, j.revision, v_version
      FROM jsonb_to_recordset(w->'deletion') j(t int, scope text, name text, revision bigint)
      WHERE j.t <> ALL (v_failed)
    ON CONFLICT (tenant, scope, name, revision) DO NOTHING;
  END IF;
  IF w ? 'operation' THEN
    INSERT INTO @schema@.operations (tenant, operation_id, request_fingerprint, outcome,
        created_at, row_version)
      SELECT p_tenant, j.operation_id, j.request_fingerprint, j.outcome, j.created_at, v_version
      FROM jsonb_to_recordset(w->'operation') j(t int, operation_id text,
        request_fingerprint text, outcome jsonb, created_at bigint)
      WHERE j.t <> ALL (v_failed)
    ON CONFLICT (tenant, operation_id) DO UPDATE SET
      request_fingerprint = excluded.request_fingerprint, outcome = excluded.outcome,
      created_at = excluded.created_at, row_version = excluded.row_version;
  END IF;
  IF w ? 'intent' THEN
    INSERT INTO @schema@.intents (tenant, effect_key, scope, target, payload, status, attempts,
        fence, operation_id, claim_fence, claimed_by, claim_expires_at, next_attempt_at,
        provider_ref, last_error, unknown_outcomes, created_at, updated_at, row_version)
      SELECT p_tenant, j.effect_key, j.scope, j.target, j.payload, j.status, j.attempts, j.fence,
        j.operation_id, j.claim_fence, j.claimed_by, j.claim_expires_at, j.next_attempt_at,
        j.provider_ref, j.last_error, j.unknown_outcomes, j.created_at, j.updated_at, v_version
      FROM jsonb_to_recordset(w->'intent') j(t int, effect_key text, scope text, target text,
        payload text, status text, attempts integer, fence bigint, operation_id text,
        claim_fence bigint, claimed_by text, claim_expires_at bigint, next_attempt_at bigint,
        provider_ref text, last_error text, unknown_outcomes integer, created_at bigint,
        updated_at bigint)
      WHERE j.t <> ALL (v_failed)
    ON CONFLICT (tenant, effect_key) DO UPDATE SET status = excluded.status,
      attempts = excluded.attempts, claim_fence = excluded.claim_fence,
      claimed_by = excluded.claimed_by, claim_expires_at = excluded.claim_expires_at,
      next_attempt_at = excluded.next_attempt_at, provider_ref = excluded.provider_ref,
      last_error = excluded.last_error, unknown_outcomes = excluded.unknown_outcomes,
      updated_at = excluded.updated_at, row_version = excluded.row_version;
  END IF;
  IF w ? 'policy' THEN
    INSERT INTO @schema@.policies (tenant, version, digest, description, registered_by,
        registered_at, row_version)
      SELECT p_tenant, j.version, j.digest, j.description, j.registered_by, j.registered_at,
        v_version
      FROM jsonb_to_recordset(w->'policy') j(t int, version text, digest text, description text,
        registered_by text, registered_at bigint)
      WHERE j.t <> ALL (v_failed)
    ON CONFLICT (tenant, version) DO UPDATE SET digest = excluded.digest,
      description = excluded.description, registered_by = excluded.registered_by,
      registered_at = excluded.registered_at, row_version = excluded.row_version;
  END IF;
  IF w ? 'cutover' THEN
    INSERT INTO @schema@.cutover_scopes (tenant, cutover_id, scope, row_version)
      SELECT p_tenant, j.cutover_id, s.scope, v_version
      FROM jsonb_to_recordset(w->'cutover') j(t int, cutover_id text, scopes jsonb)
      CROSS JOIN LATERAL jsonb_array_elements_text(j.scopes) s(scope)
      WHERE j.t <> ALL (v_failed)
    ON CONFLICT (tenant, cutover_id, scope) DO NOTHING;
    INSERT INTO @schema@.cutovers (tenant, cutover_id, request_fingerprint, to_policy, holder,
        lease_ttl_ms, reason, status, start_seq, started_at, completed_at, row_version)
      SELECT p_tenant, j.cutover_id, j.request_fingerprint, j.to_policy, j.holder,
        j.lease_ttl_ms, j.reason, j.status, j.start_seq, j.started_at, j.completed_at, v_version
      FROM jsonb_to_recordset(w->'cutover') j(t int, cutover_id text, request_fingerprint text,
        to_policy text, holder text, lease_ttl_ms bigint, reason text, status text,
        start_seq bigint, started_at bigint, completed_at bigint)
      WHERE j.t <> ALL (v_failed)
    ON CONFLICT (tenant, cutover_id) DO UPDATE SET status = excluded.status,
      completed_at = excluded.completed_at, row_version = excluded.row_version;
  END IF;
  IF w ? 'cutoverStep' THEN
    INSERT INTO @schema@.cutover_scopes (tenant, cutover_id, scope, fence, skipped, row_version)
      SELECT p_tenant, j.cutover_id, j.scope, j.fence, j.skipped, v_version
      FROM jsonb_to_recordset(w->'cutoverStep') j(t int, cutover_id text, scope text,
        fence bigint, skipped boolean)
      WHERE j.t <> ALL (v_failed)
    ON CONFLICT (tenant, cutover_id, scope) DO UPDATE SET fence = excluded.fence,
      skipped = excluded.skipped, row_version = excluded.row_version;
  END IF;
  IF w ? 'job' THEN
    INSERT INTO @schema@.jobs (tenant, job_id, scope, policy_version, fence, state, attempt, at,
        row_version)
      SELECT p_tenant, j.job_id, j.scope, j.policy_version, j.fence, j.state, j.attempt, j.at,
        v_version
      FROM jsonb_to_recordset(w->'job') j(t int, job_id text, scope text, policy_version text,
        fence bigint, state text, attempt integer, at bigint)
      WHERE j.t <> ALL (v_failed)
    ON CONFLICT (tenant, job_id) DO UPDATE SET scope = excluded.scope,
      policy_version = excluded.policy_version, fence = excluded.fence, state = excluded.state,
      attempt = excluded.attempt, at = excluded.at, row_version = excluded.row_version;
  END IF;
  IF p ? 'audit' THEN
    PERFORM pg_advisory_xact_lock_shared(hashtextextended('fencegate.audit:@schema@', 0));
    INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, task_id, operation_id,
        holder, policy_version, fence, current_fence, lease_expires_at, records, effect_key, reads)
      SELECT j.at, p_tenant, j.scope, j.kind, j.outcome, j.reason, j.task_id, j.operation_id,
        j.holder, j.policy_version, j.fence, j.current_fence, j.lease_expires_at, j.records,
        j.effect_key, j.reads
      FROM jsonb_to_recordset(p->'audit') j(t int, i int, at bigint, scope text, kind text,
        outcome text, reason text, task_id text, operation_id text, holder text,
        policy_version text, fence bigint, current_fence bigint, lease_expires_at bigint,
        records jsonb, effect_key text, reads jsonb)
      WHERE j.t <> ALL (v_failed)
      ORDER BY j.i;
  END IF;
  RETURN jsonb_build_object('now', v_now, 'version', v_version, 'failed', to_jsonb(v_failed),
    'rows', CASE WHEN cardinality(v_failed) > 0 THEN @schema@.load_rows(p_tenant, k) END);
END
$fn$;
`;
