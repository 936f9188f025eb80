"""Names of a Celery task in fencegate: its default scope, its holders and its jobs-ledger id.

Task ids and names are foreign identifiers; they are escaped into fencegate names the way the
TypeScript integrations escape theirs (src/integrations/name-escape.ts): ``[A-Za-z0-9._:-]`` stays,
every other byte of the UTF-8 form becomes ``@`` and two hex digits, which leaves ``/`` free to
separate the pieces of a name.
"""

import re
import uuid

_KEPT = re.compile(r"[A-Za-z0-9._:-]")
_MAX_NAME = 256


def escape_name(identifier: str) -> str:
    out = []
    for char in identifier:
        if _KEPT.fullmatch(char):
            out.append(char)
        else:
            out.extend(f"@{byte:02X}" for byte in char.encode("utf-8"))
    return "".join(out)


def default_scope(task_id: str) -> str:
    """``celery/<task id>``: one scope per task, shared by all its deliveries."""
    return f"celery/{escape_name(task_id)}"[:_MAX_NAME]


def ledger_job_id(task_name: str, task_id: str) -> str:
    """``<task name>/<task id>``, as the BullMQ integration's ``<queue>/<job id>``."""
    return f"{escape_name(task_name)}/{escape_name(task_id)}"[:_MAX_NAME]


def delivery_holder(task_id: str) -> str:
    """A holder of its own for each delivery, so a redelivery can tell it replaces one."""
    return f"{holder_prefix(task_id)}{uuid.uuid4().hex[:12]}"[:_MAX_NAME]


def holder_prefix(task_id: str) -> str:
    """What the holders of every delivery of the task begin with."""
    return f"celery:{escape_name(task_id)[:200]}:"
