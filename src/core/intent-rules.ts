/**
 * Intent state transitions of SEMANTICS.md as pure decisions: which intents a claim may take, and
 * what a completion does. Only the holder of the current claim fence completes an intent.
 */
import type { FencegateError } from '../errors.js';
import type { CompleteIntentRequest, IntentCompletionCode, IntentStatus } from '../types.js';
import { refusalError, staleClaim } from './refusal-messages.js';

export interface IntentSnapshot {
  status: IntentStatus;
  claimFence: number;
  claimExpiresAt: number | null;
  nextAttemptAt: number | null;
}

/** Due for a claim: pending past its backoff, unknown (to reconcile), or a claim that expired. */
export function isClaimable(intent: IntentSnapshot, now: number): boolean {
  switch (intent.status) {
    case 'pending':
      return intent.nextAttemptAt === null || intent.nextAttemptAt <= now;
    case 'unknown':
      return intent.nextAttemptAt === null || intent.nextAttemptAt <= now;
    case 'claimed':
      return intent.claimExpiresAt !== null && intent.claimExpiresAt <= now;
    default:
      return false;
  }
}

/** Completion codes a dispatcher may give; each becomes the completion's audit reason. */
export const INTENT_COMPLETION_CODES: readonly IntentCompletionCode[] = ['target_not_allowed'];

/**
 * The audit reason of an accepted completion: the dispatcher's completion code, else
 * `retryable_failure` for a failure that returns the intent to pending, else none.
 */
export function completionAuditReason(request: CompleteIntentRequest): string | null {
  if (request.code !== undefined) return request.code;
  return request.outcome === 'failed' && request.retryable === true ? 'retryable_failure' : null;
}

export interface CompletionEffect {
  status: IntentStatus;
  nextAttemptAt: number | null;
  unknownIncrement: 0 | 1;
}

export function decideCompletion(
  effectKey: string,
  intent: IntentSnapshot,
  request: CompleteIntentRequest,
  now: number,
): { ok: true; value: CompletionEffect } | { ok: false; error: FencegateError } {
  if (intent.status !== 'claimed' || intent.claimFence !== request.claimFence) {
    return {
      ok: false,
      error: refusalError(
        staleClaim(effectKey, request.claimFence, intent.claimFence, intent.status),
      ),
    };
  }
  switch (request.outcome) {
    case 'delivered':
      return { ok: true, value: { status: 'delivered', nextAttemptAt: null, unknownIncrement: 0 } };
    case 'failed':
      return request.retryable === true
        ? {
            ok: true,
            value: {
              status: 'pending',
              nextAttemptAt: now + (request.retryAfterMs ?? 0),
              unknownIncrement: 0,
            },
          }
        : { ok: true, value: { status: 'failed', nextAttemptAt: null, unknownIncrement: 0 } };
    case 'unknown':
      return {
        ok: true,
        value: {
          status: 'unknown',
          nextAttemptAt: now + (request.retryAfterMs ?? 0),
          unknownIncrement: 1,
        },
      };
    case 'needs_attention':
      return {
        ok: true,
        value: { status: 'needs_attention', nextAttemptAt: null, unknownIncrement: 0 },
      };
  }
}
