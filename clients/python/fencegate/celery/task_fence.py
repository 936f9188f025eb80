"""What the body of a fenced task is given: its scope, its fence, and commits under that fence."""

import threading
from typing import Iterable, List, Optional

from .._answers import catalog_error
from .._names import escape_name, fit_name
from .._route_table import COMMIT_AUTHORITY_LOST_CODES
from ..errors import InvalidRequestError
from ..models import CommitPart, CommitResult, Intent
from .delivery_lease import DeliveryLease
from .superseded import SUPERSEDED_CODES, TaskSupersededError

#: The name, within the run, of the commit that writes the task's result.
RESULT_COMMIT = "result"


def operation_id(task_id: str, fence: int, key: str) -> str:
    """The task's, the run's fence's and the commit's: a lost reply resent within the run is
    answered the stored outcome, while a replaced run's refusal never blocks its successor."""
    return fit_name(f"celery:{escape_name(task_id)}:{fence}:{key}")


class TaskFence:
    """The run's authority over the task's scope.

    ``scope`` and ``fence`` are the run's; ``lost`` is set when the run is known to have lost the
    scope (a renewal or a commit was refused), and ``check()`` raises then: a
    ``TaskSupersededError`` when another generation holds the scope. Effects that must happen
    once are intents: ``add_intent`` stages one for the commit of the task's result, so it is
    stored if and only if the result is.
    """

    def __init__(self, lease: DeliveryLease, task_id: str) -> None:
        self._lease = lease
        self._task_id = task_id
        self._commits = 0
        self.scope = lease.scope
        self.fence = lease.fence
        self.holder = lease.holder
        self.policy_version: Optional[str] = lease.grant.policy_version
        self.lost: threading.Event = lease.lost
        self.intents: List[Intent] = []

    def check(self) -> None:
        loss = self._lease.loss
        if loss is None:
            return
        if loss.code in SUPERSEDED_CODES:
            raise TaskSupersededError(loss.message, loss.details, code=loss.code)
        raise loss

    def add_intent(self, effect_key: str, target: str, payload: object) -> None:
        self.intents.append(Intent(effect_key, target, payload))

    def commit(
        self,
        writes: Iterable[CommitPart] = (),
        reads: Iterable[CommitPart] = (),
        intents: Iterable[CommitPart] = (),
        operation_id: Optional[str] = None,
    ) -> CommitResult:
        """A commit of the run before its result (the result's commit is the decorator's).

        ``operation_id`` names it within the run (default: its position, ``1``, ``2``, ...); the
        stored id adds the task and the fence.
        """
        self._commits += 1
        key = operation_id if operation_id is not None else str(self._commits)
        if key == RESULT_COMMIT:
            raise InvalidRequestError(
                f"operation_id {RESULT_COMMIT!r} names the commit of the task's result; "
                "give this commit another name",
                {"field": "operation_id"},
            )
        return self.send(key, writes=writes, reads=reads, intents=intents)

    def send(self, key: str, **request: object) -> CommitResult:
        """One commit under the run's fence; a refusal for want of authority marks it lost."""
        result = self._lease.client.commit(
            scope=self.scope,
            fence=self.fence,
            operation_id=operation_id(self._task_id, self.fence, key),
            policy_version=self.policy_version,
            **request,  # type: ignore[arg-type]
        )
        if result.error is not None and result.error.code in COMMIT_AUTHORITY_LOST_CODES:
            error = result.error
            self._lease.lose(catalog_error(error.code, error.message, error.details))
        return result
