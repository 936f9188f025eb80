/**
 * Whom each fence was granted to (core/fence-holder.ts), so a commit's audit entry names the
 * holder of the fence it presented: one row per grant (an acquire of a new fence, a takeover, a
 * cutover step), kept (also when the scope is deleted: a late commit with an old fence is still
 * attributed); retention does not prune them. The triggers created here wrote the rows until the
 * plans put them (migration 10 drops them).
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
