/**
 * The two refusals of a FencedSession, each a FencegateError of a catalog code:
 *
 * - StaleSessionOwnerError: the run no longer owns the session (a newer claim, a takeover, a
 *   cutover, a release or a delete moved its fence, or its lease ran out). Nothing was stored.
 * - SessionHistoryConflictError: a history change whose precondition no longer holds (an expected
 *   suffix that does not match, an operation id reused for another transaction, a compaction of
 *   a history that was cut since it was read). Nothing was stored, and no operation id recorded.
 */
import {
  FencegateError,
  INTEGRATION_ERRORS,
  isFencegateError,
  type ErrorCode,
  type ErrorDetails,
} from '../../errors.js';

/** The store's answers that mean the run was superseded: the catalog's codes for the class. */
export const STALE_SESSION_OWNER_CODES: ReadonlySet<ErrorCode> = new Set(
  INTEGRATION_ERRORS.find((spec) => spec.name === 'StaleSessionOwnerError')?.codes,
);

export class StaleSessionOwnerError extends FencegateError {
  readonly isStaleSessionOwnerError = true;
  readonly sessionId: string;

  constructor(sessionId: string, refusal: FencegateError) {
    super(
      refusal.code,
      `session write refused: this run no longer owns session ${sessionId} (${refusal.message}); nothing was stored. Stop this run, or claim the session again and read its history`,
      { ...refusal.details, sessionId },
      { cause: refusal },
    );
    this.name = 'StaleSessionOwnerError';
    this.sessionId = sessionId;
  }
}

export class SessionHistoryConflictError extends FencegateError {
  readonly isSessionHistoryConflictError = true;
  readonly sessionId: string;

  constructor(
    sessionId: string,
    code: 'stale_revision' | 'operation_id_conflict',
    message: string,
    details: ErrorDetails = {},
  ) {
    super(code, `session ${sessionId}: ${message}`, { ...details, sessionId });
    this.name = 'SessionHistoryConflictError';
    this.sessionId = sessionId;
  }
}

/** The refusal as a StaleSessionOwnerError when it means a superseded run; else unchanged. */
export function asStaleSessionOwner(sessionId: string, error: unknown): unknown {
  if (!isFencegateError(error) || error instanceof StaleSessionOwnerError) return error;
  return STALE_SESSION_OWNER_CODES.has(error.code)
    ? new StaleSessionOwnerError(sessionId, error)
    : error;
}

/** True for a StaleSessionOwnerError, also one created by another installed copy of this package. */
export function isStaleSessionOwnerError(value: unknown): value is StaleSessionOwnerError {
  return (
    isFencegateError(value) &&
    (value as { isStaleSessionOwnerError?: unknown }).isStaleSessionOwnerError === true
  );
}

/** True for a SessionHistoryConflictError, also one of another installed copy of this package. */
export function isSessionHistoryConflictError(
  value: unknown,
): value is SessionHistoryConflictError {
  return (
    isFencegateError(value) &&
    (value as { isSessionHistoryConflictError?: unknown }).isSessionHistoryConflictError === true
  );
}
