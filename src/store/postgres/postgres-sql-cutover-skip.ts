/**
 * A cutover step, `cutover_chunk_under_lock` (called by `cutover_chunk`: cutover-clock.ts), leaves
 * a deleted scope as it is (only a takeover re-creates a scope): once the chunk's scope rows are
 * locked, a scope found deleted is marked skipped in cutover_scopes (with its fence, so it is no
 * longer pending) and is neither bumped nor audited; the others move as before. Lock order and audit lock as in
 * postgres-sql-cutover.ts.
 */
import { AUDIT_LOCK } from './postgres-sql-audit.js';

export const CUTOVER_SKIP_SQL = `
CREATE FUNCTION @schema@.cutover_chunk_under_lock(
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

  -- Under the row locks: a scope deleted before this step (or since planning) stays deleted.
  EXECUTE 'UPDATE @schema@.cutover_scopes cs SET fence = x.fence, skipped = true
      FROM @schema@.scopes x
      WHERE cs.tenant = $1 AND cs.cutover_id = $2 AND cs.scope = ANY ($3)
        AND x.tenant = cs.tenant AND x.scope = cs.scope AND x.status = ''deleted'''
    USING p_tenant, p_cutover_id, v_scopes;

  WITH bumped AS (
    UPDATE @schema@.scopes x SET fence = x.fence + 1, holder = v_cutover.holder,
        lease_expires_at = v_lease, policy_version = v_cutover.to_policy, updated_at = v_now
      WHERE x.tenant = p_tenant AND x.scope = ANY (v_scopes) AND x.status = 'active'
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

  -- The same entry a grant writes, one per moved scope, in scope order.
  ${AUDIT_LOCK}
  INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, holder, policy_version,
      current_fence, lease_expires_at)
    SELECT v_now, p_tenant, m.scope, 'cutover', 'granted', p_cutover_id, v_cutover.holder,
      v_cutover.to_policy, m.fence, v_lease
    FROM unnest(v_moved, v_fences) WITH ORDINALITY AS m(scope, fence, n) ORDER BY m.n;
  -- Scopes handled, moved or skipped: 0 only once nothing is left.
  RETURN cardinality(v_scopes);
END
$fn$;
`;
