"""Names of a Celery task in fencegate: its default scope, its result record, its holders and its
jobs-ledger id. Task ids and names are foreign identifiers, escaped into pieces of names
(``_names.py``).
"""

import uuid
from dataclasses import dataclass, field
from typing import Any, Dict

from .._names import escape_name, fit_name

_MAX_NAME = 256


def default_scope(task_id: str) -> str:
    """``celery/<task id>``: one scope per task, shared by all its deliveries."""
    return f"celery/{escape_name(task_id)}"[:_MAX_NAME]


def result_record(task_id: str) -> str:
    """``result/<task id>``: the record of the task's scope that holds the task's result. A scope
    function may give many tasks one scope (``celery/orders/<order>``): each keeps its own."""
    return fit_name(f"result/{escape_name(task_id)}")


def ledger_job_id(task_name: str, task_id: str) -> str:
    """``<task name>/<task id>``, as the BullMQ integration's ``<queue>/<job id>``."""
    return f"{escape_name(task_name)}/{escape_name(task_id)}"[:_MAX_NAME]


def delivery_holder(task_id: str) -> str:
    """A holder of its own for each delivery, so a redelivery can tell it replaces one."""
    return f"{holder_prefix(task_id)}{uuid.uuid4().hex[:12]}"[:_MAX_NAME]


def holder_prefix(task_id: str) -> str:
    """What the holders of every delivery of the task begin with."""
    return f"celery:{escape_name(task_id)[:200]}:"


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

    @property
    def replaces(self) -> str:
        """The prefix of the holders this delivery may take the task's scope over from."""
        return holder_prefix(self.task_id)

    def ledger(self, *states: str) -> Dict[str, Any]:
        """The run's job entry with ``states``, as acquire, commit and release carry it."""
        return {
            "job_id": ledger_job_id(self.task_name, self.task_id),
            "attempt": self.attempt,
            "states": list(states),
        }
