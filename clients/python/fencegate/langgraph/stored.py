"""How checkpoints and pending writes are kept in records, in the TypeScript saver's layout.

A value is ``{"type", "data"}``: the serializer's type tag and its bytes in base64, so a record
stays JSON. Plain JSON values are written with the ``json`` tag, the one tag both LangGraph and
LangGraph.js read; anything else (messages, pydantic models ...) as the serializer types it.
"""

import base64
import json
from typing import Any, Dict, List, Optional, Tuple

from langgraph.checkpoint.base import WRITES_IDX_MAP
from langgraph.checkpoint.serde.base import SerializerProtocol

#: A blob for a channel that has a new version but no value (an empty channel).
EMPTY: Dict[str, str] = {"type": "empty", "data": ""}


def dump(serde: SerializerProtocol, value: Any) -> Dict[str, str]:
    if _plain_json(value):
        data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        return {"type": "json", "data": base64.b64encode(data).decode("ascii")}
    kind, data = serde.dumps_typed(value)
    return {"type": kind, "data": base64.b64encode(data).decode("ascii")}


def load(serde: SerializerProtocol, stored: Dict[str, str]) -> Any:
    return serde.loads_typed((stored["type"], base64.b64decode(stored["data"])))


def is_empty(stored: Optional[Dict[str, str]]) -> bool:
    return stored is None or stored.get("type") == EMPTY["type"]


def stored_checkpoint(
    serde: SerializerProtocol,
    namespace: str,
    checkpoint: Dict[str, Any],
    metadata: Any,
    parent: Optional[str],
    empty: List[str],
) -> Dict[str, Any]:
    """A checkpoint record. Two fields the TypeScript saver neither writes nor needs: ``ts`` in
    the clear, so recency is read without decoding, and ``empty``, the versioned channels that
    had no value, whose blobs a read then skips."""
    return {
        "ns": namespace,
        "id": checkpoint["id"],
        "parent": parent,
        "ts": checkpoint.get("ts"),
        "empty": empty,
        "checkpoint": dump(serde, checkpoint),
        "metadata": dump(serde, metadata),
    }


def stored_write(
    serde: SerializerProtocol, task_id: str, channel: str, path: str, index: int, value: Any
) -> Dict[str, Any]:
    return {
        "task": task_id,
        "channel": channel,
        "path": path,
        "index": index,
        "value": dump(serde, value),
    }


def write_index(channel: str, position: int) -> int:
    """A special channel (error, interrupt, resume, scheduled) has one fixed, negative slot."""
    return WRITES_IDX_MAP.get(channel, position)


def recency(serde: SerializerProtocol, record: Dict[str, Any]) -> Tuple[str, str]:
    """What orders checkpoints newest first: their timestamp, then their id."""
    ts = record.get("ts")
    if not isinstance(ts, str):  # written by a saver that does not keep it in the clear
        ts = str(load(serde, record["checkpoint"]).get("ts", ""))
    return ts, str(record["id"])


def writes_in_order(writes: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Pending writes in the order live execution applies them (task path, task, index)."""
    return sorted(writes, key=lambda w: (str(w.get("path", "")), str(w["task"]), int(w["index"])))


#: Exact types whose values are plain JSON as they are, checked without a call.
_SCALARS = frozenset({str, int, bool, type(None)})
#: Deeper than this, a value goes to the serializer rather than to JSON.
_MAX_DEPTH = 64


def _plain_json(value: Any) -> bool:
    """Whether ``value`` is JSON exactly as JSON reads it back: str keys, finite floats, lists
    (not tuples), at most ``_MAX_DEPTH`` deep. Walked with a stack, scalars checked in line:
    a checkpoint is a few dozen small values, which a call per value would make cost more than
    the encoding itself."""
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if depth > _MAX_DEPTH:
            return False
        if isinstance(item, dict):
            children: Any = item.values()
            if not all(isinstance(key, str) for key in item):
                return False
        elif isinstance(item, list):
            children = item
        elif not _plain_scalar(item):
            return False
        else:
            continue
        inner = depth + 1
        for child in children:
            if type(child) not in _SCALARS or inner > _MAX_DEPTH:
                pending.append((child, inner))
    return True


def _plain_scalar(value: Any) -> bool:
    if value is None or isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    return False
