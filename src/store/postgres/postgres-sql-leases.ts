/**
 * Authority transitions as PL/pgSQL functions, one call each: the decisions of
 * core/lease-rules.ts (same codes and details; core builds the messages) applied under the scope row's lock, with
 * the audit entry in the same transaction. A refusal is audited and returned as
 * `{"error": {code, message, details}}` rather than raised, so the audit entry survives it. The
 * audit lock is taken right before each audit insert (see postgres-sql-audit.ts).
 *
 * `@schema@.lock_scope` takes the scope row FOR NO KEY UPDATE; when the row does not exist the
 * caller inserts it, and a concurrent insert of the same scope (ON CONFLICT DO NOTHING finding
 * nothing to insert) sends the caller back to lock the winner's row.
 */
import { AUDIT_LOCK } from './postgres-sql-audit.js';

export const LEASES_SQL = `
CREATE FUNCTION @schema@.refusal(p_code text, p_message text, p_details jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object('error',
    jsonb_build_object('code', p_code, 'message', p_message, 'details', p_details))
$$;

CREATE FUNCTION @schema@.grant_answer(
  p_scope text, p_fence bigint, p_holder text, p_lease bigint, p_policy text, p_reacquired boolean
) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object('grant', jsonb_build_object('scope', p_scope, 'fence', p_fence,
    'holder', p_holder, 'leaseExpiresAt', p_lease, 'policyVersion', p_policy,
    'reacquired', p_reacquired))
$$;

CREATE FUNCTION @schema@.acquire_under_lock(
  p_tenant text, p_scope text, p_holder text, p_ttl bigint, p_policy text, p_now bigint
) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint := coalesce(p_now, @schema@.db_now());
  s record;
  v_answer jsonb;
  v_fence bigint;
  v_lease bigint;
  v_policy text;
BEGIN
  LOOP
    SELECT x.fence, x.holder, x.lease_expires_at, x.policy_version, x.status INTO s
      FROM @schema@.scopes x WHERE x.tenant = p_tenant AND x.scope = p_scope FOR NO KEY UPDATE;
    EXIT WHEN FOUND;
    INSERT INTO @schema@.scopes (tenant, scope, fence, holder, lease_expires_at, policy_version,
        status, updated_at)
      VALUES (p_tenant, p_scope, 1, p_holder, v_now + p_ttl, p_policy, 'active', v_now)
      ON CONFLICT DO NOTHING;
    IF FOUND THEN
      ${AUDIT_LOCK}
      INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, holder, policy_version,
          current_fence, lease_expires_at)
        VALUES (v_now, p_tenant, p_scope, 'acquire', 'granted', p_holder, p_policy, 1, v_now + p_ttl);
      RETURN @schema@.grant_answer(p_scope, 1, p_holder, v_now + p_ttl, p_policy, false);
    END IF;
  END LOOP;

  IF s.status = 'deleted' THEN
    v_answer := @schema@.refusal('scope_deleted',
      format('scope %s is deleted; an operator takeover re-creates it', p_scope),
      jsonb_build_object('currentFence', s.fence));
  ELSIF s.policy_version IS NOT NULL AND p_policy IS DISTINCT FROM s.policy_version THEN
    v_answer := @schema@.refusal('policy_mismatch',
      format('scope %s is pinned to policy %s; this acquire names %s', p_scope, s.policy_version,
        coalesce(p_policy, 'no policy')),
      jsonb_build_object('currentPolicyVersion', s.policy_version));
  ELSIF s.holder IS NOT NULL AND (s.lease_expires_at IS NULL OR s.lease_expires_at > v_now) THEN
    IF s.holder = p_holder THEN
      -- The same holder's live grant, returned again (a lost reply retried).
      ${AUDIT_LOCK}
      INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, holder, policy_version,
          current_fence, lease_expires_at)
        VALUES (v_now, p_tenant, p_scope, 'acquire', 'ok', p_holder, s.policy_version, s.fence,
          s.lease_expires_at);
      RETURN @schema@.grant_answer(p_scope, s.fence, p_holder, s.lease_expires_at,
        s.policy_version, true);
    END IF;
    v_answer := @schema@.refusal('lease_held', format('scope %s is held by %s', p_scope, s.holder),
      jsonb_build_object('holder', s.holder, 'leaseExpiresAt', s.lease_expires_at,
        'currentFence', s.fence));
  END IF;

  IF v_answer IS NOT NULL THEN
    ${AUDIT_LOCK}
    INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, holder, current_fence)
      VALUES (v_now, p_tenant, p_scope, 'acquire', 'rejected', v_answer->'error'->>'code',
        p_holder, s.fence);
    RETURN v_answer;
  END IF;

  v_fence := s.fence + 1;
  v_lease := v_now + p_ttl;
  v_policy := coalesce(s.policy_version, p_policy);
  UPDATE @schema@.scopes x SET fence = v_fence, holder = p_holder, lease_expires_at = v_lease,
      policy_version = v_policy, status = 'active', updated_at = v_now
    WHERE x.tenant = p_tenant AND x.scope = p_scope;
  ${AUDIT_LOCK}
  INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, holder, policy_version,
      current_fence, lease_expires_at)
    VALUES (v_now, p_tenant, p_scope, 'acquire', 'granted', p_holder, v_policy, v_fence, v_lease);
  RETURN @schema@.grant_answer(p_scope, v_fence, p_holder, v_lease, v_policy, false);
END
$fn$;

-- The condition shared by renew and release: the presented fence and holder are current.
CREATE FUNCTION @schema@.check_holder(
  p_scope text, p_found boolean, p_fence bigint, p_status text, p_holder text,
  p_presented_fence bigint, p_presented_holder text
) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $fn$
BEGIN
  IF NOT p_found THEN
    RETURN @schema@.refusal('scope_not_found', format('scope %s does not exist', p_scope),
      jsonb_build_object('scope', p_scope));
  ELSIF p_presented_fence <> p_fence THEN
    RETURN @schema@.refusal('stale_fence',
      format('fence %s is not the scope''s fence %s', p_presented_fence, p_fence),
      jsonb_build_object('currentFence', p_fence));
  ELSIF p_status = 'deleted' THEN
    RETURN @schema@.refusal('scope_deleted', format('scope %s is deleted', p_scope),
      jsonb_build_object('currentFence', p_fence));
  ELSIF p_holder IS NOT NULL AND p_holder <> p_presented_holder THEN
    RETURN @schema@.refusal('not_holder',
      format('%s does not hold scope %s', p_presented_holder, p_scope),
      jsonb_build_object('currentFence', p_fence, 'holder', p_holder));
  END IF;
  RETURN NULL;
END
$fn$;

CREATE FUNCTION @schema@.renew_under_lock(
  p_tenant text, p_scope text, p_holder text, p_fence bigint, p_ttl bigint, p_now bigint
) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint := coalesce(p_now, @schema@.db_now());
  s record;
  v_found boolean;
  v_answer jsonb;
  v_lease bigint;
BEGIN
  SELECT x.fence, x.holder, x.policy_version, x.status INTO s
    FROM @schema@.scopes x WHERE x.tenant = p_tenant AND x.scope = p_scope FOR NO KEY UPDATE;
  v_found := FOUND;
  v_answer := @schema@.check_holder(p_scope, v_found, s.fence, s.status, s.holder, p_fence, p_holder);
  IF v_answer IS NULL AND s.holder IS NULL THEN
    v_answer := @schema@.refusal('not_holder',
      format('scope %s was released or cancelled; acquire it again', p_scope),
      jsonb_build_object('currentFence', coalesce(s.fence, 0), 'holder', NULL));
  END IF;
  IF v_answer IS NOT NULL THEN
    ${AUDIT_LOCK}
    INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, holder, fence, current_fence)
      VALUES (v_now, p_tenant, p_scope, 'renew', 'rejected', v_answer->'error'->>'code', p_holder,
        p_fence, s.fence);
    RETURN v_answer;
  END IF;
  v_lease := v_now + p_ttl;
  UPDATE @schema@.scopes x SET lease_expires_at = v_lease, updated_at = v_now
    WHERE x.tenant = p_tenant AND x.scope = p_scope;
  ${AUDIT_LOCK}
  INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, holder, policy_version, fence,
      current_fence, lease_expires_at)
    VALUES (v_now, p_tenant, p_scope, 'renew', 'ok', s.holder, s.policy_version, p_fence, s.fence,
      v_lease);
  RETURN @schema@.grant_answer(p_scope, s.fence, s.holder, v_lease, s.policy_version, false);
END
$fn$;

CREATE FUNCTION @schema@.release_under_lock(
  p_tenant text, p_scope text, p_holder text, p_fence bigint, p_now bigint
) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint := coalesce(p_now, @schema@.db_now());
  s record;
  v_answer jsonb;
  v_already boolean;
BEGIN
  SELECT x.fence, x.holder, x.status INTO s
    FROM @schema@.scopes x WHERE x.tenant = p_tenant AND x.scope = p_scope FOR NO KEY UPDATE;
  v_answer := @schema@.check_holder(p_scope, FOUND, s.fence, s.status, s.holder, p_fence, p_holder);
  IF v_answer IS NOT NULL THEN
    ${AUDIT_LOCK}
    INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, holder, fence, current_fence)
      VALUES (v_now, p_tenant, p_scope, 'release', 'rejected', v_answer->'error'->>'code', p_holder,
        p_fence, s.fence);
    RETURN v_answer;
  END IF;
  v_already := s.holder IS NULL;
  IF NOT v_already THEN
    UPDATE @schema@.scopes x SET holder = NULL, lease_expires_at = NULL, updated_at = v_now
      WHERE x.tenant = p_tenant AND x.scope = p_scope;
  END IF;
  ${AUDIT_LOCK}
  INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, fence, current_fence)
    VALUES (v_now, p_tenant, p_scope, 'release', 'ok',
      CASE WHEN v_already THEN 'already_released' END, p_fence, p_fence);
  RETURN jsonb_build_object('released', true, 'alreadyReleased', v_already);
END
$fn$;

CREATE FUNCTION @schema@.takeover_under_lock(
  p_tenant text, p_scope text, p_holder text, p_ttl bigint, p_policy text, p_reason text,
  p_now bigint
) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint := coalesce(p_now, @schema@.db_now());
  s record;
  v_found boolean;
  v_fence bigint;
  v_lease bigint := CASE WHEN p_ttl IS NULL THEN NULL ELSE v_now + p_ttl END;
  v_policy text;
  v_answer jsonb;
BEGIN
  LOOP
    SELECT x.fence, x.policy_version INTO s
      FROM @schema@.scopes x WHERE x.tenant = p_tenant AND x.scope = p_scope FOR NO KEY UPDATE;
    v_found := FOUND;
    EXIT WHEN v_found;
    INSERT INTO @schema@.scopes (tenant, scope, fence, holder, lease_expires_at, policy_version,
        status, updated_at)
      VALUES (p_tenant, p_scope, 1, p_holder, v_lease, p_policy, 'active', v_now)
      ON CONFLICT DO NOTHING;
    IF FOUND THEN
      ${AUDIT_LOCK}
      INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, holder, policy_version,
          current_fence, lease_expires_at)
        VALUES (v_now, p_tenant, p_scope, 'takeover', 'granted', p_reason, p_holder, p_policy, 1,
          v_lease);
      RETURN @schema@.grant_answer(p_scope, 1, p_holder, v_lease, p_policy, false);
    END IF;
  END LOOP;

  IF s.policy_version IS NOT NULL AND p_policy IS NOT NULL AND p_policy <> s.policy_version THEN
    v_answer := @schema@.refusal('policy_mismatch',
      format('scope %s is pinned to policy %s; use a cutover to move it to %s', p_scope,
        s.policy_version, p_policy),
      jsonb_build_object('currentPolicyVersion', s.policy_version));
    ${AUDIT_LOCK}
    INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, holder, current_fence)
      VALUES (v_now, p_tenant, p_scope, 'takeover', 'rejected', 'policy_mismatch', p_holder, s.fence);
    RETURN v_answer;
  END IF;

  v_fence := s.fence + 1;
  v_policy := coalesce(s.policy_version, p_policy);
  UPDATE @schema@.scopes x SET fence = v_fence, holder = p_holder, lease_expires_at = v_lease,
      policy_version = v_policy, status = 'active', updated_at = v_now
    WHERE x.tenant = p_tenant AND x.scope = p_scope;
  ${AUDIT_LOCK}
  INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, holder, policy_version,
      current_fence, lease_expires_at)
    VALUES (v_now, p_tenant, p_scope, 'takeover', 'granted', p_reason, p_holder, v_policy, v_fence,
      v_lease);
  RETURN @schema@.grant_answer(p_scope, v_fence, p_holder, v_lease, v_policy, false);
END
$fn$;

-- Cancel and delete need an existing, active scope.
CREATE FUNCTION @schema@.check_active(p_scope text, p_found boolean, p_fence bigint, p_status text)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $fn$
BEGIN
  IF NOT p_found THEN
    RETURN @schema@.refusal('scope_not_found', format('scope %s does not exist', p_scope),
      jsonb_build_object('scope', p_scope));
  ELSIF p_status = 'deleted' THEN
    RETURN @schema@.refusal('scope_deleted', format('scope %s is deleted', p_scope),
      jsonb_build_object('currentFence', p_fence));
  END IF;
  RETURN NULL;
END
$fn$;

CREATE FUNCTION @schema@.cancel_under_lock(p_tenant text, p_scope text, p_reason text, p_now bigint)
RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint := coalesce(p_now, @schema@.db_now());
  s record;
  v_answer jsonb;
  v_fence bigint;
  v_keys text[];
  v_count integer;
BEGIN
  SELECT x.fence, x.policy_version, x.status INTO s
    FROM @schema@.scopes x WHERE x.tenant = p_tenant AND x.scope = p_scope FOR NO KEY UPDATE;
  v_answer := @schema@.check_active(p_scope, FOUND, s.fence, s.status);
  IF v_answer IS NOT NULL THEN
    ${AUDIT_LOCK}
    INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, current_fence)
      VALUES (v_now, p_tenant, p_scope, 'cancel', 'rejected', v_answer->'error'->>'code', s.fence);
    RETURN v_answer;
  END IF;
  v_fence := s.fence + 1;
  UPDATE @schema@.scopes x SET fence = v_fence, holder = NULL, lease_expires_at = NULL,
      status = 'active', updated_at = v_now
    WHERE x.tenant = p_tenant AND x.scope = p_scope;
  -- Pending intents become cancelled (any row wait happens here, before the audit lock).
  WITH cancelled AS (
    UPDATE @schema@.intents i SET status = 'cancelled', updated_at = v_now
      WHERE i.tenant = p_tenant AND i.scope = p_scope AND i.status = 'pending'
      RETURNING i.effect_key
  )
  SELECT coalesce(array_agg(c.effect_key ORDER BY c.effect_key), '{}') INTO v_keys FROM cancelled c;
  ${AUDIT_LOCK}
  INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, policy_version, current_fence)
    VALUES (v_now, p_tenant, p_scope, 'cancel', 'ok', p_reason, s.policy_version, v_fence);
  INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, current_fence, effect_key)
    SELECT v_now, p_tenant, p_scope, 'intent', 'cancelled', v_fence, k.key
    FROM unnest(v_keys) WITH ORDINALITY AS k(key, n) ORDER BY k.n;
  v_count := cardinality(v_keys);
  RETURN jsonb_build_object('fence', v_fence, 'cancelledIntents', v_count);
END
$fn$;

CREATE FUNCTION @schema@.delete_scope_under_lock(p_tenant text, p_scope text, p_reason text, p_now bigint)
RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint := coalesce(p_now, @schema@.db_now());
  s record;
  v_answer jsonb;
  v_fence bigint;
  v_records jsonb;
BEGIN
  SELECT x.fence, x.policy_version, x.status INTO s
    FROM @schema@.scopes x WHERE x.tenant = p_tenant AND x.scope = p_scope FOR NO KEY UPDATE;
  v_answer := @schema@.check_active(p_scope, FOUND, s.fence, s.status);
  IF v_answer IS NOT NULL THEN
    ${AUDIT_LOCK}
    INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, current_fence)
      VALUES (v_now, p_tenant, p_scope, 'delete', 'rejected', v_answer->'error'->>'code', s.fence);
    RETURN v_answer;
  END IF;
  v_fence := s.fence + 1;
  UPDATE @schema@.scopes x SET fence = v_fence, holder = NULL, lease_expires_at = NULL,
      status = 'deleted', updated_at = v_now
    WHERE x.tenant = p_tenant AND x.scope = p_scope;
  -- Every live record becomes a tombstone one revision later (its incarnation is kept).
  WITH tombstoned AS (
    UPDATE @schema@.records r SET live = false, value = NULL, fingerprint = NULL,
        revision = r.revision + 1, updated_at = v_now
      WHERE r.tenant = p_tenant AND r.scope = p_scope AND r.live
      RETURNING r.name, r.revision
  ), logged AS (
    INSERT INTO @schema@.record_deletions (tenant, scope, name, revision)
      SELECT p_tenant, p_scope, t.name, t.revision FROM tombstoned t
  )
  SELECT coalesce(jsonb_agg(jsonb_build_object('name', t.name, 'expected', t.revision - 1,
      'actual', t.revision - 1, 'resulting', t.revision, 'fingerprint', NULL, 'deleted', true)
      ORDER BY t.name), '[]'::jsonb)
    INTO v_records FROM tombstoned t;
  ${AUDIT_LOCK}
  INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, policy_version,
      current_fence, records)
    VALUES (v_now, p_tenant, p_scope, 'delete', 'ok', p_reason, s.policy_version, v_fence,
      v_records);
  RETURN jsonb_build_object('fence', v_fence);
END
$fn$;
`;
