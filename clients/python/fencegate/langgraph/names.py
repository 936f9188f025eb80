"""Where a thread's checkpoints live, named exactly as the TypeScript saver names them, so a
thread written by a TypeScript worker reads here and the other way round.

One scope per thread, ``<prefix><thread id>`` (default ``langgraph/``), and inside it::

    cp/<ns>/<checkpoint id>                  a checkpoint, its metadata and its parent
    bl/<ns>/<channel>/<version>              one version of one channel's value
    wr/<ns>/<checkpoint id>/<task id>/<idx>  a pending write of a task

Every piece is escaped (``fencegate/_names.py``), so ``/`` only ever separates pieces and
``cp/<ns>/`` selects exactly one namespace; uuid ids keep their order.
"""

from typing import Optional, Union

from .._names import escape_name, unescape_name

__all__ = ["escape_name", "unescape_name"]

DEFAULT_SCOPE_PREFIX = "langgraph/"


def checkpoint_prefix(namespace: Optional[str] = None) -> str:
    return "cp/" if namespace is None else f"cp/{escape_name(namespace)}/"


def checkpoint_name(namespace: str, checkpoint_id: str) -> str:
    return checkpoint_prefix(namespace) + escape_name(checkpoint_id)


def blob_name(namespace: str, channel: str, version: Union[str, int, float]) -> str:
    return f"bl/{escape_name(namespace)}/{escape_name(channel)}/{escape_name(str(version))}"


def writes_prefix(namespace: str, checkpoint_id: str) -> str:
    return f"wr/{escape_name(namespace)}/{escape_name(checkpoint_id)}/"


def write_name(namespace: str, checkpoint_id: str, task_id: str, index: int) -> str:
    return f"{writes_prefix(namespace, checkpoint_id)}{escape_name(task_id)}/{index}"
