"""Where a thread's checkpoints live, named exactly as the TypeScript saver names them, so a
thread written by a TypeScript worker reads here and the other way round.

One scope per thread, ``<prefix><thread id>`` (default ``langgraph/``), and inside it::

    cp/<ns>/<checkpoint id>                  a checkpoint, its metadata and its parent
    bl/<ns>/<channel>/<version>              one version of one channel's value
    wr/<ns>/<checkpoint id>/<task id>/<idx>  a pending write of a task

Every piece is escaped: ``[A-Za-z0-9._:-]`` stays as it is (so uuids and numbers keep their
order), every other byte of the UTF-8 form becomes ``@`` and two hex digits. ``/`` is escaped
too, so it only ever separates pieces and ``cp/<ns>/`` selects exactly one namespace.
"""

import re
from typing import Optional, Union

DEFAULT_SCOPE_PREFIX = "langgraph/"

_KEPT = re.compile(r"[A-Za-z0-9._:-]")


def escape_name(piece: str) -> str:
    out = []
    for char in piece:
        if _KEPT.fullmatch(char):
            out.append(char)
        else:
            out.extend(f"@{byte:02X}" for byte in char.encode("utf-8"))
    return "".join(out)


def unescape_name(piece: str) -> str:
    data = bytearray()
    index = 0
    while index < len(piece):
        if piece[index] == "@":
            data.append(int(piece[index + 1 : index + 3], 16))
            index += 3
        else:
            data.extend(piece[index].encode("ascii"))
            index += 1
    return data.decode("utf-8")


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
