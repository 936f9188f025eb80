/**
 * Reading the audit log in seq order while commits run.
 *
 * A bigserial hands out seq when the entry is inserted, but transactions commit in their own
 * order: a reader could see seq 11 committed while seq 10 is still in flight, page past 10 with
 * `afterSeq`, and never see it. Two rules make seq order safe to read:
 *
 * - Per scope, seq order is commit order: every entry about a scope is inserted while its
 *   transaction holds that scope's row lock (FOR NO KEY UPDATE), and the lock is held to the end
 *   of the transaction, so the next transaction touching the scope takes its seq later.
 * - Globally, readers only see a complete prefix: the apply step (postgres-sql-apply.ts) takes a
 *   shared transaction-level advisory lock, the audit lock (`fencegate.audit:<schema>`), right
 *   before its audit insert, and holds it to the end of its transaction. `audit_horizon()` takes
 *   the same lock exclusively, which waits until every transaction that may already hold a seq
 *   has ended; the highest seq then committed is a horizon below which no entry can still appear.
 *   readAudit returns entries up to the horizon only. Writers never block each other on this
 *   lock, and a reader holds it for one index lookup.
 *
 * The lock is taken after the row locks, not before: a writer waiting for a scope row (say, held
 * by a caller's long transaction through assert_fence) then holds nothing readers wait for, so a
 * slow scope never stalls readAudit, nor the writers queued behind a waiting reader. The one wait
 * left after the lock is an insert into a unique index behind another transaction's insert of the
 * same operationId; if that ever closes a cycle with a waiting reader, PostgreSQL's deadlock
 * detector aborts one side and the store retries it.
 */
export const AUDIT_SQL = `
CREATE FUNCTION @schema@.audit_horizon() RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE
  v_horizon bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('fencegate.audit:@schema@', 0));
  -- A new statement, so a new snapshot: it sees every writer that ended while we waited.
  SELECT coalesce(max(a.seq), 0) INTO v_horizon FROM @schema@.audit a;
  RETURN v_horizon;
END
$fn$;
`;
