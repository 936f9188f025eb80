/**
 * A commit that releases its lease (`release: true`, core/plan/plan-commit.ts): the
 * commit function, then, in the same transaction and only when it committed anew, what the release
 * function does on success: the lease ends (the fence stays), the release's audit entry, and the
 * job's events (postgres-sql-lease-jobs.ts). A commit that passed its checks holds the scope's
 * live lease at its fence under the scope's row lock, so the release needs no check of its own; a
 * replay answers the stored outcome, whose transaction released already.
 */
import { AUDIT_LOCK } from './postgres-sql-audit.js';

export const COMMIT_RELEASE_SQL = `
CREATE FUNCTION @schema@.commit_release(
  p_tenant text, p_request jsonb, p_now bigint, p_request_fingerprint text, p_job jsonb
) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_answer jsonb;
  v_now bigint;
  v_scope text := p_request->>'scope';
  v_fence bigint := (p_request->>'fence')::bigint;
BEGIN
  v_answer := @schema@.commit(p_tenant, p_request, p_now, p_request_fingerprint);
  IF v_answer->>'outcome' IS DISTINCT FROM 'committed' OR (v_answer->>'replayed')::boolean THEN
    RETURN v_answer;
  END IF;
  v_now := coalesce(p_now, @schema@.db_now());
  UPDATE @schema@.scopes x SET holder = NULL, lease_expires_at = NULL, updated_at = v_now
    WHERE x.tenant = p_tenant AND x.scope = v_scope;
  ${AUDIT_LOCK}
  INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, fence, current_fence)
    VALUES (v_now, p_tenant, v_scope, 'release', 'ok', v_fence, v_fence);
  IF p_job IS NOT NULL THEN
    PERFORM @schema@.lease_job_events(p_tenant, v_scope, v_fence, p_job, v_now);
  END IF;
  RETURN v_answer;
END
$fn$;
`;
