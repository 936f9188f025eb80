/**
 * The answers of the PostgreSQL functions. A refusal comes back as
 * `{"error": {code, message, details}}` (so its audit entry commits); only its code and details are
 * read: the refusal answered is built by core/refusal-messages.ts from them and from the request,
 * so PostgreSQL says what every other store says.
 */
import {
  acquireOfDeletedScope,
  acquirePolicyMismatch,
  cutoverIdConflict,
  intentNotFound,
  leaseHeld,
  leaseStaleFence,
  notHolder,
  policyConflict,
  refusalError,
  renewOfReleasedScope,
  scopeDeleted,
  scopeNotFound,
  staleClaim,
  takeoverPolicyMismatch,
  unregisteredCutoverPolicy,
  type Refusal as CoreRefusal,
} from '../../core/refusal-messages.js';
import { FencegateError, type ErrorCode, type ErrorDetails } from '../../errors.js';
import type { Grant, IntentStatus } from '../../types.js';

export type Refusal = {
  error: { code: ErrorCode; details: ErrorDetails };
};

/** The core refusal for a code and details the SQL answered; null for one it never answers. */
export type RefusalOf = (code: ErrorCode, details: ErrorDetails) => CoreRefusal | null;

function isRefusal(answer: unknown): answer is Refusal {
  return typeof answer === 'object' && answer !== null && 'error' in answer;
}

export function throwIfRefused<T>(answer: T | Refusal, refusalOf: RefusalOf): T {
  if (!isRefusal(answer)) return answer;
  const { code, details } = answer.error;
  const refusal = refusalOf(code, details);
  // A refusal no rule gives means the schema and this code disagree: never pass it on as it is.
  if (refusal === null) {
    throw new FencegateError(
      'internal_error',
      `the PostgreSQL store answered an unexpected refusal ${code}`,
    );
  }
  throw refusalError(refusal);
}

export function toGrant(answer: { grant: Grant } | Refusal, refusalOf: RefusalOf): Grant {
  const { grant } = throwIfRefused(answer, refusalOf);
  return {
    scope: grant.scope,
    fence: grant.fence,
    holder: grant.holder,
    leaseExpiresAt: grant.leaseExpiresAt,
    policyVersion: grant.policyVersion,
    reacquired: grant.reacquired,
  };
}

const fenceOf = (details: ErrorDetails): number => Number(details.currentFence);
const nullableText = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** What a lease call presented: acquire, renew, release, takeover, cancel or deleteScope. */
export interface LeaseCall {
  kind: 'acquire' | 'holder' | 'takeover' | 'operator';
  scope: string;
  holder?: string;
  fence?: number;
  policyVersion?: string;
}

export function leaseRefusal(call: LeaseCall): RefusalOf {
  return (code, details) => {
    switch (code) {
      case 'scope_not_found':
        return scopeNotFound(call.scope);
      case 'scope_deleted':
        return call.kind === 'acquire'
          ? acquireOfDeletedScope(call.scope, fenceOf(details))
          : scopeDeleted(call.scope, fenceOf(details));
      case 'policy_mismatch': {
        const pinned = String(details.currentPolicyVersion);
        return call.kind === 'acquire'
          ? acquirePolicyMismatch(call.scope, pinned, call.policyVersion ?? null)
          : takeoverPolicyMismatch(call.scope, pinned, call.policyVersion ?? '');
      }
      case 'lease_held':
        return leaseHeld(
          call.scope,
          String(details.holder),
          details.leaseExpiresAt === null ? null : Number(details.leaseExpiresAt),
          fenceOf(details),
        );
      case 'stale_fence':
        return leaseStaleFence(call.fence ?? 0, fenceOf(details));
      case 'not_holder': {
        const holder = nullableText(details.holder);
        return holder === null
          ? renewOfReleasedScope(call.scope, fenceOf(details))
          : notHolder(call.scope, call.holder ?? '', holder, fenceOf(details));
      }
      default:
        return null;
    }
  };
}

export function completionRefusal(effectKey: string, claimFence: number): RefusalOf {
  return (code, details) => {
    if (code === 'not_found') return intentNotFound(effectKey);
    if (code !== 'stale_claim') return null;
    return staleClaim(
      effectKey,
      claimFence,
      Number(details.currentClaimFence),
      details.status as IntentStatus,
    );
  };
}

export function policyRefusal(version: string): RefusalOf {
  return (code, details) =>
    code === 'policy_conflict' ? policyConflict(version, nullableText(details.digest)) : null;
}

export function cutoverRefusal(request: { cutoverId: string; toPolicy: string }): RefusalOf {
  return (code) => {
    if (code === 'operation_id_conflict') return cutoverIdConflict(request.cutoverId);
    return code === 'invalid_request' ? unregisteredCutoverPolicy(request.toPolicy) : null;
  };
}
