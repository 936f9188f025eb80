"""Checkpoints, metadata and configs for the saver tests, shaped as LangGraph makes them."""

from typing import Any, Dict, Optional
from uuid import uuid4

from langgraph.checkpoint.base import Checkpoint, empty_checkpoint
from langgraph.checkpoint.base.id import uuid6


def config(
    thread_id: Optional[str] = None, namespace: str = "", checkpoint_id: Optional[str] = None
) -> Dict[str, Any]:
    configurable: Dict[str, Any] = {
        "thread_id": thread_id or str(uuid4()),
        "checkpoint_ns": namespace,
    }
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def checkpoint(
    values: Optional[Dict[str, Any]] = None,
    versions: Optional[Dict[str, Any]] = None,
    checkpoint_id: Optional[str] = None,
    **fields: Any,
) -> Checkpoint:
    made = empty_checkpoint()
    made["id"] = checkpoint_id or str(uuid6(clock_seq=-2))
    made["channel_values"] = dict(values or {})
    made["channel_versions"] = dict(
        versions if versions is not None else {k: 1 for k in made["channel_values"]}
    )
    made.update(fields)  # type: ignore[typeddict-item]
    return made


def metadata(**fields: Any) -> Dict[str, Any]:
    return {"source": "loop", "step": 0, "parents": {}, **fields}


def child_of(stored: Dict[str, Any]) -> Dict[str, Any]:
    """The config a checkpoint written after ``stored`` (its child) is put with."""
    return {"configurable": dict(stored["configurable"])}
