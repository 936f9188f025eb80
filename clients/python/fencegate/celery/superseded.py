"""The end of a task run that another delivery (or a cutover, a takeover) replaced."""

from typing import Any, Mapping, Optional

from celery.exceptions import Ignore

from .._base import FencegateError

#: Refusals that mean the task's scope has moved on to another generation: a run answered one
#: of these was replaced, and whatever it did is not the task's outcome.
SUPERSEDED_CODES = frozenset({"stale_fence", "not_holder", "scope_deleted", "scope_not_found"})


# celery ships no type information, so its Ignore is Any to a type checker.
class TaskSupersededError(FencegateError, Ignore):  # type: ignore[misc]
    """A run of a fenced task whose authority moved to a newer generation.

    ``code`` is the refusal that showed it (``stale_fence``, ``not_holder``, ``scope_deleted`` or
    ``scope_not_found``) and ``details`` what decided it. It is also Celery's ``Ignore``: the
    worker acknowledges the message and writes nothing to the result backend, so the state Celery
    reports for the task is the one its current run reports.
    """

    is_task_superseded_error = True

    def __init__(
        self,
        message: str,
        details: Optional[Mapping[str, Any]] = None,
        code: Optional[str] = None,
    ) -> None:
        super().__init__(message, details, code=code or "stale_fence")
