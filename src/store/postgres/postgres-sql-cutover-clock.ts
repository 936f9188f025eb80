/**
 * Cutover steps: `cutover_chunk_under_lock` (postgres-sql-cutover-skip.ts) reads store time in its
 * declarations, before waiting for the chunk's row locks, so called directly a step that waited
 * behind a commit or a takeover would grant leases, and audit them, at the time it arrived. As for
 * the scope functions (postgres-sql-after-locks.ts), `cutover_chunk` is a function of the same
 * signature that first takes the chunk's locks (its cutover_scopes rows, then their scope rows, in
 * scope order and the same modes), then reads the clock and calls it: its own locking then finds
 * the locks held and waits no more.
 */
export const CUTOVER_CLOCK_SQL = `
CREATE FUNCTION @schema@.cutover_chunk(
  p_tenant text, p_cutover_id text, p_chunk integer, p_now bigint
) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  v_scopes text[];
BEGIN
  SELECT array_agg(p.scope ORDER BY p.scope) INTO v_scopes FROM (
    SELECT cs.scope FROM @schema@.cutover_scopes cs
      WHERE cs.tenant = p_tenant AND cs.cutover_id = p_cutover_id AND cs.fence IS NULL
      ORDER BY cs.scope LIMIT p_chunk
      FOR UPDATE
  ) p;
  PERFORM 1 FROM (
    SELECT x.scope FROM @schema@.scopes x
      WHERE x.tenant = p_tenant AND x.scope = ANY (v_scopes)
      ORDER BY x.scope
      FOR NO KEY UPDATE
  ) l;
  RETURN @schema@.cutover_chunk_under_lock(p_tenant, p_cutover_id, p_chunk,
    coalesce(p_now, @schema@.db_now()));
END
$fn$;
`;
