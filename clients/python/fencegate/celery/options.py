"""What a fenced task is configured with, once, by its decorator."""

from dataclasses import dataclass
from typing import Callable, Optional

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
