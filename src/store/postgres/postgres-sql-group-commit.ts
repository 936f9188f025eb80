/**
 * Group commit: several commits in one call and one transaction, so one WAL flush and one round
 * trip serve all of them. Each item runs `<schema>.commit` exactly as a single commit would, in
 * array order, and gets its own answer; an item sees the items before it (same transaction), so a
 * batch is equivalent to running its items one after the other.
 *
 * Every scope row the batch touches is locked up front, in (tenant, scope) order, FOR NO KEY
 * UPDATE when some item commits to it and FOR SHARE when it is only read:
 * - every transaction takes scope row locks in that order, so batches, commits and lease
 *   operations never wait on each other in a cycle, and no item later upgrades a lock another
 *   batch shares;
 * - no item takes the audit lock while the batch could still wait for a row (an earlier item's
 *   audit insert would otherwise hold it through a later item's wait, see postgres-sql-audit.ts).
 * The adapter also sends a batch sorted by (tenant, scope), keeping the submission order of commits
 * to one scope: the items were in flight together, so any order of different scopes is valid.
 */
export const GROUP_COMMIT_SQL = `
CREATE FUNCTION @schema@.commit_batch(
  p_tenants text[], p_requests jsonb, p_now bigint, p_request_fingerprints text[]
) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_lock record;
  v_answers jsonb := '[]';
BEGIN
  FOR v_lock IN
    SELECT t.tenant, t.scope, bool_or(t.exclusive) AS exclusive FROM (
      SELECT p_tenants[r.n] AS tenant, r.e->>'scope' AS scope, true AS exclusive
        FROM jsonb_array_elements(p_requests) WITH ORDINALITY AS r(e, n)
      UNION ALL
      SELECT p_tenants[r.n], d->>'scope', false
        FROM jsonb_array_elements(p_requests) WITH ORDINALITY AS r(e, n),
          jsonb_array_elements(r.e->'reads') AS d
    ) t
    GROUP BY t.tenant, t.scope
    ORDER BY t.tenant COLLATE "C", t.scope COLLATE "C"
  LOOP
    IF v_lock.exclusive THEN
      PERFORM 1 FROM @schema@.scopes s WHERE s.tenant = v_lock.tenant AND s.scope = v_lock.scope
        FOR NO KEY UPDATE;
    ELSE
      PERFORM 1 FROM @schema@.scopes s WHERE s.tenant = v_lock.tenant AND s.scope = v_lock.scope
        FOR SHARE;
    END IF;
  END LOOP;
  FOR i IN 1 .. cardinality(p_tenants) LOOP
    v_answers := v_answers || jsonb_build_array(
      @schema@.commit(p_tenants[i], p_requests->(i - 1), p_now, p_request_fingerprints[i]));
  END LOOP;
  RETURN v_answers;
END
$fn$;
`;
