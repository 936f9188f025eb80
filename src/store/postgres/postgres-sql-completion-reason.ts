/**
 * Intent completions: `complete_intent` takes the completion's audit reason from the
 * caller (core/intent-rules.ts `completionAuditReason`: a dispatcher's completion code such as
 * `target_not_allowed`, or `retryable_failure`), so the reasons are spelled once, in core. It also
 * reads store time only once it holds the intent's row lock: a completion that waited behind a
 * claim or a cancel is audited at the time it was decided, not the time it arrived.
 */
import { AUDIT_LOCK } from './postgres-sql-audit.js';

export const COMPLETION_REASON_SQL = `
CREATE FUNCTION @schema@.complete_intent(
  p_tenant text, p_effect_key text, p_claim_fence bigint, p_outcome text, p_retryable boolean,
  p_retry_after bigint, p_provider_ref text, p_error text, p_reason text, p_now bigint
) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint;
  v_intent @schema@.intents%ROWTYPE;
  v_holder text;
  v_status text;
  v_next bigint;
  v_unknown integer := 0;
BEGIN
  SELECT * INTO v_intent FROM @schema@.intents x
    WHERE x.tenant = p_tenant AND x.effect_key = p_effect_key FOR UPDATE;
  IF NOT FOUND THEN
    RETURN @schema@.refusal('not_found', format('intent %s does not exist', p_effect_key),
      jsonb_build_object('effectKey', p_effect_key));
  END IF;
  -- Store time once the row lock is held.
  v_now := coalesce(p_now, @schema@.db_now());

  -- Only the current claim completes an intent: a paused dispatcher's late outcome is refused.
  IF v_intent.status <> 'claimed' OR v_intent.claim_fence <> p_claim_fence THEN
    ${AUDIT_LOCK}
    INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, operation_id, fence,
        effect_key)
      VALUES (v_now, p_tenant, v_intent.scope, 'intent', 'rejected', 'stale_claim',
        v_intent.operation_id, p_claim_fence, p_effect_key);
    RETURN @schema@.refusal('stale_claim',
      format('claim fence %s of %s is not current (claim fence %s, status %s)', p_claim_fence,
        p_effect_key, v_intent.claim_fence, v_intent.status),
      jsonb_build_object('currentClaimFence', v_intent.claim_fence, 'status', v_intent.status));
  END IF;

  CASE p_outcome
    WHEN 'delivered' THEN
      v_status := 'delivered';
    WHEN 'failed' THEN
      IF p_retryable IS TRUE THEN
        v_status := 'pending';
        v_next := v_now + coalesce(p_retry_after, 0);
      ELSE
        v_status := 'failed';
      END IF;
    WHEN 'unknown' THEN
      v_status := 'unknown';
      v_next := v_now + coalesce(p_retry_after, 0);
      v_unknown := 1;
    WHEN 'needs_attention' THEN
      v_status := 'needs_attention';
    ELSE
      RAISE EXCEPTION 'fencegate: unknown intent outcome %', p_outcome;
  END CASE;

  v_holder := v_intent.claimed_by;
  UPDATE @schema@.intents x SET status = v_status, next_attempt_at = v_next, claimed_by = NULL,
      claim_expires_at = NULL, unknown_outcomes = x.unknown_outcomes + v_unknown,
      provider_ref = coalesce(p_provider_ref, x.provider_ref),
      last_error = CASE WHEN v_status = 'delivered' THEN NULL ELSE coalesce(p_error, x.last_error) END,
      updated_at = v_now
    WHERE x.tenant = p_tenant AND x.effect_key = p_effect_key
    RETURNING x.* INTO v_intent;
  ${AUDIT_LOCK}
  INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, operation_id, holder, fence,
      effect_key)
    VALUES (v_now, p_tenant, v_intent.scope, 'intent', v_status, p_reason, v_intent.operation_id,
      v_holder, p_claim_fence, p_effect_key);
  RETURN jsonb_build_object('intent', to_jsonb(v_intent));
END
$fn$;
`;
