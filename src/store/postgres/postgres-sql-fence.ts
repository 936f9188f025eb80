/**
 * Bring your own table: `@schema@.assert_fence(tenant, scope, fence)` checks authority inside the
 * caller's own transaction, so an UPDATE of the caller's table commits only under the current
 * fence. It locks the scope row FOR SHARE: a takeover, cancel or delete (whose apply step locks it
 * FOR NO KEY UPDATE) waits until the caller's transaction ends, so authority cannot move between the check
 * and the caller's commit. Several workers' checks share the lock and do not block each other.
 *
 * A failure raises SQLSTATE FG001 with, in DETAIL, `{"code": <catalog code>, "details": {...}}`:
 * the TypeScript helper builds the FencegateError from them through core, so its message is the
 * matching commit rejection's (the SQL's own MESSAGE is only for someone reading psql). The optional fourth argument replaces the database clock and exists for tests
 * whose store runs on an injected clock.
 */
export const FENCE_SQL = `
CREATE FUNCTION @schema@.assert_fence(
  p_tenant text, p_scope text, p_fence bigint, p_now bigint DEFAULT NULL
) RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint;
  s record;
  v_code text;
  v_message text;
  v_details jsonb;
BEGIN
  SELECT x.fence, x.holder, x.lease_expires_at, x.status INTO s
    FROM @schema@.scopes x WHERE x.tenant = p_tenant AND x.scope = p_scope FOR SHARE;
  -- Read after the lock: a check that waited behind a takeover is judged by the time it got it.
  v_now := coalesce(p_now, @schema@.db_now());
  IF NOT FOUND THEN
    v_code := 'scope_not_found';
    v_message := format('scope %s does not exist', p_scope);
    v_details := jsonb_build_object('scope', p_scope);
  ELSIF s.status = 'deleted' THEN
    v_code := 'scope_deleted';
    v_message := format('scope %s is deleted', p_scope);
    v_details := jsonb_build_object('scope', p_scope, 'currentFence', s.fence);
  ELSIF p_fence <> s.fence THEN
    v_code := 'stale_fence';
    v_message := format('fence %s is %s the scope''s fence %s', p_fence,
      CASE WHEN p_fence < s.fence THEN 'older than' ELSE 'not' END, s.fence);
    v_details := jsonb_build_object('currentFence', s.fence);
  ELSIF s.holder IS NULL THEN
    v_code := 'authority_revoked';
    v_message := format('scope %s has no holder at fence %s', p_scope, s.fence);
    v_details := jsonb_build_object('currentFence', s.fence, 'holder', NULL);
  ELSIF s.lease_expires_at IS NOT NULL AND s.lease_expires_at <= v_now THEN
    v_code := 'lease_expired';
    v_message := format('the lease of %s expired at %s; store time is %s', s.holder,
      s.lease_expires_at, v_now);
    v_details := jsonb_build_object('currentFence', s.fence, 'holder', s.holder,
      'leaseExpiresAt', s.lease_expires_at);
  ELSE
    RETURN s.fence;
  END IF;
  RAISE EXCEPTION USING ERRCODE = 'FG001', MESSAGE = v_message,
    DETAIL = jsonb_build_object('code', v_code, 'details', v_details)::text,
    HINT = 'fencegate: reload the scope; a stale worker must stop, not retry with a newer fence';
END
$fn$;
`;
