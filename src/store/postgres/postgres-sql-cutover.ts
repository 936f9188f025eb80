/**
 * Migration 8: policies, cutovers and the jobs ledger, with their functions (one call each).
 *
 * A cutover is planned by one call (`plan_cutover`: the scope list is fixed then) and carried out
 * by one call per chunk (`cutover_chunk`): each chunk bumps its scopes, marks them moved and
 * appends their audit entries in one transaction, so a cutover resumed after a crash never bumps a
 * scope twice, and other writers run between the chunks.
 *
 * Locks, in the order every transaction takes them: a chunk first locks its progress rows (so a
 * second caller resuming the same cutover at the same moment waits, then moves other scopes), then
 * the scope rows in (tenant, scope) order, then the audit lock right before the audit insert (see
 * postgres-sql-audit.ts): each scope's cutover entry gets its seq while the scope row is held.
 */
import { AUDIT_LOCK } from './postgres-sql-audit.js';

export const CUTOVER_SQL = `
CREATE TABLE @schema@.policies (
  tenant text COLLATE "C" NOT NULL,
  version text COLLATE "C" NOT NULL,
  digest text,
  description text,
  registered_by text,
  registered_at bigint NOT NULL,
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
  PRIMARY KEY (tenant, cutover_id)
);

CREATE TABLE @schema@.cutover_scopes (
  tenant text COLLATE "C" NOT NULL,
  cutover_id text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  -- The fence the cutover gave the scope; null until the scope is moved.
  fence bigint,
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
  PRIMARY KEY (tenant, job_id)
);
CREATE INDEX jobs_by_scope ON @schema@.jobs (tenant, scope);

CREATE FUNCTION @schema@.register_policy(
  p_tenant text, p_version text, p_digest text, p_description text, p_registered_by text,
  p_now bigint
) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint := coalesce(p_now, @schema@.db_now());
  v_policy @schema@.policies%ROWTYPE;
BEGIN
  INSERT INTO @schema@.policies (tenant, version, digest, description, registered_by, registered_at)
    VALUES (p_tenant, p_version, p_digest, p_description, p_registered_by, v_now)
    ON CONFLICT DO NOTHING
    RETURNING * INTO v_policy;
  IF FOUND THEN
    RETURN jsonb_build_object('policy', to_jsonb(v_policy), 'created', true);
  END IF;
  -- Registered before (or by a concurrent call that committed first): a version never changes.
  SELECT * INTO v_policy FROM @schema@.policies x
    WHERE x.tenant = p_tenant AND x.version = p_version;
  IF v_policy.digest IS DISTINCT FROM p_digest THEN
    RETURN @schema@.refusal('policy_conflict',
      format('policy %s is registered with digest %s; a version never changes', p_version,
        coalesce(v_policy.digest, 'none')),
      jsonb_build_object('version', p_version, 'digest', v_policy.digest));
  END IF;
  RETURN jsonb_build_object('policy', to_jsonb(v_policy), 'created', false);
END
$fn$;

-- Plans a cutover, or checks that a cutover with this id is the same request (its fingerprint,
-- computed by the adapter: the scope list as a set, never the reason).
CREATE FUNCTION @schema@.plan_cutover(
  p_tenant text, p_cutover_id text, p_fingerprint text, p_to_policy text, p_holder text,
  p_lease_ttl bigint, p_reason text, p_scopes text[], p_prefix text, p_now bigint
) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint := coalesce(p_now, @schema@.db_now());
  v_fingerprint text;
  v_start bigint;
BEGIN
  SELECT x.request_fingerprint INTO v_fingerprint FROM @schema@.cutovers x
    WHERE x.tenant = p_tenant AND x.cutover_id = p_cutover_id;
  IF NOT FOUND THEN
    IF NOT EXISTS (SELECT 1 FROM @schema@.policies x
        WHERE x.tenant = p_tenant AND x.version = p_to_policy) THEN
      RETURN @schema@.refusal('invalid_request',
        format('toPolicy %s is not registered; register it with POST /v1/policies first',
          p_to_policy),
        jsonb_build_object('field', 'toPolicy'));
    END IF;
    -- Every entry the cutover writes comes later than this.
    SELECT coalesce(max(a.seq), 0) INTO v_start FROM @schema@.audit a;
    INSERT INTO @schema@.cutovers (tenant, cutover_id, request_fingerprint, to_policy, holder,
        lease_ttl_ms, reason, status, start_seq, started_at)
      VALUES (p_tenant, p_cutover_id, p_fingerprint, p_to_policy, p_holder, p_lease_ttl, p_reason,
        'running', v_start, v_now)
      ON CONFLICT DO NOTHING;
    IF FOUND THEN
      IF p_scopes IS NOT NULL THEN
        INSERT INTO @schema@.cutover_scopes (tenant, cutover_id, scope, fence)
          SELECT p_tenant, p_cutover_id, s.scope, NULL FROM unnest(p_scopes) AS s(scope)
          ON CONFLICT DO NOTHING;
      ELSE
        INSERT INTO @schema@.cutover_scopes (tenant, cutover_id, scope, fence)
          SELECT x.tenant, p_cutover_id, x.scope, NULL FROM @schema@.scopes x
          WHERE x.tenant = p_tenant AND x.scope >= p_prefix AND starts_with(x.scope, p_prefix)
            AND x.status = 'active';
      END IF;
      RETURN '{}'::jsonb;
    END IF;
    -- A concurrent call planned the same cutoverId first: compare with it.
    SELECT x.request_fingerprint INTO v_fingerprint FROM @schema@.cutovers x
      WHERE x.tenant = p_tenant AND x.cutover_id = p_cutover_id;
  END IF;
  IF v_fingerprint <> p_fingerprint THEN
    RETURN @schema@.refusal('operation_id_conflict',
      format('cutoverId %s already names a different cutover', p_cutover_id),
      jsonb_build_object('cutoverId', p_cutover_id));
  END IF;
  RETURN '{}'::jsonb;
END
$fn$;

-- Moves up to p_chunk planned scopes; returns how many moved (0 once every scope has moved, when
-- the cutover is marked completed).
CREATE FUNCTION @schema@.cutover_chunk(
  p_tenant text, p_cutover_id text, p_chunk integer, p_now bigint
) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint := coalesce(p_now, @schema@.db_now());
  v_cutover record;
  v_lease bigint;
  v_scopes text[];
  v_moved text[];
  v_fences bigint[];
BEGIN
  SELECT x.to_policy, x.holder, x.lease_ttl_ms INTO v_cutover FROM @schema@.cutovers x
    WHERE x.tenant = p_tenant AND x.cutover_id = p_cutover_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'fencegate: cutover % of tenant % is not planned', p_cutover_id, p_tenant;
  END IF;
  v_lease := CASE WHEN v_cutover.lease_ttl_ms IS NULL THEN NULL
    ELSE v_now + v_cutover.lease_ttl_ms END;

  LOOP
    SELECT array_agg(p.scope ORDER BY p.scope) INTO v_scopes FROM (
      SELECT cs.scope FROM @schema@.cutover_scopes cs
        WHERE cs.tenant = p_tenant AND cs.cutover_id = p_cutover_id AND cs.fence IS NULL
        ORDER BY cs.scope LIMIT p_chunk
        FOR UPDATE
    ) p;
    EXIT WHEN v_scopes IS NOT NULL;
    -- Nothing left to lock. A new statement sees every chunk committed meanwhile.
    IF NOT EXISTS (SELECT 1 FROM @schema@.cutover_scopes cs
        WHERE cs.tenant = p_tenant AND cs.cutover_id = p_cutover_id AND cs.fence IS NULL) THEN
      UPDATE @schema@.cutovers x SET status = 'completed', completed_at = v_now
        WHERE x.tenant = p_tenant AND x.cutover_id = p_cutover_id AND x.status = 'running';
      RETURN 0;
    END IF;
  END LOOP;

  -- A listed scope that was never created starts at fence 0 here and gets fence 1 below.
  INSERT INTO @schema@.scopes (tenant, scope, fence, holder, lease_expires_at, policy_version,
      status, updated_at)
    SELECT p_tenant, s.scope, 0, NULL, NULL, NULL, 'active', v_now
    FROM unnest(v_scopes) AS s(scope) ORDER BY s.scope
    ON CONFLICT DO NOTHING;
  PERFORM 1 FROM (
    SELECT x.scope FROM @schema@.scopes x
      WHERE x.tenant = p_tenant AND x.scope = ANY (v_scopes)
      ORDER BY x.scope
      FOR NO KEY UPDATE
  ) l;

  WITH bumped AS (
    UPDATE @schema@.scopes x SET fence = x.fence + 1, holder = v_cutover.holder,
        lease_expires_at = v_lease, policy_version = v_cutover.to_policy, status = 'active',
        updated_at = v_now
      WHERE x.tenant = p_tenant AND x.scope = ANY (v_scopes)
      RETURNING x.scope, x.fence
  )
  SELECT array_agg(b.scope ORDER BY b.scope), array_agg(b.fence ORDER BY b.scope)
    INTO v_moved, v_fences FROM bumped b;
  -- Planned for each chunk (EXECUTE): a cached generic plan, blind to the chunk's size, can join
  -- the chunk against every scope of the cutover row by row.
  EXECUTE 'UPDATE @schema@.cutover_scopes cs SET fence = m.fence
      FROM unnest($1::text[], $2::bigint[]) AS m(scope, fence)
      WHERE cs.tenant = $3 AND cs.cutover_id = $4 AND cs.scope = m.scope'
    USING v_moved, v_fences, p_tenant, p_cutover_id;

  -- The same entry a grant writes, one per scope, in scope order.
  ${AUDIT_LOCK}
  INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, holder, policy_version,
      current_fence, lease_expires_at)
    SELECT v_now, p_tenant, m.scope, 'cutover', 'granted', p_cutover_id, v_cutover.holder,
      v_cutover.to_policy, m.fence, v_lease
    FROM unnest(v_moved, v_fences) WITH ORDINALITY AS m(scope, fence, n) ORDER BY m.n;
  RETURN cardinality(v_moved);
END
$fn$;

-- A job keeps its latest event by time; of several events of one job in a call, the latest wins,
-- and of equally late ones the last sent (as if they were recorded one after the other).
CREATE FUNCTION @schema@.record_job_events(p_tenant text, p_events jsonb, p_now bigint)
RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint := coalesce(p_now, @schema@.db_now());
  v_count integer;
BEGIN
  INSERT INTO @schema@.jobs AS j (tenant, job_id, scope, policy_version, fence, state, attempt, at)
    SELECT DISTINCT ON (e.job_id) p_tenant, e.job_id, e.scope, e.policy_version, e.fence, e.state,
        e.attempt, e.at
      FROM (
        SELECT (k.e->>'jobId') COLLATE "C" AS job_id, k.e->>'scope' AS scope,
            k.e->>'policyVersion' AS policy_version, (k.e->>'fence')::bigint AS fence,
            k.e->>'state' AS state, (k.e->>'attempt')::integer AS attempt,
            coalesce((k.e->>'at')::bigint, v_now) AS at, k.n
          FROM jsonb_array_elements(p_events) WITH ORDINALITY AS k(e, n)
      ) e
      ORDER BY e.job_id, e.at DESC, e.n DESC
    ON CONFLICT (tenant, job_id) DO UPDATE SET scope = excluded.scope,
      policy_version = excluded.policy_version, fence = excluded.fence, state = excluded.state,
      attempt = excluded.attempt, at = excluded.at
    WHERE excluded.at >= j.at;
  GET DIAGNOSTICS v_count = ROW_COUNT;
  RETURN v_count;
END
$fn$;
`;
