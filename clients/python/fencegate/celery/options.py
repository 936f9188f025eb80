"""What a fenced task is configured with, once, by its decorator, and the scope it names."""

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

from .names import default_scope

ScopeOf = Callable[..., str]


@dataclass(frozen=True)
class FencedTaskOptions:
    """``scope`` names a task's scope (None: ``celery/<task id>``); ``ttl_ms`` is the lease of a
    run; ``policy_version`` pins the scope's policy and puts the task in the jobs ledger;
    ``wait_s`` is how long a delivery waits out a lease held by another holder."""

    scope: Optional[ScopeOf]
    ttl_ms: int
    policy_version: Optional[str]
    wait_s: float

    def scope_of(
        self, task: Any, task_id: str, args: Sequence[Any], kwargs: Mapping[str, Any]
    ) -> str:
        """The scope of the task ``task_id`` called with ``args`` and ``kwargs``: the same when
        its run takes it as when the producer records it queued."""
        if self.scope is None:
            return default_scope(task_id)
        return self.scope(task, *args, **kwargs)


def options_of(task: Any) -> Optional[FencedTaskOptions]:
    """The options of a registered Celery task made with ``fenced_task``, else None."""
    found = getattr(getattr(task, "run", None), FENCED_TASK_OPTIONS, None)
    return found if isinstance(found, FencedTaskOptions) else None


#: The attribute fenced_task sets on the function it makes, so the task is known as fenced.
FENCED_TASK_OPTIONS = "fenced_task_options"
