"""The refusal a superseded write owner gets."""

from typing import Any, Mapping, Optional

from .._base import FencegateError

#: Refusal codes that mean "another run owns this thread now": the write is not stored.
STALE_OWNER_CODES = frozenset(
    {"stale_fence", "lease_expired", "authority_revoked", "not_holder", "scope_deleted"}
)


class StaleWriteOwnerError(FencegateError):
    """A write of a run that no longer owns its thread: nothing of it was stored.

    ``code`` is the store's refusal (``stale_fence``, ``lease_expired``, ``authority_revoked``,
    ``not_holder`` or ``scope_deleted``), ``details`` what decided it (the current fence, ...).
    ``is_stale_write_owner_error`` is the marker LangGraph's write-ownership suite recognises
    such a refusal by, without importing anything of this package.
    """

    is_stale_write_owner_error = True
    http_status = 409

    def __init__(
        self,
        message: str,
        details: Optional[Mapping[str, Any]] = None,
        code: Optional[str] = None,
        thread_id: Optional[str] = None,
    ) -> None:
        super().__init__(message, details, code=code or "stale_fence")
        self.code = code or "stale_fence"
        self.thread_id = thread_id
