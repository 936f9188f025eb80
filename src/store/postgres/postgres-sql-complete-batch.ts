/**
 * Completions in batches: `complete_intents` runs `complete_intent` once per item,
 * in order, in the caller's one transaction, and answers each item's own answer (its intent or its
 * refusal, whose audit entry commits with the rest).
 */
export const COMPLETE_BATCH_SQL = `
CREATE FUNCTION @schema@.complete_intents(
  p_tenant text, p_effect_keys text[], p_claim_fences bigint[], p_outcomes text[],
  p_retryables boolean[], p_retry_afters bigint[], p_provider_refs text[], p_errors text[],
  p_reasons text[], p_now bigint
) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_answers jsonb := '[]'::jsonb;
BEGIN
  FOR i IN 1 .. coalesce(array_length(p_effect_keys, 1), 0) LOOP
    v_answers := v_answers || jsonb_build_array(@schema@.complete_intent(p_tenant,
      p_effect_keys[i], p_claim_fences[i], p_outcomes[i], p_retryables[i], p_retry_afters[i],
      p_provider_refs[i], p_errors[i], p_reasons[i], p_now));
  END LOOP;
  RETURN v_answers;
END
$fn$;
`;
