/**
 * Policies, cutovers and the jobs ledger: their functions (one call each; tables in
 * postgres-sql-tables.ts).
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

export const CUTOVER_SQL = `
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
