/**
 * The fence and lease rules of SEMANTICS.md as pure decisions over a scope snapshot. Adapters that
 * run code in their transaction apply the decision they get back; the fence moves only through
 * `nextFence`, so it strictly increases by construction.
 */
import type { FencegateError } from '../errors.js';
import type { ScopeSnapshot } from './commit-check.js';
import { isWorker, mayActOnGrant, type Caller } from './grant-token.js';
import {
  acquireOfDeletedScope,
  acquirePolicyMismatch,
  grantOfAnotherToken,
  leaseHeld,
  leaseStaleFence,
  notHolder,
  refusalError,
  renewOfReleasedScope,
  scopeDeleted,
  scopeNotFound,
  takeoverOfDeletedScope,
  takeoverPolicyMismatch,
  type Refusal,
} from './refusal-messages.js';

export type LeaseDecision<T> = { ok: true; value: T } | { ok: false; error: FencegateError };

export interface GrantState {
  fence: number;
  holder: string;
  leaseExpiresAt: number | null;
  policyVersion: string | null;
}

/** A scope as the lease rules read it: with the worker token its grant is bound to (grant-token.ts). */
export type GrantedScope = ScopeSnapshot & { grantTokenId?: string | null };

export function isLive(scope: ScopeSnapshot, now: number): boolean {
  return scope.holder !== null && (scope.leaseExpiresAt === null || scope.leaseExpiresAt > now);
}

function refuse<T>(refusal: Refusal): LeaseDecision<T> {
  return { ok: false, error: refusalError(refusal) };
}

export function decideAcquire(
  scopeName: string,
  scope: GrantedScope | null,
  request: { holder: string; ttlMs: number; policyVersion?: string },
  now: number,
  caller?: Caller,
): LeaseDecision<GrantState & { reacquired: boolean }> {
  const requested = request.policyVersion ?? null;
  if (scope === null) {
    return {
      ok: true,
      value: {
        fence: 1,
        holder: request.holder,
        leaseExpiresAt: now + request.ttlMs,
        policyVersion: requested,
        reacquired: false,
      },
    };
  }
  if (scope.status === 'deleted') {
    return refuse(acquireOfDeletedScope(scopeName, scope.fence));
  }
  if (scope.policyVersion !== null && requested !== scope.policyVersion) {
    return refuse(acquirePolicyMismatch(scopeName, scope.policyVersion, requested));
  }
  if (isLive(scope, now)) {
    if (scope.holder === request.holder) {
      const bound = otherToken(scopeName, scope, caller);
      if (bound !== null) return refuse(bound);
      return {
        ok: true,
        value: {
          fence: scope.fence,
          holder: request.holder,
          leaseExpiresAt: scope.leaseExpiresAt,
          policyVersion: scope.policyVersion,
          reacquired: true,
        },
      };
    }
    return refuse(leaseHeld(scopeName, scope.holder ?? '', scope.leaseExpiresAt, scope.fence));
  }
  return {
    ok: true,
    value: {
      fence: nextFence(scope),
      holder: request.holder,
      leaseExpiresAt: now + request.ttlMs,
      policyVersion: scope.policyVersion ?? requested,
      reacquired: false,
    },
  };
}

/**
 * The fence a new grant of authority over a scope gets: one more than the scope's current fence
 * (0 for a scope that never existed). Every acquire, takeover, cancel, delete and cutover step
 * takes its fence from here, so fences only ever grow by one step per grant.
 */
export function nextFence(scope: { fence: number } | null): number {
  return (scope?.fence ?? 0) + 1;
}

/**
 * The refusal of a caller acting as the holder of a grant bound to another worker token
 * (grant-token.ts), or null when it may.
 */
function otherToken(
  scopeName: string,
  scope: GrantedScope,
  caller: Caller | undefined,
): Refusal | null {
  const bound = scope.grantTokenId ?? null;
  if (scope.holder === null || bound === null || mayActOnGrant(caller, scopeName, bound)) {
    return null;
  }
  return grantOfAnotherToken(scopeName, scope.holder, scope.fence, bound);
}

/**
 * The refusal of a commit's release (`release: true`) by a caller that may not release the
 * scope's grant, or null when it may.
 */
export function grantRefusal(
  scopeName: string,
  scope: GrantedScope,
  caller: Caller | undefined,
): FencegateError | null {
  const refusal = otherToken(scopeName, scope, caller);
  return refusal === null ? null : refusalError(refusal);
}

/**
 * Renew and release are conditional on the presented fence and holder, and on the caller's token
 * when the grant is bound to one.
 */
function checkHolder(
  scopeName: string,
  scope: GrantedScope | null,
  holder: string,
  fence: number,
  caller: Caller | undefined,
): Refusal | null {
  if (scope === null) return scopeNotFound(scopeName);
  if (fence !== scope.fence) return leaseStaleFence(fence, scope.fence);
  if (scope.status === 'deleted') return scopeDeleted(scopeName, scope.fence);
  if (scope.holder !== null && scope.holder !== holder) {
    return notHolder(scopeName, holder, scope.holder, scope.fence);
  }
  return otherToken(scopeName, scope, caller);
}

/** The caller holds the scope at its current fence (a renew, or an act of the holder). */
export function decideHolding(
  scopeName: string,
  scope: GrantedScope | null,
  request: { holder: string; fence: number },
  caller?: Caller,
): LeaseDecision<GrantedScope & { holder: string }> {
  const error = checkHolder(scopeName, scope, request.holder, request.fence, caller);
  if (error !== null) return refuse(error);
  if (scope === null || scope.holder === null) {
    return refuse(renewOfReleasedScope(scopeName, scope?.fence ?? 0));
  }
  return { ok: true, value: { ...scope, holder: scope.holder } };
}

export function decideRenew(
  scopeName: string,
  scope: GrantedScope | null,
  request: { holder: string; fence: number; ttlMs: number },
  now: number,
  caller?: Caller,
): LeaseDecision<GrantState> {
  const held = decideHolding(scopeName, scope, request, caller);
  if (!held.ok) return held;
  const { fence, holder, policyVersion } = held.value;
  return { ok: true, value: { fence, holder, leaseExpiresAt: now + request.ttlMs, policyVersion } };
}

/** ok with `true` when the scope is already released at this fence (a retried release). */
export function decideRelease(
  scopeName: string,
  scope: GrantedScope | null,
  request: { holder: string; fence: number },
  caller?: Caller,
): LeaseDecision<{ alreadyReleased: boolean }> {
  const error = checkHolder(scopeName, scope, request.holder, request.fence, caller);
  if (error !== null) return refuse(error);
  return { ok: true, value: { alreadyReleased: scope?.holder === null } };
}

/**
 * Takeover: fence+1 whatever the lease; creates an unknown scope. A deleted scope is re-created
 * only by an operator (or in process): a worker's take-over right does not undo a deletion.
 */
export function decideTakeover(
  scopeName: string,
  scope: ScopeSnapshot | null,
  request: { holder: string; ttlMs?: number; policyVersion?: string },
  now: number,
  caller?: Caller,
): LeaseDecision<GrantState> {
  if (scope?.status === 'deleted' && isWorker(caller)) {
    return refuse(takeoverOfDeletedScope(scopeName, scope.fence));
  }
  const requested = request.policyVersion ?? null;
  const pinned = scope?.policyVersion ?? null;
  if (pinned !== null && requested !== null && requested !== pinned) {
    return refuse(takeoverPolicyMismatch(scopeName, pinned, requested));
  }
  return {
    ok: true,
    value: {
      fence: nextFence(scope),
      holder: request.holder,
      leaseExpiresAt: request.ttlMs === undefined ? null : now + request.ttlMs,
      policyVersion: pinned ?? requested,
    },
  };
}

/** Cancel and delete need an existing, active scope. */
export function checkActive(scopeName: string, scope: ScopeSnapshot | null): FencegateError | null {
  if (scope === null) return refusalError(scopeNotFound(scopeName));
  if (scope.status === 'deleted') return refusalError(scopeDeleted(scopeName, scope.fence));
  return null;
}
