/**
 * Every refusal a store decides, with its code, message and details, built in one place. The rules
 * (lease-rules.ts, commit-check.ts, intent-rules.ts, the planners) and a store that decides in its
 * own language (PostgreSQL answers a code and details) both build their refusals here, so every
 * store says the same words for the same situation; the conformance suite compares them.
 *
 * A commit rejection is stored under its operationId and answered again by replays and
 * getOperation, where the request is no longer at hand: its message is rendered from its code and
 * details alone (commitRejection).
 */
import { FencegateError, type ErrorCode, type ErrorDetails } from '../errors.js';
import type { CommitRejection, IntentStatus } from '../types.js';

export interface Refusal<C extends ErrorCode = ErrorCode> {
  code: C;
  message: string;
  details: ErrorDetails;
}

export function refusalError(refusal: Refusal): FencegateError {
  return new FencegateError(refusal.code, refusal.message, refusal.details);
}

// Leases (core/lease-rules.ts): the request names the scope and the holder.

export function scopeNotFound(scope: string): Refusal {
  return { code: 'scope_not_found', message: `scope ${scope} does not exist`, details: { scope } };
}

export function scopeDeleted(scope: string, currentFence: number): Refusal {
  return {
    code: 'scope_deleted',
    message: `scope ${scope} is deleted`,
    details: { currentFence },
  };
}

export function acquireOfDeletedScope(scope: string, currentFence: number): Refusal {
  return {
    code: 'scope_deleted',
    message: `scope ${scope} is deleted; an operator takeover re-creates it`,
    details: { currentFence },
  };
}

export function acquirePolicyMismatch(
  scope: string,
  currentPolicyVersion: string,
  requested: string | null,
): Refusal {
  return {
    code: 'policy_mismatch',
    message: `scope ${scope} is pinned to policy ${currentPolicyVersion}; this acquire names ${requested ?? 'no policy'}`,
    details: { currentPolicyVersion },
  };
}

export function takeoverPolicyMismatch(
  scope: string,
  currentPolicyVersion: string,
  requested: string,
): Refusal {
  return {
    code: 'policy_mismatch',
    message: `scope ${scope} is pinned to policy ${currentPolicyVersion}; use a cutover to move it to ${requested}`,
    details: { currentPolicyVersion },
  };
}

export function leaseHeld(
  scope: string,
  holder: string,
  leaseExpiresAt: number | null,
  currentFence: number,
): Refusal {
  return {
    code: 'lease_held',
    message: `scope ${scope} is held by ${holder}`,
    details: { holder, leaseExpiresAt, currentFence },
  };
}

export function leaseStaleFence(fence: number, currentFence: number): Refusal {
  return {
    code: 'stale_fence',
    message: `fence ${fence} is not the scope's fence ${currentFence}`,
    details: { currentFence },
  };
}

export function notHolder(
  scope: string,
  presentedHolder: string,
  holder: string,
  currentFence: number,
): Refusal {
  return {
    code: 'not_holder',
    message: `${presentedHolder} does not hold scope ${scope}`,
    details: { currentFence, holder },
  };
}

/** The holder is named, but the grant is bound to another worker token (grant-token.ts). */
export function grantOfAnotherToken(
  scope: string,
  holder: string,
  currentFence: number,
  grantTokenId: string,
): Refusal {
  return {
    code: 'not_holder',
    message: `the grant of scope ${scope} to ${holder} was made with worker token ${grantTokenId}: renew, release or acquire it again with that token, an operator token, or a worker token whose mayTakeOver covers the scope`,
    details: { currentFence, holder, grantTokenId },
  };
}

export function takeoverOfDeletedScope(scope: string, currentFence: number): Refusal {
  return {
    code: 'scope_deleted',
    message: `scope ${scope} is deleted; only an operator re-creates it, with a takeover`,
    details: { currentFence },
  };
}

export function renewOfReleasedScope(scope: string, currentFence: number): Refusal {
  return {
    code: 'not_holder',
    message: `scope ${scope} was released or cancelled; acquire it again`,
    details: { currentFence, holder: null },
  };
}

// Commits (core/commit-check.ts): rendered from the code and the details alone.

interface CommitRejectionForm {
  /** The details' fields, in the order they are answered. */
  fields: readonly string[];
  message(details: ErrorDetails): string;
}

const COMMIT_REJECTIONS: Record<CommitRejection['code'], CommitRejectionForm> = {
  scope_not_found: {
    fields: ['scope'],
    message: (d) => `scope ${text(d.scope)} does not exist`,
  },
  scope_deleted: {
    fields: ['scope', 'currentFence'],
    message: (d) => `scope ${text(d.scope)} is deleted`,
  },
  stale_fence: {
    fields: ['currentFence'],
    message: (d) => `the presented fence is not the scope's current fence ${text(d.currentFence)}`,
  },
  authority_revoked: {
    fields: ['currentFence', 'holder'],
    message: (d) =>
      `the scope has no holder at fence ${text(d.currentFence)}: it was released or cancelled`,
  },
  lease_expired: {
    fields: ['currentFence', 'holder', 'leaseExpiresAt'],
    message: (d) =>
      `the lease of ${text(d.holder)} at fence ${text(d.currentFence)} expired at ${text(d.leaseExpiresAt)} by store time`,
  },
  stale_policy: {
    fields: ['currentPolicyVersion', 'currentFence'],
    message: (d) =>
      `the commit names another policy than the scope's policy ${text(d.currentPolicyVersion)}`,
  },
  stale_dependency: {
    fields: ['scope', 'name', 'expected', 'actual'],
    message: (d) =>
      `dependency ${text(d.scope)}/${text(d.name)} was read at revision ${text(d.expected)}; it is now ${text(d.actual)}`,
  },
  stale_revision: {
    fields: ['name', 'expected', 'actual', 'exists'],
    // A delete of an absent record at its current revision: the only stale_revision with
    // expected === actual.
    message: (d) =>
      d.exists === false && d.expected === d.actual
        ? `record ${text(d.name)} does not exist; there is nothing to delete`
        : `record ${text(d.name)} was expected at revision ${text(d.expected)}; it is at revision ${text(d.actual)}`,
  },
  incarnation_changed: {
    fields: ['name', 'expected', 'actual', 'exists', 'incarnation'],
    message: (d) =>
      `record ${text(d.name)} was read at revision ${text(d.expected)} in a lifetime that has ended; it is now at revision ${text(d.actual)}`,
  },
  duplicate_effect: {
    fields: ['effectKey'],
    message: (d) => `effect ${text(d.effectKey)} was committed before`,
  },
  operation_abandoned: {
    fields: ['operationId', 'reason'],
    message: (d) =>
      `operation ${text(d.operationId)} was abandoned: no commit with this operationId applies; retry under a new operationId`,
  },
};

function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * A commit rejection: its details (the fields of its code, in their order) and its message, a
 * rendering of them.
 */
export function commitRejection(
  code: CommitRejection['code'],
  details: ErrorDetails,
): CommitRejection {
  const form = COMMIT_REJECTIONS[code];
  const answered: ErrorDetails = {};
  for (const field of form.fields) if (field in details) answered[field] = details[field];
  return { code, message: form.message(answered), details: answered };
}

export function operationIdConflict(operationId: string): Refusal {
  return {
    code: 'operation_id_conflict',
    message:
      `operationId ${operationId} already has an outcome for a different request: an operationId ` +
      `names one request of the tenant forever (a repeat gets the stored outcome); send a new ` +
      `request under a new operationId (one made of the scope, the fence and a step cannot ` +
      `collide), or read its stored outcome: GET /v1/operations/${encodeURIComponent(operationId)}`,
    details: { operationId },
  };
}

// Intents (core/intent-rules.ts, core/plan/plan-intents.ts).

export function intentNotFound(effectKey: string): Refusal {
  return {
    code: 'not_found',
    message: `intent ${effectKey} does not exist`,
    details: { effectKey },
  };
}

export function staleClaim(
  effectKey: string,
  claimFence: number,
  currentClaimFence: number,
  status: IntentStatus,
): Refusal {
  return {
    code: 'stale_claim',
    message: `claim fence ${claimFence} of ${effectKey} is not current (claim fence ${currentClaimFence}, status ${status})`,
    details: { currentClaimFence, status },
  };
}

// Policies and cutovers (core/plan/plan-cutover.ts).

export function policyConflict(version: string, digest: string | null): Refusal {
  return {
    code: 'policy_conflict',
    message: `policy ${version} is registered with digest ${digest ?? 'none'}; a version never changes`,
    details: { version, digest },
  };
}

export function unregisteredCutoverPolicy(toPolicy: string): Refusal {
  return {
    code: 'invalid_request',
    message: `toPolicy ${toPolicy} is not registered; register it with POST /v1/policies first`,
    details: { field: 'toPolicy' },
  };
}

export function cutoverIdConflict(cutoverId: string): Refusal {
  return {
    code: 'operation_id_conflict',
    message: `cutoverId ${cutoverId} already names a different cutover`,
    details: { cutoverId },
  };
}

// Rollouts (core/plan/plan-rollout.ts): the request names the rollout.

export function unregisteredRolloutPolicy(
  field: 'fromPolicy' | 'toPolicy',
  version: string,
): Refusal {
  return {
    code: 'invalid_request',
    message: `${field} ${version} is not registered; register it with POST /v1/policies first`,
    details: { field },
  };
}

export function rolloutIdConflict(rolloutId: string): Refusal {
  return {
    code: 'operation_id_conflict',
    message: `rolloutId ${rolloutId} already names a different rollout`,
    details: { rolloutId },
  };
}

export function rolloutNotFound(rolloutId: string): Refusal {
  return {
    code: 'not_found',
    message: `rollout ${rolloutId} does not exist`,
    details: { rolloutId },
  };
}

/** A start or a cutover whose selection meets an active rollout's. */
export function rolloutOverlap(activeRolloutId: string): Refusal {
  return {
    code: 'rollout_conflict',
    message: `the selection overlaps active rollout ${activeRolloutId}; roll it back or let it complete first`,
    details: { reason: 'overlap', rolloutId: activeRolloutId },
  };
}

/** A rollout whose selection overlaps a plain cutover that is still moving scopes. */
export function cutoverOverlap(cutoverId: string): Refusal {
  return {
    code: 'rollout_conflict',
    message: `the selection overlaps cutover ${cutoverId}, which is still moving scopes; resume it (send it again) until it completes, then start the rollout`,
    details: { reason: 'overlap', cutoverId },
  };
}

/** Where a rollout stands: what a refused command is told, so it can decide without a read. */
export interface RolloutStanding {
  rolloutId: string;
  status: string;
  step: number;
  percent: number;
  revision: number;
}

/** A change the rollout's current state does not allow, or one made at an older revision. */
export function rolloutStateConflict(
  rollout: RolloutStanding,
  action: string,
  expectedRevision: number | null,
): Refusal {
  const { rolloutId, status, step, percent, revision } = rollout;
  const message =
    expectedRevision !== null && expectedRevision !== revision
      ? `rollout ${rolloutId} is at revision ${revision}, not ${expectedRevision}: it changed since it was read (now ${status}); read it again and decide`
      : `rollout ${rolloutId} is ${status}: it cannot ${action}`;
  return {
    code: 'rollout_conflict',
    message,
    details: { reason: 'state', rolloutId, status, step, percent, revision },
  };
}

/** A driver's change of a rollout after another server took the rollout's driver lease over. */
export function rolloutDriverLost(rolloutId: string, holder: string): Refusal {
  return {
    code: 'rollout_conflict',
    message: `rollout ${rolloutId} is driven by another server now: ${holder} lost its driver lease`,
    details: { reason: 'driver', rolloutId },
  };
}
