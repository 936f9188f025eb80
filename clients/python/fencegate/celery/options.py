"""What a fenced task is configured with, once, by its decorator, and the scope it names."""

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from .names import default_scope

ScopeOf = Callable[..., str]


@dataclass(frozen=True)
class FencedTaskOptions:
    """``scope`` names a task's scope (None: ``celery/<task id>``); ``ttl_ms`` is the lease of a
    run; ``policy_version`` pins the scope's policy and puts the task in the jobs ledger;
    ``wait_s`` is how long a delivery waits out a lease held by another holder. ``versions``
    holds a body per policy version (empty: the decorated body runs), ``version_queues`` the queue
    of each version this worker has no body for."""

    scope: Optional[ScopeOf]
    ttl_ms: int
    policy_version: Optional[str]
    wait_s: float
    versions: Dict[str, Callable[..., Any]] = field(default_factory=dict)
    version_queues: Dict[str, str] = field(default_factory=dict)

    @property
    def policy_versions(self) -> Optional[List[str]]:
        """The versions an acquire names, in the order given (the first pins a new scope outside
        any rollout), or None for the single-body form."""
        return list(self.versions) or None

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
