/**
 * Store time is read after the locks are held, and abandoned operations.
 *
 * The scope functions (postgres-sql-commit.ts, -leases.ts, -fence.ts) read the clock (`db_now()`)
 * in their declarations, before waiting for the scope row lock: called directly, a commit that
 * waited past its lease's expiry would be judged by the time it arrived. They are created as
 * `<name>_under_lock`, and `<name>` is a function of the same signature that first takes the same
 * row locks (in the same order and modes), then reads the clock and calls it: its own locking then
 * finds the locks held and waits no more.
 *
 * The new `commit` also answers every commit with an abandoned operationId with the stored
 * abandonment (core/abandon.ts), and `abandon_operation` stores it. An abandonment that lands
 * while a commit waits for its locks is found by that commit's own replay check (a conflict) or its
 * insert of the outcome (a duplicate key): either way the whole call is retried as a serialization
 * failure, and the retry answers the abandonment.
 */
import { AUDIT_LOCK } from './postgres-sql-audit.js';

interface ScopeFunction {
  name: string;
  params: [name: string, type: string][];
  returns: string;
  /** The lock the function itself takes on the scope row. */
  lock: 'FOR NO KEY UPDATE' | 'FOR SHARE';
  /** p_now has a default (assert_fence's optional test clock). */
  optionalNow?: boolean;
}

const SCOPE_FUNCTIONS: readonly ScopeFunction[] = [
  {
    name: 'acquire',
    params: [
      ['p_tenant', 'text'],
      ['p_scope', 'text'],
      ['p_holder', 'text'],
      ['p_ttl', 'bigint'],
      ['p_policy', 'text'],
      ['p_now', 'bigint'],
    ],
    returns: 'jsonb',
    lock: 'FOR NO KEY UPDATE',
  },
  {
    name: 'renew',
    params: [
      ['p_tenant', 'text'],
      ['p_scope', 'text'],
      ['p_holder', 'text'],
      ['p_fence', 'bigint'],
      ['p_ttl', 'bigint'],
      ['p_now', 'bigint'],
    ],
    returns: 'jsonb',
    lock: 'FOR NO KEY UPDATE',
  },
  {
    name: 'release',
    params: [
      ['p_tenant', 'text'],
      ['p_scope', 'text'],
      ['p_holder', 'text'],
      ['p_fence', 'bigint'],
      ['p_now', 'bigint'],
    ],
    returns: 'jsonb',
    lock: 'FOR NO KEY UPDATE',
  },
  {
    name: 'takeover',
    params: [
      ['p_tenant', 'text'],
      ['p_scope', 'text'],
      ['p_holder', 'text'],
      ['p_ttl', 'bigint'],
      ['p_policy', 'text'],
      ['p_reason', 'text'],
      ['p_now', 'bigint'],
    ],
    returns: 'jsonb',
    lock: 'FOR NO KEY UPDATE',
  },
  {
    name: 'cancel',
    params: [
      ['p_tenant', 'text'],
      ['p_scope', 'text'],
      ['p_reason', 'text'],
      ['p_now', 'bigint'],
    ],
    returns: 'jsonb',
    lock: 'FOR NO KEY UPDATE',
  },
  {
    name: 'delete_scope',
    params: [
      ['p_tenant', 'text'],
      ['p_scope', 'text'],
      ['p_reason', 'text'],
      ['p_now', 'bigint'],
    ],
    returns: 'jsonb',
    lock: 'FOR NO KEY UPDATE',
  },
  {
    name: 'assert_fence',
    params: [
      ['p_tenant', 'text'],
      ['p_scope', 'text'],
      ['p_fence', 'bigint'],
      ['p_now', 'bigint'],
    ],
    returns: 'bigint',
    lock: 'FOR SHARE',
    optionalNow: true,
  },
];

function clockAfterLock(f: ScopeFunction): string {
  const declared = f.params
    .map(
      ([name, type]) =>
        `${name} ${type}${name === 'p_now' && f.optionalNow ? ' DEFAULT NULL' : ''}`,
    )
    .join(', ');
  const args = f.params
    .map(([name]) => (name === 'p_now' ? 'coalesce(p_now, @schema@.db_now())' : name))
    .join(', ');
  return `
CREATE FUNCTION @schema@.${f.name}(${declared}) RETURNS ${f.returns} LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM 1 FROM @schema@.scopes x WHERE x.tenant = p_tenant AND x.scope = p_scope ${f.lock};
  RETURN @schema@.${f.name}_under_lock(${args});
END
$fn$;
`;
}

const COMMIT_AFTER_LOCKS = `
-- The scope row locks of commits, in (tenant, scope) order: FOR NO KEY UPDATE on every commit
-- scope, FOR SHARE on a scope that is only read (the order and modes of commit and commit_batch).
CREATE FUNCTION @schema@.lock_commit_scopes(p_tenants text[], p_requests jsonb)
RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  v_lock record;
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
END
$fn$;

-- The stored outcome that answers this request as a replay: its own, or an abandonment.
CREATE FUNCTION @schema@.replayed_outcome(
  p_tenant text, p_operation text, p_request_fingerprint text
) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT o.outcome || '{"replayed": true}'::jsonb FROM @schema@.operations o
  WHERE o.tenant = p_tenant AND o.operation_id = p_operation
    AND o.request_fingerprint IN (p_request_fingerprint, 'abandoned')
$$;

CREATE FUNCTION @schema@.commit(
  p_tenant text, p_request jsonb, p_now bigint, p_request_fingerprint text
) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_answer jsonb;
BEGIN
  -- A replay waits for no lock.
  v_answer := @schema@.replayed_outcome(p_tenant, p_request->>'operationId', p_request_fingerprint);
  IF v_answer IS NOT NULL THEN
    RETURN v_answer;
  END IF;
  PERFORM @schema@.lock_commit_scopes(ARRAY[p_tenant], jsonb_build_array(p_request));
  v_answer := @schema@.commit_under_lock(p_tenant, p_request, coalesce(p_now, @schema@.db_now()),
    p_request_fingerprint);
  IF v_answer ? 'conflict' AND @schema@.replayed_outcome(p_tenant, p_request->>'operationId',
      p_request_fingerprint) IS NOT NULL THEN
    -- Abandoned while this commit waited: undo the conflict's audit entry and answer the
    -- abandonment from the retry.
    RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
      MESSAGE = 'fencegate: operationId abandoned concurrently; retry';
  END IF;
  RETURN v_answer;
END
$fn$;

CREATE FUNCTION @schema@.abandon_operation(
  p_tenant text, p_operation text, p_reason text, p_now bigint
) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint;
  v_stored jsonb;
  v_result jsonb;
BEGIN
  SELECT o.outcome INTO v_stored FROM @schema@.operations o
    WHERE o.tenant = p_tenant AND o.operation_id = p_operation;
  IF FOUND THEN
    RETURN v_stored;
  END IF;
  v_result := jsonb_build_object('outcome', 'rejected', 'operationId', p_operation,
    'replayed', false, 'error', jsonb_build_object('code', 'operation_abandoned',
      'message', format('operation %s was abandoned: no commit with this operationId applies; retry under a new operationId',
        p_operation),
      'details', jsonb_strip_nulls(jsonb_build_object('operationId', p_operation,
        'reason', p_reason))));
  v_now := coalesce(p_now, @schema@.db_now());
  -- Behind a commit storing an outcome under this id, this waits, and then answers that outcome.
  INSERT INTO @schema@.operations (tenant, operation_id, request_fingerprint, outcome, created_at)
    VALUES (p_tenant, p_operation, 'abandoned', v_result, v_now)
    ON CONFLICT DO NOTHING;
  IF NOT FOUND THEN
    SELECT o.outcome INTO v_stored FROM @schema@.operations o
      WHERE o.tenant = p_tenant AND o.operation_id = p_operation;
    RETURN v_stored;
  END IF;
  ${AUDIT_LOCK}
  INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, operation_id)
    VALUES (v_now, p_tenant, NULL, 'commit', 'rejected', 'operation_abandoned', p_operation);
  RETURN v_result;
END
$fn$;
`;

export const AFTER_LOCKS_SQL = SCOPE_FUNCTIONS.map(clockAfterLock).join('') + COMMIT_AFTER_LOCKS;
