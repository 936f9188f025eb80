"""The refusals of the LangGraph integration: a superseded write owner's, and a memory put's whose
precondition did not hold."""

from typing import TYPE_CHECKING, Any, Mapping, Optional, Tuple

from .._base import FencegateError
from ..errors import StaleRevisionError

if TYPE_CHECKING:
    from .store import MemoryItem

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


class MemoryConflictError(StaleRevisionError):
    """A FencedStore put (or delete) whose precondition did not hold: the item was written (or
    deleted) since the revision the caller read, or ``if_absent`` found it present. Nothing was
    written. ``current`` is the item as it is now (None when absent): decide again on its value
    and put with ``if_revision=current.revision``.

    ``is_memory_conflict_error`` is the marker the store contract recognises it by, as the
    TypeScript ``MemoryConflictError`` carries ``isMemoryConflictError``.
    """

    is_memory_conflict_error = True

    def __init__(
        self,
        namespace: Tuple[str, ...],
        key: str,
        expected: str,
        current: Optional["MemoryItem"],
    ) -> None:
        now = "absent" if current is None else f"at revision {current.revision}"
        revision = 0 if current is None else current.revision
        super().__init__(
            f"memory {list(namespace)!r}/{key!r} was expected {expected} but is {now}; nothing "
            f"was written. Read it again, decide on the current value and put with "
            f"if_revision={revision}",
            {
                "namespace": list(namespace),
                "key": key,
                "expected": expected,
                "actual": None if current is None else current.revision,
                "exists": current is not None,
            },
        )
        self.namespace = namespace
        self.key = key
        self.current = current
