/**
 * Intent claims (completions: postgres-sql-completion-reason.ts) as PL/pgSQL functions, one call each, with the
 * decisions of core/intent-rules.ts (same codes and details; core builds the messages) and their audit entries in
 * the same transaction.
 *
 * Concurrency: every transition of an intent holds its row lock, and takes the audit lock (see
 * postgres-sql-audit.ts) only after the row locks, right before its audit insert, so the audit
 * entries of one intent appear in seq order in the order its transitions committed. A claim
 * locks the due intents FOR UPDATE SKIP LOCKED: an intent another claim, a completion or a cancel
 * is changing right now is skipped, not waited for, so concurrent dispatchers get disjoint sets
 * and never claim one intent twice. A row that changed after the claim's snapshot is re-checked
 * against the due condition on its newest version before it is locked (READ COMMITTED).
 *
 * Due intents are found through a partial index over the intents that can still be claimed
 * (pending, unknown, claimed), in claim order, so the cost of a claim does not grow with the
 * number of intents that were delivered, failed or cancelled.
 */
import { AUDIT_LOCK } from './postgres-sql-audit.js';

export const DISPATCH_SQL = `
CREATE FUNCTION @schema@.claim_intents(
  p_tenant text, p_dispatcher text, p_ttl bigint, p_limit integer, p_targets text[], p_now bigint
) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint := coalesce(p_now, @schema@.db_now());
  v_keys text[];
  v_prior text[];
  v_claimed jsonb;
BEGIN
  -- Due: pending or unknown past its backoff, or claimed with an expired claim (isClaimable).
  SELECT array_agg(d.effect_key ORDER BY coalesce(d.next_attempt_at, d.created_at), d.effect_key),
      array_agg(d.status ORDER BY coalesce(d.next_attempt_at, d.created_at), d.effect_key)
    INTO v_keys, v_prior
    FROM (
      SELECT x.effect_key, x.status, x.next_attempt_at, x.created_at
        FROM @schema@.intents x
       WHERE x.tenant = p_tenant AND x.status IN ('pending', 'unknown', 'claimed')
         AND CASE WHEN x.status = 'claimed' THEN x.claim_expires_at <= v_now
             ELSE x.next_attempt_at IS NULL OR x.next_attempt_at <= v_now END
         AND (p_targets IS NULL OR x.target = ANY (p_targets))
       ORDER BY coalesce(x.next_attempt_at, x.created_at), x.effect_key
       LIMIT p_limit
       FOR UPDATE SKIP LOCKED
    ) d;
  IF v_keys IS NULL THEN
    RETURN '[]'::jsonb;
  END IF;

  WITH claimed AS (
    UPDATE @schema@.intents x SET status = 'claimed', claim_fence = x.claim_fence + 1,
        claimed_by = p_dispatcher, claim_expires_at = v_now + p_ttl, attempts = x.attempts + 1,
        updated_at = v_now
      WHERE x.tenant = p_tenant AND x.effect_key = ANY (v_keys)
      RETURNING x.*
  )
  SELECT jsonb_agg(to_jsonb(c) ORDER BY k.n) INTO v_claimed
    FROM claimed c JOIN unnest(v_keys) WITH ORDINALITY AS k(key, n) ON k.key = c.effect_key;

  ${AUDIT_LOCK}
  INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, operation_id, holder,
      fence, effect_key)
    SELECT v_now, p_tenant, e->>'scope', 'intent', 'claimed',
      CASE WHEN v_prior[k.n] = 'pending' THEN NULL ELSE 'from_' || v_prior[k.n] END,
      e->>'operation_id', p_dispatcher, (e->>'claim_fence')::bigint, e->>'effect_key'
    FROM jsonb_array_elements(v_claimed) WITH ORDINALITY AS k(e, n) ORDER BY k.n;
  RETURN v_claimed;
END
$fn$;
`;
