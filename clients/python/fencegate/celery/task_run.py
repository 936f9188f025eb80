"""One delivery of a fenced task, from its stored result (if any) to the commit of its own.

The result is a record of the task's scope named by the task's id (``result/<task id>``), written
by the commit that also releases the scope and records the job ``succeeded``, and created only if
absent: a task's result is written once, and every later delivery of that task returns it without
running the body. Other tasks sharing the scope have results of their own. On its default scope a
task's result stored by an earlier release counts too (``result_places``).
"""

import json
from typing import Any, List, Optional, Tuple

from .._answers import catalog_error
from .._base import FencegateError
from .._methods import ClientApi
from ..errors import InvalidRequestError
from ..models import RecordState, Write
from .delivery_lease import DeliveryLease
from .names import TaskDelivery, result_places, result_record
from .options import FencedTaskOptions
from .superseded import SUPERSEDED_CODES, TaskSupersededError
from .task_fence import RESULT_COMMIT, TaskFence


class TaskRun:
    def __init__(
        self, client: ClientApi, scope: str, delivery: TaskDelivery, options: FencedTaskOptions
    ) -> None:
        self.client = client
        self.scope = scope
        self.delivery = delivery
        self.lease = DeliveryLease(client, scope, delivery, options)
        self.fence: Optional[TaskFence] = None
        self.result_record = result_record(delivery.task_id)
        self.result_places = result_places(delivery.task_id, scope, options.scope is None)

    def stored_result(self) -> Tuple[bool, Any]:
        """``(True, result)`` when a run of the task has committed its result."""
        for scope, names in self.result_places:
            for record in self.client.read_records(scope, records=names).records:
                if _is_result(record):
                    return True, record.value["value"]
        return False, None

    def start(self) -> TaskFence:
        self.lease.start()
        self.fence = TaskFence(self.lease, self.delivery.task_id)
        return self.fence

    def give_back(self) -> None:
        """Releases the scope taken without running the body: the task belongs to another
        version's queue."""
        self.lease.stop(release=True)

    def commit_result(self, value: Any) -> Any:
        """Commits the result with the staged intents, releasing the scope; returns the result."""
        fence = self._started()
        try:
            result = fence.send(
                RESULT_COMMIT,
                writes=[Write(self.result_record, expect_revision=0, value={"value": value})],
                intents=fence.intents,
                release=True,
                job=self.delivery.ledger("succeeded"),
            )
        finally:
            # Committed, the scope is released; refused or unknown, the run is over either way.
            self.lease.stop(release=False)
        if result.error is None:
            return value
        error = result.error
        if error.code in SUPERSEDED_CODES:
            raise TaskSupersededError(error.message, error.details, code=error.code)
        if error.code == "stale_revision":
            # Another delivery of this task committed its result first; that one is the task's.
            self._release(["succeeded"])
            return self.stored_result()[1]
        self._release(["failed"])
        raise catalog_error(error.code, error.message, error.details)

    def finish_stored(self, value: Any) -> Any:
        """The result was found only once the scope was taken: releases it, returns the result."""
        self.lease.stop(release=False)
        self._release(["succeeded"])
        return value

    def fail(self, state: str, cause: BaseException) -> None:
        """The body raised: records ``state`` with the release; raises ``TaskSupersededError`` when
        the run turns out to have been replaced, so Celery reports nothing for it."""
        self.lease.stop(release=False)
        loss = self.lease.loss
        if loss is not None and loss.code in SUPERSEDED_CODES:
            raise TaskSupersededError(loss.message, loss.details, code=loss.code) from cause
        self._release([state], cause)

    def _release(self, states: List[str], cause: Optional[BaseException] = None) -> None:
        try:
            self.client.release(
                self.scope, self.lease.holder, self.lease.fence, job=self.delivery.ledger(*states)
            )
        except FencegateError as refusal:
            if refusal.code in SUPERSEDED_CODES:
                raise TaskSupersededError(
                    refusal.message, refusal.details, code=refusal.code
                ) from cause
            # Otherwise (the store unreachable, the lease run out) the lease simply lapses.

    def _started(self) -> TaskFence:
        if self.fence is None:
            raise RuntimeError("the run has not taken its scope")
        return self.fence


def _is_result(record: RecordState) -> bool:
    """A result is stored as ``{"value": result}``; a record of another shape is not one."""
    return record.exists and isinstance(record.value, dict) and record.value.keys() == {"value"}


def require_json(value: Any) -> None:
    """Refuses, before anything is sent, a result the store could not hold."""
    try:
        json.dumps(value)
    except (TypeError, ValueError) as error:
        raise InvalidRequestError(
            f"a fenced task's return value is stored as JSON; return JSON values only ({error})",
            {"field": "result"},
        ) from None
