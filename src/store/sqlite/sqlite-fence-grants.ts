/**
 * Whom each fence was granted to (core/fence-holder.ts), so a commit's audit entry names the
 * holder of the fence it presented. The database records it: every change of a scope row that
 * raises its fence and names a holder (an acquire of a new fence, a takeover, a cutover step) adds
 * one row, whichever statement made it; a cancel or a delete raises the fence with no holder and
 * records nothing. One row per grant, kept (also when the scope is deleted: a late commit with
 * an old fence is still attributed); retention does not prune them.
 */
export const SQLITE_FENCE_GRANTS_MIGRATION = `
  CREATE TABLE fence_grants (
    tenant TEXT NOT NULL,
    scope TEXT NOT NULL,
    fence INTEGER NOT NULL,
    holder TEXT NOT NULL,
    PRIMARY KEY (tenant, scope, fence)
  ) WITHOUT ROWID;

  CREATE TRIGGER fence_granted_on_insert AFTER INSERT ON scopes
  WHEN NEW.holder IS NOT NULL AND NEW.fence > 0
  BEGIN
    INSERT OR IGNORE INTO fence_grants (tenant, scope, fence, holder)
      VALUES (NEW.tenant, NEW.scope, NEW.fence, NEW.holder);
  END;

  CREATE TRIGGER fence_granted_on_update AFTER UPDATE OF fence ON scopes
  WHEN NEW.holder IS NOT NULL AND NEW.fence > OLD.fence
  BEGIN
    INSERT OR IGNORE INTO fence_grants (tenant, scope, fence, holder)
      VALUES (NEW.tenant, NEW.scope, NEW.fence, NEW.holder);
  END;
`;
