"""Names of a Celery task in fencegate: its default scope, its result record, its holders and its
jobs-ledger id. Task ids and names are foreign identifiers, escaped into pieces of names
(``_names.py``); a name too long for fencegate ends with a digest of the whole (``fit_name``), so
two long task ids never share one.
"""

import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple

from .._names import escape_name, fit_name, fit_name_unmarked

#: Holders of the task's deliveries start with the task's id, cut to this (room for the rest).
_HOLDER_ID = 200
#: A delivery's holder ends with this many hex digits of its own.
_DELIVERY_DIGITS = 12
_DELIVERY_SUFFIX = re.compile(f"[0-9a-f]{{{_DELIVERY_DIGITS}}}")


#: The record earlier releases kept a task's result in: one per scope, whichever task wrote it.
SINGLE_RESULT_RECORD = "result"


def default_scope(task_id: str) -> str:
    """``celery/<task id>``: one scope per task, shared by all its deliveries."""
    return fit_name(f"celery/{escape_name(task_id)}")


def result_record(task_id: str) -> str:
    """``result/<task id>``: the record of the task's scope that holds the task's result. A scope
    function may give many tasks one scope (``celery/orders/<order>``): each keeps its own."""
    return fit_name(f"result/{escape_name(task_id)}")


def result_places(task_id: str, scope: str, own_scope: bool) -> List[Tuple[str, List[str]]]:
    """Where a run of the task may have stored its result: scopes, each with its records, to read
    in this order. Its result record first. On the task's own default scope (``own_scope``), also
    where earlier releases stored it: the single ``result`` record, and for a task id too long for
    a name the scope and record shortened the unmarked way (``-`` and the digest). None of those
    can be another task's there. On a scope the tasks share, they can (another task's id may be an
    unmarked shortened form): only the task's own result record is read."""
    records = [result_record(task_id)]
    if not own_scope:
        return [(scope, records)]
    earlier = [fit_name_unmarked(f"result/{escape_name(task_id)}"), SINGLE_RESULT_RECORD]
    records.extend(name for name in earlier if name not in records)
    places = [(scope, records)]
    earlier_scope = fit_name_unmarked(f"celery/{escape_name(task_id)}")
    if earlier_scope != scope:
        places.append((earlier_scope, earlier))
    return places


def ledger_job_id(task_name: str, task_id: str) -> str:
    """``<task name>/<task id>``, as the BullMQ integration's ``<queue>/<job id>``."""
    return fit_name(f"{escape_name(task_name)}/{escape_name(task_id)}")


def delivery_holder(task_id: str) -> str:
    """A holder of its own for each delivery, so a redelivery can tell it replaces one."""
    return f"{holder_prefix(task_id)}{uuid.uuid4().hex[:_DELIVERY_DIGITS]}"


def holder_prefix(task_id: str) -> str:
    """What the holders of every delivery of the task begin with."""
    return f"celery:{fit_name(escape_name(task_id), _HOLDER_ID)}:"


@dataclass(frozen=True)
class TaskDelivery:
    """One delivery of a task: its holder, and its entry in the jobs ledger."""

    task_name: str
    task_id: str
    attempt: int
    holder: str = field(default="")

    def __post_init__(self) -> None:
        if self.holder == "":
            object.__setattr__(self, "holder", delivery_holder(self.task_id))

    def replaces(self, holder: str) -> bool:
        """Whether ``holder`` is a delivery of the same task, which this one may take the task's
        scope over from: the task's prefix and a delivery's suffix, nothing more, so the task
        ``a`` never replaces a delivery of the task ``a:b``."""
        prefix = holder_prefix(self.task_id)
        if not holder.startswith(prefix):
            return False
        return _DELIVERY_SUFFIX.fullmatch(holder[len(prefix) :]) is not None

    def ledger(self, *states: str) -> Dict[str, Any]:
        """The run's job entry with ``states``, as acquire, commit and release carry it."""
        return {
            "job_id": ledger_job_id(self.task_name, self.task_id),
            "attempt": self.attempt,
            "states": list(states),
        }
