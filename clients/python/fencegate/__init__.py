"""fencegate for Python: fencing tokens, leases and revision checks at the commit boundary, over
the fencegate HTTP API. ``Client`` and ``AsyncClient`` (the same methods as coroutines) need the
standard library only.

    import fencegate

    client = fencegate.Client("http://127.0.0.1:7420", token)
    grant = client.acquire("wf-1/memory", holder="worker-7", ttl_ms=30_000)
    record = client.get_record("wf-1/memory", "summary")
    result = client.commit(
        scope="wf-1/memory", fence=grant.fence, operation_id=f"summary-{grant.fence}",
        writes=[fencegate.Write("summary", expect_revision=record.revision, value="...")],
    )
    if result.outcome == "rejected":
        print(result.error.code)        # stale_fence, stale_revision, ...
"""

from ._base import FencegateError
from ._methods import AsyncClientApi, ClientApi
from .aio import AsyncClient
from .aio_lease import AsyncLeaseKeeper
from .client import Client
from .errors import *  # noqa: F401,F403  one class per catalog code
from .errors import ERROR_CLASSES
from .lease import LeaseKeeper
from .models import (
    CancelResult,
    CommitError,
    CommitResult,
    CommittedRecord,
    Grant,
    Intent,
    JobTally,
    Page,
    Read,
    RecordReads,
    RecordState,
    ReleaseResult,
    Rollout,
    RolloutGate,
    RolloutGateReading,
    RolloutGateResult,
    RolloutGateSeries,
    RolloutReport,
    RolloutRollbackReport,
    RolloutStepReport,
    ScopeState,
    VerifyReport,
    Write,
)

__version__ = "0.1.0"

__all__ = [
    "AsyncClient",
    "AsyncClientApi",
    "AsyncLeaseKeeper",
    "CancelResult",
    "Client",
    "ClientApi",
    "CommitError",
    "CommitResult",
    "CommittedRecord",
    "ERROR_CLASSES",
    "FencegateError",
    "Grant",
    "Intent",
    "JobTally",
    "LeaseKeeper",
    "Page",
    "Read",
    "RecordReads",
    "RecordState",
    "ReleaseResult",
    "Rollout",
    "RolloutGate",
    "RolloutGateReading",
    "RolloutGateResult",
    "RolloutGateSeries",
    "RolloutReport",
    "RolloutRollbackReport",
    "RolloutStepReport",
    "ScopeState",
    "VerifyReport",
    "Write",
    *(cls.__name__ for cls in ERROR_CLASSES.values()),
]
