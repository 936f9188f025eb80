/**
 * The commit boundary as one PL/pgSQL function, so a commit is one round trip: replay check, the
 * check order of core/commit-check.ts (same codes and details; core builds the messages), the record writes,
 * intents, stored outcome and audit entries, all in the statement's own transaction.
 *
 * Concurrency (READ COMMITTED): the commit scope's row is locked FOR NO KEY UPDATE and every other
 * scope named by a read dependency FOR SHARE, in name order so two commits cannot deadlock on each
 * other. Every change of a record happens under its scope row's exclusive lock (commit, delete),
 * so once the locks are held the records checked cannot change before this transaction ends; each
 * later statement of the function takes a fresh snapshot and sees everything committed before the
 * locks were granted. Two races are settled by retrying the whole call (raised as
 * serialization_failure, which the adapter retries): another commit storing an outcome under the
 * same operationId, or creating the same effectKey, from a different scope at the same moment.
 *
 * The record values and intent payloads travel as JSON text inside the request (`value`,
 * `payload`) and are stored as text; fingerprints are computed by the adapter.
 */
import { AUDIT_LOCK } from './postgres-sql-audit.js';

export const COMMIT_SQL = `
CREATE FUNCTION @schema@.check_write(
  p_tenant text, p_scope text, p_name text, p_expected bigint, p_delete boolean, p_live boolean,
  p_revision bigint, p_incarnation bigint
) RETURNS jsonb LANGUAGE plpgsql STABLE AS $fn$
DECLARE
  v_details jsonb := jsonb_build_object(
    'name', p_name, 'expected', p_expected, 'actual', p_revision, 'exists', p_live);
  v_ended boolean;
BEGIN
  IF p_expected = p_revision THEN
    IF p_delete AND NOT p_live THEN
      RETURN jsonb_build_object('code', 'stale_revision',
        'message', format('record %s does not exist; there is nothing to delete', p_name),
        'details', v_details);
    END IF;
    RETURN NULL;
  END IF;
  -- A read of never-existed, of the future, or of the absence a deletion left read no lifetime;
  -- a read of a live revision read a lifetime that has ended unless it is the current one.
  IF p_expected = 0 OR p_expected > p_revision THEN
    v_ended := false;
  ELSIF EXISTS (SELECT 1 FROM @schema@.record_deletions d
      WHERE d.tenant = p_tenant AND d.scope = p_scope AND d.name = p_name AND d.revision = p_expected) THEN
    v_ended := false;
  ELSE
    v_ended := NOT p_live OR p_expected < p_incarnation;
  END IF;
  IF v_ended THEN
    RETURN jsonb_build_object('code', 'incarnation_changed',
      'message', format('record %s was read at revision %s in a lifetime that has ended; it is now at revision %s',
        p_name, p_expected, p_revision),
      'details', v_details || jsonb_build_object('incarnation', p_incarnation));
  END IF;
  RETURN jsonb_build_object('code', 'stale_revision',
    'message', format('record %s was expected at revision %s; it is at revision %s',
      p_name, p_expected, p_revision),
    'details', v_details);
END
$fn$;

CREATE FUNCTION @schema@.commit_under_lock(
  p_tenant text, p_request jsonb, p_now bigint, p_request_fingerprint text
) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint := coalesce(p_now, @schema@.db_now());
  v_scope text := p_request->>'scope';
  v_fence bigint := (p_request->>'fence')::bigint;
  v_operation text := p_request->>'operationId';
  v_task text := p_request->>'taskId';
  v_policy text := p_request->>'policyVersion';
  v_reads jsonb := p_request->'reads';
  v_writes jsonb := p_request->'writes';
  v_intents jsonb := p_request->'intents';
  v_read_count integer := jsonb_array_length(p_request->'reads');
  v_write_count integer := jsonb_array_length(p_request->'writes');
  v_intent_count integer := jsonb_array_length(p_request->'intents');
  v_stored_fingerprint text;
  v_stored_outcome jsonb;
  v_lock_scope text;
  v_found boolean := false;
  v_s_fence bigint;
  v_s_holder text;
  v_s_lease bigint;
  v_s_policy text;
  v_s_status text;
  v_rejection jsonb;
  v_item jsonb;
  v_row_exists boolean[] := '{}';
  v_live boolean[] := '{}';
  v_revision bigint[] := '{}';
  v_incarnation bigint[] := '{}';
  v_current bigint;
  v_cur_live boolean;
  v_cur_incarnation bigint;
  v_name text;
  v_expected bigint;
  v_new_revision bigint;
  v_new_incarnation bigint;
  v_audit_records jsonb := '[]';
  v_audit_reads jsonb := '[]';
  v_result_records jsonb := '[]';
  v_result_intents jsonb := '[]';
  v_result jsonb;
  v_count integer;
BEGIN
  -- Check 1: the operationId's stored outcome.
  SELECT o.request_fingerprint, o.outcome INTO v_stored_fingerprint, v_stored_outcome
    FROM @schema@.operations o WHERE o.tenant = p_tenant AND o.operation_id = v_operation;
  IF FOUND THEN
    IF v_stored_fingerprint = p_request_fingerprint THEN
      RETURN v_stored_outcome || '{"replayed": true}'::jsonb;
    END IF;
    ${AUDIT_LOCK}
    INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, task_id, operation_id, fence)
      VALUES (v_now, p_tenant, v_scope, 'commit', 'rejected', 'operation_id_conflict', v_task,
        v_operation, v_fence);
    RETURN '{"conflict": true}'::jsonb;
  END IF;

  -- Locks, in scope-name order: the commit scope exclusively, dependency scopes shared.
  IF v_read_count = 0 THEN
    SELECT s.fence, s.holder, s.lease_expires_at, s.policy_version, s.status
      INTO v_s_fence, v_s_holder, v_s_lease, v_s_policy, v_s_status
      FROM @schema@.scopes s WHERE s.tenant = p_tenant AND s.scope = v_scope
      FOR NO KEY UPDATE;
    v_found := FOUND;
  ELSE
    FOR v_lock_scope IN
      SELECT x.s FROM (
        SELECT v_scope COLLATE "C" AS s
        UNION SELECT (e->>'scope') COLLATE "C" FROM jsonb_array_elements(v_reads) e
      ) x ORDER BY 1
    LOOP
      IF v_lock_scope = v_scope THEN
        SELECT s.fence, s.holder, s.lease_expires_at, s.policy_version, s.status
          INTO v_s_fence, v_s_holder, v_s_lease, v_s_policy, v_s_status
          FROM @schema@.scopes s WHERE s.tenant = p_tenant AND s.scope = v_scope
          FOR NO KEY UPDATE;
        v_found := FOUND;
      ELSE
        PERFORM 1 FROM @schema@.scopes s WHERE s.tenant = p_tenant AND s.scope = v_lock_scope
          FOR SHARE;
      END IF;
    END LOOP;
  END IF;

  -- Checks 2 to 6.
  IF NOT v_found THEN
    v_rejection := jsonb_build_object('code', 'scope_not_found',
      'message', format('scope %s does not exist', v_scope),
      'details', jsonb_build_object('scope', v_scope));
  ELSIF v_s_status = 'deleted' THEN
    v_rejection := jsonb_build_object('code', 'scope_deleted',
      'message', format('scope %s is deleted', v_scope),
      'details', jsonb_build_object('scope', v_scope, 'currentFence', v_s_fence));
  ELSIF v_fence <> v_s_fence THEN
    v_rejection := jsonb_build_object('code', 'stale_fence',
      'message', format('fence %s is %s the scope''s fence %s', v_fence,
        CASE WHEN v_fence < v_s_fence THEN 'older than' ELSE 'not' END, v_s_fence),
      'details', jsonb_build_object('currentFence', v_s_fence));
  ELSIF v_s_holder IS NULL THEN
    v_rejection := jsonb_build_object('code', 'authority_revoked',
      'message', format('scope %s has no holder at fence %s', v_scope, v_s_fence),
      'details', jsonb_build_object('currentFence', v_s_fence, 'holder', NULL));
  ELSIF v_s_lease IS NOT NULL AND v_s_lease <= v_now THEN
    v_rejection := jsonb_build_object('code', 'lease_expired',
      'message', format('the lease of %s expired at %s; store time is %s', v_s_holder, v_s_lease, v_now),
      'details', jsonb_build_object('currentFence', v_s_fence, 'holder', v_s_holder,
        'leaseExpiresAt', v_s_lease));
  ELSIF v_policy IS NOT NULL AND v_s_policy IS NOT NULL AND v_policy <> v_s_policy THEN
    v_rejection := jsonb_build_object('code', 'stale_policy',
      'message', format('policy %s is not the scope''s policy %s', v_policy, v_s_policy),
      'details', jsonb_build_object('currentPolicyVersion', v_s_policy, 'currentFence', v_s_fence));
  END IF;

  -- Check 7: the first dependency whose revision moved. Every lookup below is one primary-key
  -- probe per item (plpgsql loops, not joins), so no plan can ever scan a scope's records.
  FOR i IN 1 .. v_read_count LOOP
      v_item := v_reads->(i - 1);
      SELECT x.revision INTO v_current FROM @schema@.records x
        WHERE x.tenant = p_tenant AND x.scope = v_item->>'scope' AND x.name = v_item->>'name';
      IF NOT FOUND THEN v_current := 0; END IF;
      v_audit_reads := v_audit_reads || jsonb_build_object('scope', v_item->>'scope',
        'name', v_item->>'name', 'expected', (v_item->>'revision')::bigint, 'actual', v_current);
      IF v_rejection IS NULL AND v_current <> (v_item->>'revision')::bigint THEN
        v_rejection := jsonb_build_object('code', 'stale_dependency',
          'message', format('dependency %s/%s was read at revision %s; it is now %s',
            v_item->>'scope', v_item->>'name', v_item->>'revision', v_current),
          'details', jsonb_build_object('scope', v_item->>'scope', 'name', v_item->>'name',
            'expected', (v_item->>'revision')::bigint, 'actual', v_current));
      END IF;
    END LOOP;

  -- Check 8, loading every written record's current state (the audit names it either way).
  FOR i IN 1 .. v_write_count LOOP
    v_item := v_writes->(i - 1);
    SELECT x.live, x.revision, x.incarnation INTO v_cur_live, v_current, v_cur_incarnation
      FROM @schema@.records x
      WHERE x.tenant = p_tenant AND x.scope = v_scope AND x.name = v_item->>'name';
    v_row_exists[i] := FOUND;
    IF NOT FOUND THEN
      v_cur_live := false; v_current := 0; v_cur_incarnation := 0;
    END IF;
    v_live[i] := v_cur_live;
    v_revision[i] := v_current;
    v_incarnation[i] := v_cur_incarnation;
    -- The common case (expectRevision current, not a delete of nothing) needs no further check.
    IF v_rejection IS NULL AND ((v_item->>'expectRevision')::bigint <> v_current
        OR ((v_item->>'delete')::boolean AND NOT v_cur_live)) THEN
      v_rejection := @schema@.check_write(p_tenant, v_scope, v_item->>'name',
        (v_item->>'expectRevision')::bigint,
        (v_item->>'delete')::boolean, v_live[i], v_revision[i], v_incarnation[i]);
    END IF;
  END LOOP;

  -- Check 9: the first effectKey that exists already.
  IF v_rejection IS NULL THEN
    FOR i IN 1 .. v_intent_count LOOP
      v_item := v_intents->(i - 1);
      PERFORM 1 FROM @schema@.intents x
        WHERE x.tenant = p_tenant AND x.effect_key = v_item->>'effectKey';
      IF FOUND THEN
        v_rejection := jsonb_build_object('code', 'duplicate_effect',
          'message', format('effect %s was committed before', v_item->>'effectKey'),
          'details', jsonb_build_object('effectKey', v_item->>'effectKey'));
        EXIT;
      END IF;
    END LOOP;
  END IF;

  IF v_rejection IS NOT NULL THEN
    FOR i IN 1 .. v_write_count LOOP
      v_item := v_writes->(i - 1);
      v_audit_records := v_audit_records || jsonb_build_object(
        'name', v_item->>'name', 'expected', (v_item->>'expectRevision')::bigint,
        'actual', v_revision[i], 'resulting', NULL, 'fingerprint', NULL,
        'deleted', (v_item->>'delete')::boolean);
    END LOOP;
    v_result := jsonb_build_object('outcome', 'rejected', 'operationId', v_operation,
      'replayed', false, 'error', v_rejection);
    ${AUDIT_LOCK}
  WITH stored AS (
      INSERT INTO @schema@.operations (tenant, operation_id, request_fingerprint, outcome, created_at)
        VALUES (p_tenant, v_operation, p_request_fingerprint, v_result, v_now)
        ON CONFLICT DO NOTHING RETURNING 1
    )
    INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, task_id, operation_id,
        holder, policy_version, fence, current_fence, lease_expires_at, records, reads)
      SELECT v_now, p_tenant, v_scope, 'commit', 'rejected', v_rejection->>'code', v_task,
        v_operation, v_s_holder, coalesce(v_policy, v_s_policy), v_fence, v_s_fence, v_s_lease,
        v_audit_records, nullif(v_audit_reads, '[]'::jsonb)
      FROM stored;
    IF NOT FOUND THEN
      RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
        MESSAGE = 'fencegate: operationId stored concurrently; retry';
    END IF;
    RETURN v_result;
  END IF;

  -- Committed: the writes.
  FOR i IN 1 .. v_write_count LOOP
    v_item := v_writes->(i - 1);
    v_name := v_item->>'name';
    v_expected := (v_item->>'expectRevision')::bigint;
    v_new_revision := v_revision[i] + 1;
    IF (v_item->>'delete')::boolean THEN
      UPDATE @schema@.records r SET live = false, value = NULL, fingerprint = NULL,
          revision = v_new_revision, updated_at = v_now
        WHERE r.tenant = p_tenant AND r.scope = v_scope AND r.name = v_name;
      INSERT INTO @schema@.record_deletions (tenant, scope, name, revision)
        VALUES (p_tenant, v_scope, v_name, v_new_revision);
      v_result_records := v_result_records || jsonb_build_object('name', v_name,
        'revision', v_new_revision, 'incarnation', v_incarnation[i], 'fingerprint', NULL);
      v_audit_records := v_audit_records || jsonb_build_object('name', v_name,
        'expected', v_expected, 'actual', v_revision[i], 'resulting', v_new_revision,
        'fingerprint', NULL, 'deleted', true);
    ELSE
      -- A write to an absent record starts a new lifetime at this revision.
      v_new_incarnation := CASE WHEN v_live[i] THEN v_incarnation[i] ELSE v_new_revision END;
      IF v_row_exists[i] THEN
        UPDATE @schema@.records r SET live = true, value = v_item->>'value',
            revision = v_new_revision, incarnation = v_new_incarnation,
            fingerprint = v_item->>'fingerprint', updated_at = v_now
          WHERE r.tenant = p_tenant AND r.scope = v_scope AND r.name = v_name;
      ELSE
        INSERT INTO @schema@.records (tenant, scope, name, live, value, revision, incarnation,
            fingerprint, updated_at)
          VALUES (p_tenant, v_scope, v_name, true, v_item->>'value', v_new_revision,
            v_new_incarnation, v_item->>'fingerprint', v_now);
      END IF;
      v_result_records := v_result_records || jsonb_build_object('name', v_name,
        'revision', v_new_revision, 'incarnation', v_new_incarnation,
        'fingerprint', v_item->'fingerprint');
      v_audit_records := v_audit_records || jsonb_build_object('name', v_name,
        'expected', v_expected, 'actual', v_revision[i], 'resulting', v_new_revision,
        'fingerprint', v_item->'fingerprint', 'deleted', false);
    END IF;
  END LOOP;

  IF v_intent_count > 0 THEN
    INSERT INTO @schema@.intents (tenant, effect_key, scope, target, payload, status, fence,
        operation_id, next_attempt_at, created_at, updated_at)
      SELECT p_tenant, k.e->>'effectKey', v_scope, k.e->>'target', k.e->>'payload', 'pending',
        v_fence, v_operation, v_now, v_now, v_now
      FROM jsonb_array_elements(v_intents) AS k(e)
      ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    IF v_count <> v_intent_count THEN
      RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
        MESSAGE = 'fencegate: effectKey created concurrently; retry';
    END IF;
    SELECT jsonb_agg(jsonb_build_object('effectKey', k.e->>'effectKey', 'status', 'pending') ORDER BY k.n)
      INTO v_result_intents FROM jsonb_array_elements(v_intents) WITH ORDINALITY AS k(e, n);
  END IF;

  v_result := jsonb_build_object('outcome', 'committed', 'operationId', v_operation,
    'scope', v_scope, 'fence', v_fence, 'records', v_result_records,
    'intents', v_result_intents, 'replayed', false);
  ${AUDIT_LOCK}
  WITH stored AS (
    INSERT INTO @schema@.operations (tenant, operation_id, request_fingerprint, outcome, created_at)
      VALUES (p_tenant, v_operation, p_request_fingerprint, v_result, v_now)
      ON CONFLICT DO NOTHING RETURNING 1
  )
  INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, task_id, operation_id, holder,
      policy_version, fence, current_fence, lease_expires_at, records, reads)
    SELECT v_now, p_tenant, v_scope, 'commit', 'committed', v_task, v_operation, v_s_holder,
      coalesce(v_policy, v_s_policy), v_fence, v_s_fence, v_s_lease, v_audit_records,
      nullif(v_audit_reads, '[]'::jsonb)
    FROM stored;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
      MESSAGE = 'fencegate: operationId stored concurrently; retry';
  END IF;
  IF v_intent_count > 0 THEN
    INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, operation_id, current_fence,
        effect_key)
      SELECT v_now, p_tenant, v_scope, 'intent', 'pending', v_operation, v_fence, k.e->>'effectKey'
      FROM jsonb_array_elements(v_intents) WITH ORDINALITY AS k(e, n) ORDER BY k.n;
  END IF;
  RETURN v_result;
END
$fn$;
`;
