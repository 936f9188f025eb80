/**
 * The answers of the lease functions (postgres-sql-leases.ts): a refusal comes back as
 * `{"error": {code, message, details}}` (so its audit entry commits) and is thrown here.
 */
import { FencegateError } from '../../errors.js';
import type { Grant } from '../../types.js';

export type Refusal = {
  error: { code: FencegateError['code']; message: string; details: Record<string, unknown> };
};

function isRefusal(answer: unknown): answer is Refusal {
  return typeof answer === 'object' && answer !== null && 'error' in answer;
}

export function throwIfRefused<T>(answer: T | Refusal): T {
  if (isRefusal(answer)) {
    const { code, message, details } = answer.error;
    throw new FencegateError(code, message, details);
  }
  return answer;
}

export function toGrant(answer: { grant: Grant } | Refusal): Grant {
  const { grant } = throwIfRefused(answer);
  return {
    scope: grant.scope,
    fence: grant.fence,
    holder: grant.holder,
    leaseExpiresAt: grant.leaseExpiresAt,
    policyVersion: grant.policyVersion,
    reacquired: grant.reacquired,
  };
}
