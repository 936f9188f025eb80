"""Fenced tasks by policy version: a body per version, and the hand-back of a task whose scope runs
a version this worker has no body for, to that version's queue.

A worker that has every version (prompt or config versions in one process) acquires naming them
all and runs the body of the version the grant says. A fleet per version (blue/green, a queue
each) is answered ``policy_mismatch`` for a scope of another version; its
``details["currentPolicyVersion"]`` names the queue the task belongs to. The task is sent there
under its own id, so its scope and its stored result stay the task's: a hand-back sent twice (the
worker died before acknowledging) runs once, the second delivery returning the first's result.
"""

import inspect
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

from celery import Task
from celery.exceptions import Ignore

from .._base import FencegateError
from ..errors import InvalidRequestError, PolicyMismatchError
from .options import FencedTaskOptions
from .task_fence import TaskFence
from .task_run import TaskRun


# celery ships no type information, so its Ignore is Any to a type checker.
class TaskHandedBack(Ignore):  # type: ignore[misc]
    """Raised by a delivery that sent its task to the queue of the scope's version: Celery
    acknowledges the message and reports nothing for it; the run in that queue reports the task's
    state and result."""

    def __init__(self, task_id: str, policy_version: str, queue: str) -> None:
        super().__init__(f"task {task_id} runs policy {policy_version}: sent to queue {queue}")
        self.task_id = task_id
        self.policy_version = policy_version
        self.queue = queue


def check_versions(
    versions: Optional[Mapping[str, Callable[..., Any]]],
    version_queues: Optional[Mapping[str, str]],
    policy_version: Optional[str],
) -> Tuple[Dict[str, Callable[..., Any]], Dict[str, str]]:
    """The bodies and the queues by version, refusing arguments that contradict each other."""
    if versions is None:
        if version_queues:
            raise InvalidRequestError(
                "fenced_task(version_queues=...) goes with versions=: name the versions this "
                "worker runs",
                {"field": "version_queues"},
            )
        return {}, {}
    if policy_version is not None:
        raise InvalidRequestError(
            "fenced_task takes versions= or policy_version=, not both", {"field": "versions"}
        )
    if len(versions) == 0:
        raise InvalidRequestError(
            'fenced_task(versions=...) names at least one version: {"v7": body_v7}',
            {"field": "versions"},
        )
    for version, body in versions.items():
        if not isinstance(version, str) or not callable(body):
            raise InvalidRequestError(
                f"fenced_task(versions=...) maps version names to bodies; {version!r} does not",
                {"field": "versions"},
            )
    queues = dict(version_queues or {})
    for version, queue in queues.items():
        if not isinstance(queue, str) or queue == "":
            raise InvalidRequestError(
                f"version_queues[{version!r}] must be a queue name", {"field": "version_queues"}
            )
    return dict(versions), queues


class VersionRouting:
    """Which body a delivery runs, or where its task goes instead."""

    def __init__(self, options: FencedTaskOptions) -> None:
        self.options = options

    def check_signatures(self, task_function: Callable[..., Any]) -> None:
        """Each version's body takes the decorated function's parameters: Celery checks a call's
        arguments against that one, and the body is then called with them."""
        expected = _parameters(task_function)
        for version, body in self.options.versions.items():
            if _parameters(body) != expected:
                raise TypeError(
                    f"the body of version {version} must take the parameters of "
                    f"{task_function.__name__}: ({', '.join(expected)})"
                )

    def start(
        self, delivery: TaskRun, task: Task, args: Sequence[Any], kwargs: Mapping[str, Any]
    ) -> TaskFence:
        """Takes the task's scope, or hands the task back when the scope runs a version this
        worker has no body for. Nothing is written under another version's scope."""
        try:
            fence = delivery.start()
        except PolicyMismatchError as mismatch:
            current = mismatch.details.get("currentPolicyVersion")
            queue = self.options.version_queues.get(current) if isinstance(current, str) else None
            if queue is None or not isinstance(current, str):
                raise
            raise self._hand_back(task, args, kwargs, current, queue) from None
        version = fence.policy_version
        if not self.options.versions or version in self.options.versions:
            return fence
        # A redelivery took over a scope another version runs now: give it back unwritten.
        delivery.give_back()
        queue = self.options.version_queues.get(version or "")
        if version is None or queue is None:
            raise PolicyMismatchError(
                f"scope {delivery.scope} runs policy {version}; this worker has bodies for "
                f"{', '.join(self.options.versions)} and no queue for it in version_queues",
                {"scope": delivery.scope, "currentPolicyVersion": version},
            )
        raise self._hand_back(task, args, kwargs, version, queue)

    def body_for(self, fence: TaskFence, body: Callable[..., Any]) -> Callable[..., Any]:
        """The body of the scope's version; the decorated one for a task without versions."""
        if not self.options.versions:
            return body
        return self.options.versions[fence.policy_version or ""]

    def follow_the_scope(
        self,
        delivery: TaskRun,
        fence: TaskFence,
        task: Task,
        args: Sequence[Any],
        kwargs: Mapping[str, Any],
    ) -> None:
        """After the run was superseded: when the scope now runs another version (a rollout's
        step or rollback moved it), sends the task to that version's queue, or back to its own
        queue when this worker has that version's body too. Otherwise (a redelivery or a takeover
        replaced the run) it returns: the task is someone else's to finish."""
        if not self.options.versions:
            return
        try:
            now = delivery.client.get_scope(delivery.scope)
        except FencegateError:
            return  # the refusal stands; the broker or an operator decides what runs next
        version = now.policy_version if now is not None else None
        if version is None or version == fence.policy_version:
            return
        queue = self.options.version_queues.get(version)
        if queue is None and version in self.options.versions:
            queue = _own_queue(task)
        if queue is not None:
            raise self._hand_back(task, args, kwargs, version, queue)

    @staticmethod
    def _hand_back(
        task: Task, args: Sequence[Any], kwargs: Mapping[str, Any], version: str, queue: str
    ) -> TaskHandedBack:
        task_id = str(task.request.id)
        task.apply_async(args=tuple(args), kwargs=dict(kwargs), task_id=task_id, queue=queue)
        return TaskHandedBack(task_id, version, queue)


def _own_queue(task: Task) -> Optional[str]:
    """The queue the delivery came from (kombu's routing key), if the broker said."""
    info = getattr(task.request, "delivery_info", None) or {}
    routing_key = info.get("routing_key") if isinstance(info, dict) else None
    return routing_key if isinstance(routing_key, str) and routing_key != "" else None


def _parameters(function: Callable[..., Any]) -> Tuple[str, ...]:
    return tuple(inspect.signature(function).parameters)
