"""fencegate.langgraph: a LangGraph checkpoint saver whose every write is a fenced commit, with
write ownership: a run that another run superseded has its writes refused, never silently
dropped and never stored. Needs ``langgraph-checkpoint`` 4 (Python ≥ 3.10), the ``langgraph``
extra of this package.

    from fencegate.langgraph import FencedCheckpointSaver

    saver = FencedCheckpointSaver(client=fencegate.Client(url, worker_token))
    graph = builder.compile(checkpointer=saver)
    owner = saver.claim_write_ownership(thread_id)      # acquire, or take over
    graph.invoke(None, {"configurable": {"thread_id": thread_id, "fence": owner.fence}})
"""

from .effects import aawait_effect, await_effect, stage_effect
from .errors import STALE_OWNER_CODES, StaleWriteOwnerError
from .owner import WriteOwner
from .saver import FencedCheckpointSaver

__all__ = [
    "FencedCheckpointSaver",
    "STALE_OWNER_CODES",
    "StaleWriteOwnerError",
    "WriteOwner",
    "aawait_effect",
    "await_effect",
    "stage_effect",
]
