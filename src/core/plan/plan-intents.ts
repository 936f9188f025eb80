/** Intent claims and completions planned over a snapshot, with the rules of intent-rules.ts. */
import { FencegateError, isFencegateError } from '../../errors.js';
import type {
  AuditOutcome,
  ClaimIntentsRequest,
  CompleteAndClaimResult,
  CompleteIntentRequest,
  Intent,
  IntentCompletion,
  IntentCompletionResult,
} from '../../types.js';
import { pageWithinBudget } from '../answer-budget.js';
import { auditEntry } from '../audit-entry.js';
import { intentBytes } from '../intent-page.js';
import { DEFAULT_LIMITS } from '../limits.js';
import { completionAuditReason, decideCompletion, isClaimable } from '../intent-rules.js';
import { intentNotFound, refusalError } from '../refusal-messages.js';
import { refused, type RangeRef, type Snapshot, type Transition } from './transition.js';

/**
 * The open intents a claim reads: a store may list only the first `limit` due ones, and of those
 * only as many as `maxBytes` can take and one more.
 */
export function claimRange(
  now: number,
  request: ClaimIntentsRequest,
  limit: number,
  maxBytes: number = DEFAULT_LIMITS.maxPageBytes,
): RangeRef {
  return {
    type: 'openIntents',
    due: {
      at: now,
      limit,
      targets: request.targets === undefined ? null : [...request.targets],
      maxBytes,
    },
  };
}

/** The fields of an intent that place it in claim order. */
export type ClaimOrdered = Pick<Intent, 'nextAttemptAt' | 'createdAt' | 'effectKey'>;

/** Claim order: by due time (the retry's, else creation), then effect key. */
export function compareClaimOrder(a: ClaimOrdered, b: ClaimOrdered): number {
  return (
    (a.nextAttemptAt ?? a.createdAt) - (b.nextAttemptAt ?? b.createdAt) ||
    (a.effectKey < b.effectKey ? -1 : a.effectKey > b.effectKey ? 1 : 0)
  );
}

/** What bounds one claim besides its limit. */
export interface ClaimBounds {
  /** The most intents one store transaction claims (infinite when it is unbounded). */
  maxClaims?: number;
  /** The claim's byte budget of intents (intent-page.ts); DEFAULT_LIMITS.maxPageBytes if absent. */
  maxBytes?: number | undefined;
  /** The intent bytes one store transaction can rewrite (infinite when it is unbounded). */
  maxClaimBytes?: number | undefined;
}

/**
 * Due intents first (by due time, then effect key), as many as `limit` and `maxClaims` allow and
 * whose JSON as answered fits the byte budget and the transaction, at least one: a claim cut short leaves
 * the rest due.
 */
export function planClaim(
  snapshot: Snapshot,
  request: ClaimIntentsRequest,
  bounds: ClaimBounds = {},
): Transition<Intent[]> {
  const { now, tenant } = snapshot;
  const targets = request.targets === undefined ? null : new Set(request.targets);
  const limit = Math.min(request.limit, bounds.maxClaims ?? Number.POSITIVE_INFINITY);
  const maxBytes = Math.min(
    bounds.maxBytes ?? DEFAULT_LIMITS.maxPageBytes,
    bounds.maxClaimBytes ?? Number.POSITIVE_INFINITY,
  );
  const open = snapshot.list(claimRange(now, request, limit, maxBytes));
  const due: Intent[] = [];
  for (const effectKey of open) {
    const intent = snapshot.get({ type: 'intent', effectKey });
    if (intent === null || !isClaimable(intent, now)) continue;
    if (targets !== null && !targets.has(intent.target)) continue;
    due.push(intent);
  }
  due.sort(compareClaimOrder);
  const expiresAt = now + request.ttlMs;
  const transition: Transition<Intent[]> = {
    // Only the claimed intents: an intent that became due meanwhile is claimed by the next call.
    expect: [],
    put: [],
    audit: [],
    answer: { ok: true, value: [] },
  };
  // Counted as answered: claimedBy is the dispatcher's name, of a size the caller chose.
  const claimable = due.slice(0, limit).map((intent): Intent => ({
    ...intent,
    status: 'claimed',
    claimFence: intent.claimFence + 1,
    claimedBy: request.dispatcher,
    claimExpiresAt: expiresAt,
    attempts: intent.attempts + 1,
    updatedAt: now,
  }));
  const { items: claimed } = pageWithinBudget(claimable, limit, maxBytes, intentBytes);
  claimed.forEach((next, index) => {
    const before = due[index]!;
    transition.expect.push({ type: 'intent', effectKey: next.effectKey });
    transition.put.push({ type: 'intent', effectKey: next.effectKey, row: next });
    transition.audit.push(
      auditEntry({
        at: now,
        tenant,
        scope: next.scope,
        kind: 'intent',
        outcome: 'claimed',
        reason: before.status === 'pending' ? null : `from_${before.status}`,
        holder: request.dispatcher,
        fence: next.claimFence,
        operationId: next.operationId,
        effectKey: next.effectKey,
      }),
    );
  });
  transition.answer = { ok: true, value: claimed };
  return transition;
}

export function planCompletion(
  snapshot: Snapshot,
  effectKey: string,
  request: CompleteIntentRequest,
): Transition<Intent> {
  const { now, tenant } = snapshot;
  const ref = { type: 'intent' as const, effectKey };
  const intent = snapshot.get(ref);
  if (intent === null) {
    return {
      expect: [ref],
      put: [],
      audit: [],
      answer: {
        ok: false,
        error: refusalError(intentNotFound(effectKey)),
      },
    };
  }
  const decision = decideCompletion(effectKey, intent, request, now);
  const completionAudit = (outcome: AuditOutcome, reason: string | null, holder: string | null) =>
    auditEntry({
      at: now,
      tenant,
      scope: intent.scope,
      kind: 'intent',
      outcome,
      reason,
      holder,
      fence: request.claimFence,
      operationId: intent.operationId,
      effectKey,
    });
  if (!decision.ok) {
    return refused([ref], [completionAudit('rejected', decision.error.code, null)], decision.error);
  }
  const effect = decision.value;
  const providerRef = request.providerRef ?? intent.providerRef;
  const next: Intent = {
    ...intent,
    status: effect.status,
    nextAttemptAt: effect.nextAttemptAt,
    claimedBy: null,
    claimExpiresAt: null,
    unknownOutcomes: intent.unknownOutcomes + effect.unknownIncrement,
    providerRef,
    lastError: effect.status === 'delivered' ? null : (request.error ?? intent.lastError),
    updatedAt: now,
  };
  return {
    expect: [ref],
    put: [{ ...ref, row: next }],
    audit: [completionAudit(effect.status, completionAuditReason(request), intent.claimedBy)],
    answer: { ok: true, value: next },
  };
}

/**
 * A batch of completions: one completion plan each, applied in order in one store write, so a
 * later completion of the same intent sees the earlier one. Each plan answers on its own.
 */
export function planCompletions(
  completions: readonly IntentCompletion[],
): ((snapshot: Snapshot) => Transition<Intent>)[] {
  return completions.map(
    ({ effectKey, ...request }) =>
      (snapshot) =>
        planCompletion(snapshot, effectKey, request),
  );
}

type Settlement =
  { ok: true; value: unknown } | { ok: false; error: unknown } | PromiseSettledResult<unknown>;

/**
 * One completion's answer in a batch, from a batch's settlement or a promise's: its intent, or its
 * refusal (a fault as internal_error).
 */
export function completionResult(settled: Settlement): IntentCompletionResult {
  const answer = answerOf(settled, 'recording the completion failed');
  return answer.ok ? { ok: true, intent: answer.value as Intent } : answer;
}

/** A claim's answer in a batch: the claimed intents, or its refusal (a fault as internal_error). */
export function claimResult(settled: Settlement): CompleteAndClaimResult['claim'] {
  const answer = answerOf(settled, 'claiming intents failed');
  return answer.ok ? { ok: true, intents: answer.value as Intent[] } : answer;
}

function answerOf(
  settled: Settlement,
  fault: string,
): { ok: true; value: unknown } | { ok: false; error: FencegateError } {
  if ('status' in settled) {
    return answerOf(
      settled.status === 'fulfilled'
        ? { ok: true, value: settled.value }
        : { ok: false, error: settled.reason },
      fault,
    );
  }
  if (settled.ok) return settled;
  const { error } = settled;
  return {
    ok: false,
    error: isFencegateError(error)
      ? error
      : new FencegateError('internal_error', fault, {}, { cause: error }),
  };
}
