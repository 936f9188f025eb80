/**
 * Fence grants (the table is in postgres-sql-tables.ts): whom each fence was granted to (core/fence-holder.ts), so a commit's
 * audit entry names the holder of the fence it presented, accepted or rejected.
 *
 * The database records it and applies it, so no function (commit, commit_batch, the lease
 * functions, cutover steps, whichever migration wrote them) can miss it:
 * - every change of a scope row that raises its fence and names a holder (an acquire of a new
 *   fence, a takeover, a cutover step) adds one `fence_grants` row; a cancel or a delete raises the
 *   fence with no holder and records nothing;
 * - a commit entry about an existing scope (one with a current fence) is given, before it is
 *   inserted, the holder its presented fence was granted to: none for a fence never granted. The
 *   current fence with a holder keeps the scope's holder the function wrote (the same one).
 * One row per grant, kept (also when the scope is deleted, so a late commit with an old fence is
 * still attributed); retention does not prune them.
 */
export const FENCE_GRANTS_SQL = `
CREATE FUNCTION @schema@.record_fence_grant() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO @schema@.fence_grants (tenant, scope, fence, holder)
    VALUES (NEW.tenant, NEW.scope, NEW.fence, NEW.holder)
    ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$fn$;

CREATE TRIGGER fence_granted_on_insert AFTER INSERT ON @schema@.scopes
  FOR EACH ROW WHEN (NEW.holder IS NOT NULL AND NEW.fence > 0)
  EXECUTE FUNCTION @schema@.record_fence_grant();

CREATE TRIGGER fence_granted_on_update AFTER UPDATE OF fence ON @schema@.scopes
  FOR EACH ROW WHEN (NEW.holder IS NOT NULL AND NEW.fence > OLD.fence)
  EXECUTE FUNCTION @schema@.record_fence_grant();

CREATE FUNCTION @schema@.commit_fence_holder() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  -- The current fence with a holder is that holder's: no lookup (core/fence-holder.ts).
  IF NEW.fence = NEW.current_fence AND NEW.holder IS NOT NULL THEN
    RETURN NEW;
  END IF;
  NEW.holder := (SELECT g.holder FROM @schema@.fence_grants g
    WHERE g.tenant = NEW.tenant AND g.scope = NEW.scope AND g.fence = NEW.fence);
  RETURN NEW;
END
$fn$;

CREATE TRIGGER commit_names_fence_holder BEFORE INSERT ON @schema@.audit
  FOR EACH ROW WHEN (NEW.kind = 'commit' AND NEW.fence IS NOT NULL
    AND NEW.current_fence IS NOT NULL)
  EXECUTE FUNCTION @schema@.commit_fence_holder();
`;
