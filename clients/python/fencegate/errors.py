"""One exception class per code of the error catalog.

Generated from src/errors.ts by scripts/write-python-errors.ts; do not edit. The tests compare
it with docs/errors.md, so the two cannot drift apart.
"""

from typing import Dict, Type

from ._base import FencegateError


class InvalidRequestError(FencegateError):
    """Malformed input: unknown field, wrong type, out-of-range number or bad name."""

    code = "invalid_request"
    http_status = 400
    retryable = False


class UnauthorizedError(FencegateError):
    """Missing or unknown bearer token."""

    code = "unauthorized"
    http_status = 401
    retryable = False


class ForbiddenError(FencegateError):
    """The token's role may not call this endpoint, or a worker's take-over right does not cover the scope."""

    code = "forbidden"
    http_status = 403
    retryable = False


class NotFoundError(FencegateError):
    """The operation, intent, token or route does not exist."""

    code = "not_found"
    http_status = 404
    retryable = False


class ScopeNotFoundError(FencegateError):
    """The scope was never created (409 when it rejects a commit)."""

    code = "scope_not_found"
    http_status = 404
    retryable = False


class MethodNotAllowedError(FencegateError):
    """The route exists for another method; the answer names it (and so does Allow)."""

    code = "method_not_allowed"
    http_status = 405
    retryable = False


class ScopeDeletedError(FencegateError):
    """The scope is deleted; only an operator's takeover re-creates it."""

    code = "scope_deleted"
    http_status = 409
    retryable = False


class LeaseHeldError(FencegateError):
    """Another holder has a live lease; details carry holder and leaseExpiresAt."""

    code = "lease_held"
    http_status = 409
    retryable = True


class NotHolderError(FencegateError):
    """The fence is current but the caller is not the current holder, or names the holder of a grant bound to another worker token (details.grantTokenId): only that token, an operator, or a worker token whose take-over right covers the scope may renew, release or acquire it again."""

    code = "not_holder"
    http_status = 409
    retryable = False


class PolicyMismatchError(FencegateError):
    """The scope is pinned to another policy version; only a cutover changes it."""

    code = "policy_mismatch"
    http_status = 409
    retryable = False


class StaleFenceError(FencegateError):
    """The presented fence is not the scope's current fence."""

    code = "stale_fence"
    http_status = 409
    retryable = False


class AuthorityRevokedError(FencegateError):
    """The scope has no holder (released or cancelled)."""

    code = "authority_revoked"
    http_status = 409
    retryable = False


class LeaseExpiredError(FencegateError):
    """The holder's lease has expired by store time."""

    code = "lease_expired"
    http_status = 409
    retryable = False


class StalePolicyError(FencegateError):
    """The commit's policyVersion is not the scope's policy version."""

    code = "stale_policy"
    http_status = 409
    retryable = False


class StaleDependencyError(FencegateError):
    """A record read as a dependency has changed since it was read."""

    code = "stale_dependency"
    http_status = 409
    retryable = False


class StaleRevisionError(FencegateError):
    """A write's expectRevision is not the record's current revision."""

    code = "stale_revision"
    http_status = 409
    retryable = False


class IncarnationChangedError(FencegateError):
    """The record lifetime the writer read has ended (deleted, or deleted and re-created)."""

    code = "incarnation_changed"
    http_status = 409
    retryable = False


class DuplicateEffectError(FencegateError):
    """An intent's effectKey already exists."""

    code = "duplicate_effect"
    http_status = 409
    retryable = False


class OperationAbandonedError(FencegateError):
    """The operationId was abandoned: no commit with it ever applies; a new attempt needs a new operationId."""

    code = "operation_abandoned"
    http_status = 409
    retryable = False


class PolicyConflictError(FencegateError):
    """The policy version is already registered with another digest."""

    code = "policy_conflict"
    http_status = 409
    retryable = False


class RolloutConflictError(FencegateError):
    """The rollout's state changed since it was read or does not allow the change (details.status, details.step, details.percent and details.revision say where it is), or the selection overlaps an active rollout (details.rolloutId) or a cutover still moving scopes (details.cutoverId)."""

    code = "rollout_conflict"
    http_status = 409
    retryable = False


class StaleClaimError(FencegateError):
    """The claim fence is not the intent's current claim fence."""

    code = "stale_claim"
    http_status = 409
    retryable = False


class PayloadTooLargeError(FencegateError):
    """The body is over 1 MiB or a value is over 256 KiB."""

    code = "payload_too_large"
    http_status = 413
    retryable = False


class UnsupportedMediaTypeError(FencegateError):
    """The body is not application/json, or is sent compressed (a Content-Encoding other than identity)."""

    code = "unsupported_media_type"
    http_status = 415
    retryable = False


class OperationIdConflictError(FencegateError):
    """The operationId already has an outcome for a different request; send a new request under a new operationId."""

    code = "operation_id_conflict"
    http_status = 422
    retryable = False


class RateLimitedError(FencegateError):
    """The tenant sent more than the server's per-tenant rate (`fencegate serve --tenant-rate`); nothing was changed. Send it again after `Retry-After` seconds (`details.retryAfterMs` in milliseconds). The clients also answer a proxy's or a gateway's 429 with this code when they do not wait for it (past their wait budget, or without a Retry-After)."""

    code = "rate_limited"
    http_status = 429
    retryable = True


class InternalError(FencegateError):
    """An unexpected server fault; `details.requestId` is the request id (the `x-request-id` header) the server logged it under, never internals."""

    code = "internal_error"
    http_status = 500
    retryable = False


class StoreUnavailableError(FencegateError):
    """The store cannot be reached; nothing was changed and nothing is answered from memory."""

    code = "store_unavailable"
    http_status = 503
    retryable = True


class OutcomeUnknownError(FencegateError):
    """The store failed after the commit was sent; getOperation(operationId) reads the outcome, abandonOperation(operationId) settles it."""

    code = "outcome_unknown"
    http_status = 503
    retryable = True


#: Every exception class by its catalog code.
ERROR_CLASSES: Dict[str, Type[FencegateError]] = {
    "invalid_request": InvalidRequestError,
    "unauthorized": UnauthorizedError,
    "forbidden": ForbiddenError,
    "not_found": NotFoundError,
    "scope_not_found": ScopeNotFoundError,
    "method_not_allowed": MethodNotAllowedError,
    "scope_deleted": ScopeDeletedError,
    "lease_held": LeaseHeldError,
    "not_holder": NotHolderError,
    "policy_mismatch": PolicyMismatchError,
    "stale_fence": StaleFenceError,
    "authority_revoked": AuthorityRevokedError,
    "lease_expired": LeaseExpiredError,
    "stale_policy": StalePolicyError,
    "stale_dependency": StaleDependencyError,
    "stale_revision": StaleRevisionError,
    "incarnation_changed": IncarnationChangedError,
    "duplicate_effect": DuplicateEffectError,
    "operation_abandoned": OperationAbandonedError,
    "policy_conflict": PolicyConflictError,
    "rollout_conflict": RolloutConflictError,
    "stale_claim": StaleClaimError,
    "payload_too_large": PayloadTooLargeError,
    "unsupported_media_type": UnsupportedMediaTypeError,
    "operation_id_conflict": OperationIdConflictError,
    "rate_limited": RateLimitedError,
    "internal_error": InternalError,
    "store_unavailable": StoreUnavailableError,
    "outcome_unknown": OutcomeUnknownError,
}

__all__ = [
    "ERROR_CLASSES",
    "FencegateError",
    "InvalidRequestError",
    "UnauthorizedError",
    "ForbiddenError",
    "NotFoundError",
    "ScopeNotFoundError",
    "MethodNotAllowedError",
    "ScopeDeletedError",
    "LeaseHeldError",
    "NotHolderError",
    "PolicyMismatchError",
    "StaleFenceError",
    "AuthorityRevokedError",
    "LeaseExpiredError",
    "StalePolicyError",
    "StaleDependencyError",
    "StaleRevisionError",
    "IncarnationChangedError",
    "DuplicateEffectError",
    "OperationAbandonedError",
    "PolicyConflictError",
    "RolloutConflictError",
    "StaleClaimError",
    "PayloadTooLargeError",
    "UnsupportedMediaTypeError",
    "OperationIdConflictError",
    "RateLimitedError",
    "InternalError",
    "StoreUnavailableError",
    "OutcomeUnknownError",
]
