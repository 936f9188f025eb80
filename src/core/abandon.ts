/**
 * Abandoning an operation (SEMANTICS.md, "Unknown outcomes"): when an operationId has no stored
 * outcome, abandonOperation stores this rejection under it. From then on every commit with that
 * operationId, whatever its request, in flight or later, is answered this stored outcome as a
 * replay and changes nothing. A stored outcome is never replaced, so an abandon that comes after
 * the commit answers the commit's outcome instead.
 */
import type { CommitRejected } from '../types.js';
import { auditEntry, type NewAuditEntry } from './audit-entry.js';
import { tokenField, type Caller } from './grant-token.js';
import { commitRejection } from './refusal-messages.js';

/** Stored as the request fingerprint of an abandoned operation: no request has this hash. */
export const ABANDONED_FINGERPRINT = 'abandoned';

export function abandonedOutcome(operationId: string, reason: string | undefined): CommitRejected {
  return {
    outcome: 'rejected',
    operationId,
    replayed: false,
    error: commitRejection(
      'operation_abandoned',
      reason === undefined ? { operationId } : { operationId, reason },
    ),
  };
}

/** Whether a stored outcome answers a commit whose request has `requestFingerprint`. */
export function storedOutcomeAnswers(
  storedFingerprint: string,
  requestFingerprint: string,
): boolean {
  return storedFingerprint === requestFingerprint || storedFingerprint === ABANDONED_FINGERPRINT;
}

/** The audit entry of an abandonment: a rejected commit of no scope. */
export function abandonedAuditEntry(
  tenant: string,
  now: number,
  operationId: string,
  caller: Caller | undefined,
): NewAuditEntry {
  return auditEntry({
    at: now,
    tenant,
    scope: null,
    kind: 'commit',
    outcome: 'rejected',
    reason: 'operation_abandoned',
    operationId,
    ...tokenField(caller),
  });
}
