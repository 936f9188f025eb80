/**
 * Migration 17, cutover steps: `cutover_chunk` (migration 10) read store time in its declarations,
 * before waiting for the chunk's row locks, so a step that waited behind a commit or a takeover
 * granted leases, and audited them, at the time it arrived. As migration 14 did for the scope
 * functions, it is renamed `cutover_chunk_under_lock` and replaced by a function of the same
 * signature that first takes the chunk's locks (its cutover_scopes rows, then their scope rows, in
 * scope order and the same modes), then reads the clock and calls it: its own locking then finds
 * the locks held and waits no more.
 */
export const CUTOVER_CLOCK_SQL = `
ALTER FUNCTION @schema@.cutover_chunk(text, text, integer, bigint)
  RENAME TO cutover_chunk_under_lock;
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
