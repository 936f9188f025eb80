"""fenced_task: a Celery task whose deliveries take the task's scope, so one run's result counts.

With ``acks_late`` a task's message is acknowledged only when the run ends; a broker that does not
see the acknowledgement in time (kombu's Redis transport: ``visibility_timeout``) delivers it
again, to another worker, while the first run goes on: both run the body. Under this decorator
each delivery takes the task's scope (a new fence), and the body's result is committed under that
fence: only the latest delivery's commit is accepted; an earlier one is refused and ends as
Celery's ``Ignore``, reporting nothing, so the result backend shows the accepted run's result.
"""

import functools
import inspect
from typing import Any, Callable, Mapping, Optional

from celery import Task
from celery.exceptions import Retry

from .._methods import ClientApi
from .._shapes import is_blocking_client
from .names import TaskDelivery
from .options import FENCED_TASK_OPTIONS, FencedTaskOptions, ScopeOf
from .superseded import TaskSupersededError
from .task_fence import TaskFence
from .task_run import TaskRun, require_json
from .versions import VersionRouting, check_versions


def fenced_task(
    client: ClientApi,
    scope: Optional[ScopeOf] = None,
    ttl_ms: int = 30_000,
    policy_version: Optional[str] = None,
    wait_s: Optional[float] = None,
    versions: Optional[Mapping[str, Callable[..., Any]]] = None,
    version_queues: Optional[Mapping[str, str]] = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorates ``body(task, fence, *args, **kwargs)``; put it under
    ``@app.task(bind=True, acks_late=True)``.

    ``client`` needs a worker token created with the take-over right over the task scopes
    (``may_take_over=["celery/"]`` for the default ones). ``scope(task, *args, **kwargs)`` names a
    task's scope (default ``celery/<task id>``). ``ttl_ms`` is the lease, renewed every third of
    it while the body runs. ``policy_version`` pins the scope's policy and records the task in the
    jobs ledger, so a cutover covers it. ``wait_s`` (default twice the ttl) is how long a delivery
    waits out a lease held by something other than a delivery of the same task.

    ``versions`` gives a body per policy version (``{"v7": compact_v7, "v8": compact_v8}``), each
    taking the decorated function's arguments; the decorated function then only names the task and
    its arguments. A delivery acquires naming these versions and runs the body of the version the
    scope runs. ``version_queues`` names the queue of each version this worker has no body for (a
    fleet per version): a task whose scope runs such a version is sent there under its own id and
    this delivery reports nothing (Celery's ``Ignore``). Not with ``policy_version``.
    """
    if not is_blocking_client(client):
        raise TypeError(
            f"fenced_task(client=...) needs a fencegate.Client (or an object with its methods), "
            f"got {client!r}"
        )
    if scope is not None and not callable(scope):
        raise TypeError("fenced_task(scope=...) is a function (task, *args, **kwargs) -> str")
    waits = wait_s if wait_s is not None else 2 * ttl_ms / 1000.0
    by_version, queues = check_versions(versions, version_queues, policy_version)
    options = FencedTaskOptions(scope, ttl_ms, policy_version, waits, by_version, queues)
    routing = VersionRouting(options)

    def decorate(body: Callable[..., Any]) -> Callable[..., Any]:
        routing.check_signatures(body)

        @functools.wraps(body)
        def run(task: Task, *args: Any, **kwargs: Any) -> Any:
            task_id = _task_id(task, body)
            named = options.scope_of(task, task_id, args, kwargs)
            attempt = int(task.request.retries or 0) + 1
            delivery = TaskRun(client, named, TaskDelivery(task.name, task_id, attempt), options)
            found, stored = delivery.stored_result()
            if found:
                return stored
            fence = routing.start(delivery, task, args, kwargs)
            try:
                return _deliver(task, fence, delivery, routing.body_for(fence, body), args, kwargs)
            except TaskSupersededError:
                # A rollout's step or rollback moved the scope to another version meanwhile.
                routing.follow_the_scope(delivery, fence, task, args, kwargs)
                raise

        # Celery checks a call's arguments against the signature: the body's, without the fence.
        run.__signature__ = _without_fence(body)  # type: ignore[attr-defined]
        # How a producer recording the task as queued finds its scope and policy version.
        setattr(run, FENCED_TASK_OPTIONS, options)
        return run

    return decorate


def _deliver(
    task: Task,
    fence: TaskFence,
    delivery: TaskRun,
    body: Callable[..., Any],
    args: Any,
    kwargs: Any,
) -> Any:
    """Runs the body under the delivery's fence and commits its result, unless a run of the task
    committed one already."""
    try:
        # Checked again with the scope taken: a run may have committed in between.
        found, value = delivery.stored_result()
        if not found:
            value = body(task, fence, *args, **kwargs)
            require_json(value)
    except BaseException as error:
        delivery.fail(_state_after(task, error), error)
        raise
    return delivery.finish_stored(value) if found else delivery.commit_result(value)


def _task_id(task: Any, body: Callable[..., Any]) -> str:
    if not isinstance(task, Task):
        raise TypeError(
            f"{body.__name__} is a fenced task: put @fenced_task under "
            "@app.task(bind=True, acks_late=True), so it is given its task"
        )
    task_id = task.request.id
    if not isinstance(task_id, str) or task_id == "":
        raise TypeError(
            f"{task.name} has no task id: a fenced task runs from a worker, apply() or "
            "apply_async(), not as a plain function call"
        )
    return task_id


def _state_after(task: Task, error: BaseException) -> str:
    """The job's state in the ledger after the body raised ``error``."""
    if isinstance(error, Retry):
        return "retrying"
    retried = tuple(getattr(task, "autoretry_for", ()) or ())
    max_retries = task.max_retries
    if retried and isinstance(error, retried):
        if max_retries is None or task.request.retries < max_retries:
            return "retrying"
    return "failed"


def _without_fence(body: Callable[..., Any]) -> inspect.Signature:
    signature = inspect.signature(body)
    params = list(signature.parameters.values())
    if len(params) < 2:
        raise TypeError(
            f"{body.__name__} must take (task, fence, ...): a fenced task's body is given its "
            "task and its TaskFence"
        )
    return signature.replace(parameters=[params[0], *params[2:]])


__all__ = ["TaskFence", "fenced_task"]
