/**
 * The one error catalog. Every code that crosses an API boundary (library, HTTP, CLI) is listed
 * here with its HTTP status and whether retrying the same request can succeed. docs/errors.md is
 * kept equal to this table by a test.
 */

export interface ErrorSpec {
  readonly httpStatus: number;
  readonly retryable: boolean;
  readonly description: string;
}

export const ERROR_CATALOG = {
  invalid_request: {
    httpStatus: 400,
    retryable: false,
    description: 'Malformed input: unknown field, wrong type, out-of-range number or bad name.',
  },
  unauthorized: {
    httpStatus: 401,
    retryable: false,
    description: 'Missing or unknown bearer token.',
  },
  forbidden: {
    httpStatus: 403,
    retryable: false,
    description:
      "The token's role may not call this endpoint, or a worker's take-over right does not cover the scope.",
  },
  not_found: {
    httpStatus: 404,
    retryable: false,
    description: 'The operation, intent, token or route does not exist.',
  },
  scope_not_found: {
    httpStatus: 404,
    retryable: false,
    description: 'The scope was never created (409 when it rejects a commit).',
  },
  method_not_allowed: {
    httpStatus: 405,
    retryable: false,
    description: 'The route exists for another method; the answer names it (and so does Allow).',
  },
  scope_deleted: {
    httpStatus: 409,
    retryable: false,
    description: "The scope is deleted; only an operator's takeover re-creates it.",
  },
  lease_held: {
    httpStatus: 409,
    retryable: true,
    description: 'Another holder has a live lease; details carry holder and leaseExpiresAt.',
  },
  not_holder: {
    httpStatus: 409,
    retryable: false,
    description:
      'The fence is current but the caller is not the current holder, or names the holder of a grant bound to another worker token (details.grantTokenId): only that token, an operator, or a worker token whose take-over right covers the scope may renew, release or acquire it again.',
  },
  policy_mismatch: {
    httpStatus: 409,
    retryable: false,
    description: 'The scope is pinned to another policy version; only a cutover changes it.',
  },
  stale_fence: {
    httpStatus: 409,
    retryable: false,
    description: "The presented fence is not the scope's current fence.",
  },
  authority_revoked: {
    httpStatus: 409,
    retryable: false,
    description: 'The scope has no holder (released or cancelled).',
  },
  lease_expired: {
    httpStatus: 409,
    retryable: false,
    description: "The holder's lease has expired by store time.",
  },
  stale_policy: {
    httpStatus: 409,
    retryable: false,
    description: "The commit's policyVersion is not the scope's policy version.",
  },
  stale_dependency: {
    httpStatus: 409,
    retryable: false,
    description: 'A record read as a dependency has changed since it was read.',
  },
  stale_revision: {
    httpStatus: 409,
    retryable: false,
    description: "A write's expectRevision is not the record's current revision.",
  },
  incarnation_changed: {
    httpStatus: 409,
    retryable: false,
    description:
      'The record lifetime the writer read has ended (deleted, or deleted and re-created).',
  },
  duplicate_effect: {
    httpStatus: 409,
    retryable: false,
    description: "An intent's effectKey already exists.",
  },
  operation_abandoned: {
    httpStatus: 409,
    retryable: false,
    description:
      'The operationId was abandoned: no commit with it ever applies; a new attempt needs a new operationId.',
  },
  policy_conflict: {
    httpStatus: 409,
    retryable: false,
    description: 'The policy version is already registered with another digest.',
  },
  rollout_conflict: {
    httpStatus: 409,
    retryable: false,
    description:
      "The rollout's state changed since it was read or does not allow the change (details.status, details.step, details.percent and details.revision say where it is), or the selection overlaps an active rollout (details.rolloutId) or a cutover still moving scopes (details.cutoverId).",
  },
  stale_claim: {
    httpStatus: 409,
    retryable: false,
    description: "The claim fence is not the intent's current claim fence.",
  },
  payload_too_large: {
    httpStatus: 413,
    retryable: false,
    description: 'The body is over 1 MiB or a value is over 256 KiB.',
  },
  unsupported_media_type: {
    httpStatus: 415,
    retryable: false,
    description:
      'The body is not application/json, or is sent compressed (a Content-Encoding other than identity).',
  },
  operation_id_conflict: {
    httpStatus: 422,
    retryable: false,
    description:
      'The operationId already has an outcome for a different request; send a new request under a new operationId.',
  },
  rate_limited: {
    httpStatus: 429,
    retryable: true,
    description:
      "The tenant sent more than the server's per-tenant rate (`fencegate serve --tenant-rate`); nothing was changed. Send it again after `Retry-After` seconds (`details.retryAfterMs` in milliseconds). The clients also answer a proxy's or a gateway's 429 with this code when they do not wait for it (past their wait budget, or without a Retry-After).",
  },
  internal_error: {
    httpStatus: 500,
    retryable: false,
    description:
      'An unexpected server fault; `details.requestId` is the request id (the `x-request-id` header) the server logged it under, never internals.',
  },
  store_unavailable: {
    httpStatus: 503,
    retryable: true,
    description:
      'The store cannot be reached; nothing was changed and nothing is answered from memory.',
  },
  outcome_unknown: {
    httpStatus: 503,
    retryable: true,
    description:
      'The store failed after the commit was sent; getOperation(operationId) reads the outcome, abandonOperation(operationId) settles it.',
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

/** The codes a commit can be rejected with (stored under its operationId), checks in order. */
export const COMMIT_REJECTION_CODES = [
  'scope_not_found',
  'scope_deleted',
  'stale_fence',
  'authority_revoked',
  'lease_expired',
  'stale_policy',
  'stale_dependency',
  'stale_revision',
  'incarnation_changed',
  'duplicate_effect',
  // Not a check: the outcome abandonOperation stores, answered to every commit with that id.
  'operation_abandoned',
] as const satisfies readonly ErrorCode[];

export type CommitRejectionCode = (typeof COMMIT_REJECTION_CODES)[number];

/**
 * The codes a renewal answers when the lease is gone for good (core/lease-rules.ts, decideRenew):
 * the fence moved on, another holder or none holds the scope (a release or cancel answers
 * not_holder, as does a grant bound to another worker token), or the scope is deleted or unknown.
 * A renewal never answers authority_revoked or lease_expired: a lease that ran out and that nobody
 * took since is renewed. Any other error (store_unavailable, say) leaves the lease as it was.
 */
export const RENEWAL_LEASE_LOST_CODES = [
  'stale_fence',
  'not_holder',
  'scope_deleted',
  'scope_not_found',
] as const satisfies readonly ErrorCode[];

/**
 * The rejections of a commit that mean the writer holds no authority over its scope: the fence
 * checks of core/commit-check.ts, before any record is looked at. Any other rejection (a stale
 * revision, say) leaves the writer's authority as it was.
 */
export const COMMIT_AUTHORITY_LOST_CODES = [
  'scope_not_found',
  'scope_deleted',
  'stale_fence',
  'authority_revoked',
  'lease_expired',
] as const satisfies readonly CommitRejectionCode[];

/** Whether a renewal's error code means the lease is gone (RENEWAL_LEASE_LOST_CODES). */
export function isLeaseLostOnRenewal(code: string): boolean {
  return (RENEWAL_LEASE_LOST_CODES as readonly string[]).includes(code);
}

/** Whether a commit's rejection code means authority is gone (COMMIT_AUTHORITY_LOST_CODES). */
export function isAuthorityLostOnCommit(code: string): boolean {
  return (COMMIT_AUTHORITY_LOST_CODES as readonly string[]).includes(code);
}

/**
 * An exception an integration raises for one situation of its own, carrying one of the catalog's
 * codes as its `code`. docs/errors.md lists them; each integration's tests check its entry.
 */
export interface IntegrationErrorSpec {
  /** The class, named as it is imported. */
  name: string;
  language: 'TypeScript' | 'Python';
  /** The codes it carries. */
  codes: readonly ErrorCode[];
  description: string;
}

export const INTEGRATION_ERRORS: readonly IntegrationErrorSpec[] = [
  {
    name: 'fencegate.celery.TaskSupersededError',
    language: 'Python',
    codes: ['stale_fence', 'not_holder', 'scope_deleted', 'scope_not_found'],
    description:
      "A fenced Celery task's run was replaced: a redelivery, a takeover or a cutover moved the scope's fence. A subclass of Celery's Ignore: the run reports nothing to the result backend.",
  },
  {
    name: 'ThreadBusyError',
    language: 'TypeScript',
    codes: ['lease_held'],
    description:
      "runThread (fencegate/langgraph) with multitaskStrategy 'reject' found the thread held by another run; nothing was started. Carries threadId, holder and leaseExpiresAt; isThreadBusyError() recognises it.",
  },
  {
    name: 'StaleWriteOwnerError',
    language: 'TypeScript',
    codes: ['stale_fence', 'lease_expired', 'authority_revoked', 'not_holder', 'scope_deleted'],
    description:
      "A LangGraph.js run (FencedCheckpointSaver, fencegate/langgraph) wrote a thread it no longer owns: another claimWriteOwnership, a takeover, a cutover, a release or a delete moved the thread's fence. Nothing of the write was stored, and every later write of that writer is refused the same way. Carries threadId and isStaleWriteOwnerError = true, the marker the write-ownership suite of fencegate/testing/vitest recognises; isStaleWriteOwnerError() recognises it.",
  },
  {
    name: 'MemoryConflictError',
    language: 'TypeScript',
    codes: ['stale_revision'],
    description:
      'A FencedStore put or delete (fencegate/langgraph) whose precondition did not hold: the item changed since the revision given as ifRevision, or ifAbsent found it present. Nothing was written. Carries namespace, key, current (the item now, with its revision) and isMemoryConflictError = true, the marker the memory-store suite of fencegate/testing/vitest recognises; isMemoryConflictError() recognises it.',
  },
  {
    name: 'StaleSessionOwnerError',
    language: 'TypeScript',
    codes: ['stale_fence', 'lease_expired', 'authority_revoked', 'not_holder', 'scope_deleted'],
    description:
      "An OpenAI Agents run (FencedSession, fencegate/openai-agents) wrote a session it no longer owns: a newer claim, a takeover, a cutover, a release or a delete moved the session's fence, or its lease ran out. Nothing of the write was stored. Carries sessionId; isStaleSessionOwnerError() recognises it.",
  },
  {
    name: 'SessionHistoryConflictError',
    language: 'TypeScript',
    codes: ['stale_revision', 'operation_id_conflict'],
    description:
      'A FencedSession (fencegate/openai-agents) history change whose precondition no longer holds: stale_revision for an expected suffix that does not match or a compaction of a history that was cut (popped, cleared, compacted) since it was read; operation_id_conflict for an operation id already applied with another transaction. Nothing was stored and the operation id was not recorded. Carries sessionId; isSessionHistoryConflictError() recognises it.',
  },
  {
    name: 'fencegate.langgraph.StaleWriteOwnerError',
    language: 'Python',
    codes: ['stale_fence', 'lease_expired', 'authority_revoked', 'not_holder', 'scope_deleted'],
    description:
      "A LangGraph run wrote a thread it no longer owns: another claim_write_ownership, a takeover, a cutover or a release moved the thread's fence. Nothing of the write was stored, and every later write of that run is refused the same way. Its class attribute is_stale_write_owner_error = True is the marker LangGraph's write-ownership suite recognises.",
  },
];

export type ErrorDetails = Record<string, unknown>;

const ERROR_BRAND = Symbol.for('fencegate.error');

export class FencegateError extends Error {
  readonly code: ErrorCode;
  readonly httpStatus: number;
  readonly retryable: boolean;
  readonly details: ErrorDetails;

  constructor(
    code: ErrorCode,
    message: string,
    details: ErrorDetails = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    const spec: ErrorSpec = ERROR_CATALOG[code];
    this.name = 'FencegateError';
    this.code = code;
    this.httpStatus = spec.httpStatus;
    this.retryable = spec.retryable;
    this.details = details;
    Object.defineProperty(this, ERROR_BRAND, { value: true });
  }

  toJSON(): { code: ErrorCode; message: string; details: ErrorDetails } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

/** True for a FencegateError, also one created by another installed copy of this package. */
export function isFencegateError(value: unknown): value is FencegateError {
  return typeof value === 'object' && value !== null && ERROR_BRAND in value;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CATALOG, value);
}

export function fail(code: ErrorCode, message: string, details?: ErrorDetails): never {
  throw new FencegateError(code, message, details);
}
