/**
 * Group commit of plain commits in a fixed number of statements per batch.
 *
 * `commit_batch` runs `commit` once per item: about a dozen statements each (replay lookup,
 * locks, scope, record, write, outcome and audit inserts). When every commit of a batch is plain
 * (postgres-plain-batch.ts: no dependency reads, no intents, no deletions, each operationId and
 * each written record once in the batch), the items cannot see each other's effects, so a batch
 * decides them all from one read of their state and writes them with one statement per table:
 *
 *   lock the scope rows (one statement, the order and mode of every other transaction);
 *   read stored outcomes and scope rows of all items (one statement), current records of all
 *   writes (one statement); decide each item in order (checks 1 to 6 and 8, the released texts);
 *   update and insert records; take the audit lock; insert outcomes; insert audit entries in item
 *   order (one statement each).
 *
 * Answers, stored outcomes and audit entries are those of the items run one after the other;
 * the store time is read once, after the locks. An operationId stored by another transaction
 * after the read (an abandonment) makes the outcome insert come up short: the whole call is then
 * retried as a serialization failure, as in `commit`.
 *
 * Values and fingerprints travel as text arrays, never through JSON.
 */
import { AUDIT_LOCK } from './postgres-sql-audit.js';
import { COMMIT_SQL } from './postgres-sql-commit.js';

/** Checks 2 to 6 of the released commit function, on the same variable names. */
const SCOPE_CHECKS = COMMIT_SQL.slice(
  COMMIT_SQL.indexOf('  -- Checks 2 to 6.'),
  COMMIT_SQL.indexOf('  -- Check 7:'),
);

export const PLAIN_BATCH_SQL = `
CREATE FUNCTION @schema@.commit_plain_batch(
  p_tenants text[], p_scopes text[], p_fences bigint[], p_operations text[], p_tasks text[],
  p_policies text[], p_request_fingerprints text[],
  p_write_items integer[], p_names text[], p_expects bigint[], p_values text[],
  p_value_fingerprints text[], p_now bigint
) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint;
  v_items integer := cardinality(p_tenants);
  v_write_count integer := cardinality(p_write_items);
  -- Per item: stored outcome, scope row.
  i_stored_fingerprint text[];
  i_stored_outcome jsonb[];
  i_found boolean[];
  i_fence bigint[];
  i_holder text[];
  i_lease bigint[];
  i_policy text[];
  i_status text[];
  -- Per write: the record's current state.
  w_exists boolean[];
  w_live boolean[];
  w_revision bigint[];
  w_incarnation bigint[];
  -- The variables of the released checks.
  v_scope text;
  v_fence bigint;
  v_policy text;
  v_found boolean;
  v_s_fence bigint;
  v_s_holder text;
  v_s_lease bigint;
  v_s_policy text;
  v_s_status text;
  v_rejection jsonb;
  v_result jsonb;
  v_result_records jsonb;
  v_audit_records jsonb;
  v_first integer;
  k integer := 1;
  v_new_revision bigint;
  v_new_incarnation bigint;
  v_count integer;
  v_answers jsonb[] := '{}';
  -- Counts of rows to write; arrays grow by element assignment (in place), not by ||.
  v_r integer := 0;
  v_o integer := 0;
  v_a integer := 0;
  -- Rows to write.
  r_update boolean[] := '{}';
  r_tenants text[] := '{}';
  r_scopes text[] := '{}';
  r_names text[] := '{}';
  r_values text[] := '{}';
  r_revisions bigint[] := '{}';
  r_incarnations bigint[] := '{}';
  r_fingerprints text[] := '{}';
  o_tenants text[] := '{}';
  o_operations text[] := '{}';
  o_fingerprints text[] := '{}';
  o_outcomes jsonb[] := '{}';
  a_tenants text[] := '{}';
  a_scopes text[] := '{}';
  a_outcomes text[] := '{}';
  a_reasons text[] := '{}';
  a_tasks text[] := '{}';
  a_operations text[] := '{}';
  a_holders text[] := '{}';
  a_policies text[] := '{}';
  a_fences bigint[] := '{}';
  a_current_fences bigint[] := '{}';
  a_leases bigint[] := '{}';
  a_records jsonb[] := '{}';
BEGIN
  -- The scope rows, FOR NO KEY UPDATE in (tenant, scope) order (rows are locked as the sort
  -- hands them out): the order and mode of lock_commit_scopes, in one statement.
  PERFORM 1 FROM @schema@.scopes s
    WHERE (s.tenant, s.scope) IN (SELECT * FROM unnest(p_tenants, p_scopes))
    ORDER BY s.tenant, s.scope
    FOR NO KEY UPDATE OF s;
  v_now := coalesce(p_now, @schema@.db_now());

  SELECT array_agg(o.request_fingerprint ORDER BY i.n), array_agg(o.outcome ORDER BY i.n),
      array_agg(s.scope IS NOT NULL ORDER BY i.n), array_agg(s.fence ORDER BY i.n),
      array_agg(s.holder ORDER BY i.n), array_agg(s.lease_expires_at ORDER BY i.n),
      array_agg(s.policy_version ORDER BY i.n), array_agg(s.status ORDER BY i.n)
    INTO i_stored_fingerprint, i_stored_outcome, i_found, i_fence, i_holder, i_lease, i_policy,
      i_status
    FROM unnest(p_tenants, p_scopes, p_operations) WITH ORDINALITY AS i(tenant, scope, operation, n)
    LEFT JOIN @schema@.operations o ON o.tenant = i.tenant AND o.operation_id = i.operation
    LEFT JOIN @schema@.scopes s ON s.tenant = i.tenant AND s.scope = i.scope;

  SELECT array_agg(x.name IS NOT NULL ORDER BY w.n), array_agg(coalesce(x.live, false) ORDER BY w.n),
      array_agg(coalesce(x.revision, 0) ORDER BY w.n), array_agg(coalesce(x.incarnation, 0) ORDER BY w.n)
    INTO w_exists, w_live, w_revision, w_incarnation
    FROM unnest(p_write_items, p_names) WITH ORDINALITY AS w(item, name, n)
    LEFT JOIN @schema@.records x ON x.tenant = p_tenants[w.item] AND x.scope = p_scopes[w.item]
      AND x.name = w.name;

  FOR i IN 1 .. v_items LOOP
    v_first := k;
    WHILE k <= v_write_count AND p_write_items[k] = i LOOP
      k := k + 1;
    END LOOP;
    -- Check 1: the operationId's stored outcome (its own request's, or an abandonment).
    IF i_stored_fingerprint[i] IS NOT NULL THEN
      IF i_stored_fingerprint[i] IN (p_request_fingerprints[i], 'abandoned') THEN
        v_answers[i] := i_stored_outcome[i] || '{"replayed": true}'::jsonb;
      ELSE
        v_answers[i] := '{"conflict": true}'::jsonb;
        v_a := v_a + 1;
        a_tenants[v_a] := p_tenants[i]; a_scopes[v_a] := p_scopes[i];
        a_outcomes[v_a] := 'rejected'; a_reasons[v_a] := 'operation_id_conflict';
        a_tasks[v_a] := p_tasks[i]; a_operations[v_a] := p_operations[i];
        a_holders[v_a] := NULL; a_policies[v_a] := NULL;
        a_fences[v_a] := p_fences[i]; a_current_fences[v_a] := NULL;
        a_leases[v_a] := NULL; a_records[v_a] := NULL;
      END IF;
      CONTINUE;
    END IF;

    v_scope := p_scopes[i];
    v_fence := p_fences[i];
    v_policy := p_policies[i];
    v_found := i_found[i];
    v_s_fence := i_fence[i];
    v_s_holder := i_holder[i];
    v_s_lease := i_lease[i];
    v_s_policy := i_policy[i];
    v_s_status := i_status[i];
    v_rejection := NULL;
${SCOPE_CHECKS}
    -- Check 8.
    FOR j IN v_first .. k - 1 LOOP
      IF v_rejection IS NULL AND p_expects[j] <> w_revision[j] THEN
        v_rejection := @schema@.check_write(p_tenants[i], v_scope, p_names[j], p_expects[j],
          false, w_live[j], w_revision[j], w_incarnation[j]);
      END IF;
    END LOOP;

    v_audit_records := '[]';
    IF v_rejection IS NOT NULL THEN
      FOR j IN v_first .. k - 1 LOOP
        v_audit_records := v_audit_records || jsonb_build_object(
          'name', p_names[j], 'expected', p_expects[j], 'actual', w_revision[j], 'resulting', NULL,
          'fingerprint', NULL, 'deleted', false);
      END LOOP;
      v_result := jsonb_build_object('outcome', 'rejected', 'operationId', p_operations[i],
        'replayed', false, 'error', v_rejection);
    ELSE
      v_result_records := '[]';
      FOR j IN v_first .. k - 1 LOOP
        v_new_revision := w_revision[j] + 1;
        -- A write to an absent record starts a new lifetime at this revision.
        v_new_incarnation := CASE WHEN w_live[j] THEN w_incarnation[j] ELSE v_new_revision END;
        v_r := v_r + 1;
        r_update[v_r] := w_exists[j];
        r_tenants[v_r] := p_tenants[i]; r_scopes[v_r] := v_scope;
        r_names[v_r] := p_names[j]; r_values[v_r] := p_values[j];
        r_revisions[v_r] := v_new_revision;
        r_incarnations[v_r] := v_new_incarnation;
        r_fingerprints[v_r] := p_value_fingerprints[j];
        v_result_records := v_result_records || jsonb_build_object('name', p_names[j],
          'revision', v_new_revision, 'incarnation', v_new_incarnation,
          'fingerprint', p_value_fingerprints[j]);
        v_audit_records := v_audit_records || jsonb_build_object('name', p_names[j],
          'expected', p_expects[j], 'actual', w_revision[j], 'resulting', v_new_revision,
          'fingerprint', p_value_fingerprints[j], 'deleted', false);
      END LOOP;
      v_result := jsonb_build_object('outcome', 'committed', 'operationId', p_operations[i],
        'scope', v_scope, 'fence', v_fence, 'records', v_result_records,
        'intents', '[]'::jsonb, 'replayed', false);
    END IF;
    v_answers[i] := v_result;
    v_o := v_o + 1;
    o_tenants[v_o] := p_tenants[i]; o_operations[v_o] := p_operations[i];
    o_fingerprints[v_o] := p_request_fingerprints[i];
    o_outcomes[v_o] := v_result;
    v_a := v_a + 1;
    a_tenants[v_a] := p_tenants[i]; a_scopes[v_a] := v_scope;
    a_outcomes[v_a] := v_result->>'outcome';
    a_reasons[v_a] := v_rejection->>'code';
    a_tasks[v_a] := p_tasks[i]; a_operations[v_a] := p_operations[i];
    a_holders[v_a] := v_s_holder; a_policies[v_a] := coalesce(v_policy, v_s_policy);
    a_fences[v_a] := v_fence; a_current_fences[v_a] := v_s_fence;
    a_leases[v_a] := v_s_lease; a_records[v_a] := v_audit_records;
  END LOOP;

  IF v_r > 0 THEN
    UPDATE @schema@.records r SET live = true, value = u.value, revision = u.revision,
        incarnation = u.incarnation, fingerprint = u.fingerprint, updated_at = v_now
      FROM unnest(r_update, r_tenants, r_scopes, r_names, r_values, r_revisions, r_incarnations,
          r_fingerprints) AS u(existing, tenant, scope, name, value, revision, incarnation, fingerprint)
      WHERE u.existing AND r.tenant = u.tenant AND r.scope = u.scope AND r.name = u.name;
    INSERT INTO @schema@.records (tenant, scope, name, live, value, revision, incarnation,
        fingerprint, updated_at)
      SELECT u.tenant, u.scope, u.name, true, u.value, u.revision, u.incarnation, u.fingerprint, v_now
      FROM unnest(r_update, r_tenants, r_scopes, r_names, r_values, r_revisions, r_incarnations,
          r_fingerprints) AS u(existing, tenant, scope, name, value, revision, incarnation, fingerprint)
      WHERE NOT u.existing;
  END IF;

  IF v_a > 0 THEN
    ${AUDIT_LOCK}
  END IF;
  IF v_o > 0 THEN
    INSERT INTO @schema@.operations (tenant, operation_id, request_fingerprint, outcome, created_at)
      SELECT o.tenant, o.operation, o.fingerprint, o.outcome, v_now
      FROM unnest(o_tenants, o_operations, o_fingerprints, o_outcomes)
        AS o(tenant, operation, fingerprint, outcome)
      ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    IF v_count <> v_o THEN
      RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
        MESSAGE = 'fencegate: operationId stored concurrently; retry';
    END IF;
  END IF;
  IF v_a > 0 THEN
    INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, task_id, operation_id,
        holder, policy_version, fence, current_fence, lease_expires_at, records)
      SELECT v_now, a.tenant, a.scope, 'commit', a.outcome, a.reason, a.task, a.operation, a.holder,
        a.policy, a.fence, a.current_fence, a.lease, a.records
      FROM unnest(a_tenants, a_scopes, a_outcomes, a_reasons, a_tasks, a_operations, a_holders,
          a_policies, a_fences, a_current_fences, a_leases, a_records) WITH ORDINALITY
        AS a(tenant, scope, outcome, reason, task, operation, holder, policy, fence, current_fence,
          lease, records, n)
      ORDER BY a.n;
  END IF;
  RETURN to_jsonb(v_answers);
END
$fn$;
`;
