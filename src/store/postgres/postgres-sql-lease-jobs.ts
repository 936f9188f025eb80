/**
 * A lease operation's job events (types.ts LeaseJobEvents, core/lease-job-events.ts) on
 * PostgreSQL: the adapter calls this in the statement of the acquire or release, after it and only
 * when it succeeded, so the events commit with the operation. They take the scope's policy version
 * as the operation left it; a scope without one records none.
 */
export const LEASE_JOBS_SQL = `
CREATE FUNCTION @schema@.lease_job_events(
  p_tenant text, p_scope text, p_fence bigint, p_job jsonb, p_now bigint
) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  v_policy text;
BEGIN
  SELECT s.policy_version INTO v_policy FROM @schema@.scopes s
    WHERE s.tenant = p_tenant AND s.scope = p_scope;
  IF v_policy IS NULL THEN
    RETURN 0;
  END IF;
  RETURN @schema@.record_job_events(p_tenant, (
    SELECT jsonb_agg(jsonb_build_object('jobId', p_job->'jobId', 'scope', p_scope,
        'policyVersion', v_policy, 'fence', p_fence, 'state', st.state,
        'attempt', p_job->'attempt') ORDER BY st.n)
      FROM jsonb_array_elements(p_job->'states') WITH ORDINALITY AS st(state, n)), p_now);
END
$fn$;
`;
