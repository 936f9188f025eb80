"""fencegate.langgraph: a LangGraph checkpoint saver whose every write is a fenced commit, with
write ownership: a run that another run superseded has its writes refused, never silently
dropped and never stored. Needs ``langgraph-checkpoint`` 4 (Python ≥ 3.10), the ``langgraph``
extra of this package.

    from fencegate.langgraph import FencedCheckpointSaver

    saver = FencedCheckpointSaver(client=fencegate.Client(url, worker_token))
    graph = builder.compile(checkpointer=saver)
    owner = saver.claim_write_ownership(thread_id)      # acquire, or take over
    graph.invoke(None, {"configurable": {"thread_id": thread_id, "fence": owner.fence}})

``FencedStore`` is LangGraph's long-term memory store (``BaseStore``) in the thread's scope, its
writes fenced like the checkpoints, its puts optionally conditional (``if_revision``,
``if_absent``; a :class:`MemoryConflictError` when that does not hold).
"""

from .effects import aawait_effect, await_effect, stage_effect
from .errors import STALE_OWNER_CODES, MemoryConflictError, StaleWriteOwnerError
from .owner import WriteOwner
from .saver import FencedCheckpointSaver
from .store import FencedPutOp, FencedStore, MemoryItem

__all__ = [
    "FencedCheckpointSaver",
    "FencedPutOp",
    "FencedStore",
    "MemoryConflictError",
    "MemoryItem",
    "STALE_OWNER_CODES",
    "StaleWriteOwnerError",
    "WriteOwner",
    "aawait_effect",
    "await_effect",
    "stage_effect",
]
