/**
 * The fence and lease rules of SEMANTICS.md as pure decisions over a scope snapshot. Adapters that
 * run code in their transaction apply the decision they get back; the fence moves only through
 * `nextGrant`, so it strictly increases by construction.
 */
import { FencegateError } from '../errors.js';
import type { ScopeSnapshot } from './commit-check.js';

export type LeaseDecision<T> = { ok: true; value: T } | { ok: false; error: FencegateError };

export interface GrantState {
  fence: number;
  holder: string;
  leaseExpiresAt: number | null;
  policyVersion: string | null;
}

export function isLive(scope: ScopeSnapshot, now: number): boolean {
  return scope.holder !== null && (scope.leaseExpiresAt === null || scope.leaseExpiresAt > now);
}

function refuse<T>(error: FencegateError): LeaseDecision<T> {
  return { ok: false, error };
}

export function decideAcquire(
  scopeName: string,
  scope: ScopeSnapshot | null,
  request: { holder: string; ttlMs: number; policyVersion?: string },
  now: number,
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
    return refuse(
      new FencegateError(
        'scope_deleted',
        `scope ${scopeName} is deleted; an operator takeover re-creates it`,
        {
          currentFence: scope.fence,
        },
      ),
    );
  }
  if (scope.policyVersion !== null && requested !== scope.policyVersion) {
    return refuse(
      new FencegateError(
        'policy_mismatch',
        `scope ${scopeName} is pinned to policy ${scope.policyVersion}; this acquire names ${requested ?? 'no policy'}`,
        { currentPolicyVersion: scope.policyVersion },
      ),
    );
  }
  if (isLive(scope, now)) {
    if (scope.holder === request.holder) {
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
    return refuse(
      new FencegateError('lease_held', `scope ${scopeName} is held by ${scope.holder}`, {
        holder: scope.holder,
        leaseExpiresAt: scope.leaseExpiresAt,
        currentFence: scope.fence,
      }),
    );
  }
  return {
    ok: true,
    value: {
      fence: scope.fence + 1,
      holder: request.holder,
      leaseExpiresAt: now + request.ttlMs,
      policyVersion: scope.policyVersion ?? requested,
      reacquired: false,
    },
  };
}

/** Renew and release are conditional on the presented fence and holder. */
function checkHolder(
  scopeName: string,
  scope: ScopeSnapshot | null,
  holder: string,
  fence: number,
): FencegateError | null {
  if (scope === null) {
    return new FencegateError('scope_not_found', `scope ${scopeName} does not exist`, {
      scope: scopeName,
    });
  }
  if (fence !== scope.fence) {
    return new FencegateError(
      'stale_fence',
      `fence ${fence} is not the scope's fence ${scope.fence}`,
      {
        currentFence: scope.fence,
      },
    );
  }
  if (scope.status === 'deleted') {
    return new FencegateError('scope_deleted', `scope ${scopeName} is deleted`, {
      currentFence: scope.fence,
    });
  }
  if (scope.holder !== null && scope.holder !== holder) {
    return new FencegateError('not_holder', `${holder} does not hold scope ${scopeName}`, {
      currentFence: scope.fence,
      holder: scope.holder,
    });
  }
  return null;
}

export function decideRenew(
  scopeName: string,
  scope: ScopeSnapshot | null,
  request: { holder: string; fence: number; ttlMs: number },
  now: number,
): LeaseDecision<GrantState> {
  const error = checkHolder(scopeName, scope, request.holder, request.fence);
  if (error !== null) return refuse(error);
  if (scope === null || scope.holder === null) {
    return refuse(
      new FencegateError(
        'not_holder',
        `scope ${scopeName} was released or cancelled; acquire it again`,
        {
          currentFence: scope?.fence ?? 0,
          holder: null,
        },
      ),
    );
  }
  return {
    ok: true,
    value: {
      fence: scope.fence,
      holder: scope.holder,
      leaseExpiresAt: now + request.ttlMs,
      policyVersion: scope.policyVersion,
    },
  };
}

/** ok with `true` when the scope is already released at this fence (a retried release). */
export function decideRelease(
  scopeName: string,
  scope: ScopeSnapshot | null,
  request: { holder: string; fence: number },
): LeaseDecision<{ alreadyReleased: boolean }> {
  const error = checkHolder(scopeName, scope, request.holder, request.fence);
  if (error !== null) return refuse(error);
  return { ok: true, value: { alreadyReleased: scope?.holder === null } };
}

/** Takeover: fence+1 whatever the lease; re-creates a deleted or unknown scope. */
export function decideTakeover(
  scopeName: string,
  scope: ScopeSnapshot | null,
  request: { holder: string; ttlMs?: number; policyVersion?: string },
  now: number,
): LeaseDecision<GrantState> {
  const requested = request.policyVersion ?? null;
  const pinned = scope?.policyVersion ?? null;
  if (pinned !== null && requested !== null && requested !== pinned) {
    return refuse(
      new FencegateError(
        'policy_mismatch',
        `scope ${scopeName} is pinned to policy ${pinned}; use a cutover to move it to ${requested}`,
        { currentPolicyVersion: pinned },
      ),
    );
  }
  return {
    ok: true,
    value: {
      fence: (scope?.fence ?? 0) + 1,
      holder: request.holder,
      leaseExpiresAt: request.ttlMs === undefined ? null : now + request.ttlMs,
      policyVersion: pinned ?? requested,
    },
  };
}

/** Cancel and delete need an existing, active scope. */
export function checkActive(scopeName: string, scope: ScopeSnapshot | null): FencegateError | null {
  if (scope === null) {
    return new FencegateError('scope_not_found', `scope ${scopeName} does not exist`, {
      scope: scopeName,
    });
  }
  if (scope.status === 'deleted') {
    return new FencegateError('scope_deleted', `scope ${scopeName} is deleted`, {
      currentFence: scope.fence,
    });
  }
  return null;
}
