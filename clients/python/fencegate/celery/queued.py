"""Fenced tasks waiting in the broker's queue, in the jobs ledger as ``queued``.

A run records its own states (``reserved``, ``running``, then how it ended); a task still waiting
in the queue has no run yet, so the producer records it, under the current fence of the task's
scope (0 for a scope never granted): the generation it was sent under. A cutover's report then
counts it in ``oldJobs`` until a run of a newer generation takes it.

``queued`` is recorded *before* the message is published: a worker may take a message the moment
it is in the broker, and the ledger keeps each job's latest event, so a ``queued`` recorded after
the publish could land after the run's ``running`` and hide it.
"""

import logging
from typing import Any, Callable, Mapping, Optional, Sequence, Tuple

from celery import current_app
from celery.signals import before_task_publish

from .._base import FencegateError
from .._methods import ClientApi
from .names import ledger_job_id
from .options import options_of

log = logging.getLogger("fencegate.celery")

#: A receiver of Celery's ``before_task_publish`` signal.
PublishHandler = Callable[..., None]


def record_queued(
    client: ClientApi,
    task: Any,
    task_id: str,
    args: Sequence[Any] = (),
    kwargs: Optional[Mapping[str, Any]] = None,
    retries: int = 0,
) -> bool:
    """Records the fenced task ``task`` about to be sent as ``task_id`` as ``queued``.

    Call it before ``task.apply_async(args, kwargs, task_id=task_id)``: it raises what the client
    raises (``StoreUnavailableError`` when fencegate cannot be reached), so a producer that cannot
    record the task does not send it. ``retries`` is the message's retry count (the job's attempt
    is ``retries + 1``, as a run's). Returns False, recording nothing, for a task that is not
    fenced, or has no policy version (neither ``policy_version`` nor one pinned on its scope):
    the ledger is for cutovers, which move scopes between policies.
    """
    options = options_of(task)
    if options is None:
        return False
    kwargs = dict(kwargs or {})
    # A scope function may read task.request, as it does in a run: give it this message's.
    task.push_request(id=task_id, retries=retries, args=list(args), kwargs=kwargs)
    try:
        scope = options.scope_of(task, task_id, args, kwargs)
    finally:
        task.pop_request()
    current = client.get_scope(scope)
    policy_version = options.policy_version or (current.policy_version if current else None)
    if policy_version is None:
        return False
    client.record_job_events(
        [
            {
                "job_id": ledger_job_id(task.name, task_id),
                "attempt": retries + 1,
                "scope": scope,
                "policy_version": policy_version,
                "fence": current.fence if current is not None else 0,
                "state": "queued",
            }
        ]
    )
    return True


def record_queued_tasks(client: ClientApi, app: Any = None) -> PublishHandler:
    """Connects a receiver of Celery's ``before_task_publish`` signal that records every fenced
    task sent from this process (``delay``, ``apply_async``, ``send_task``, canvas, retries) as
    ``queued``, as ``record_queued`` does; returns it, for
    ``before_task_publish.disconnect(handler)``.

    ``app`` is the Celery app whose tasks are sent (default: the current app). Celery sends the
    message even when a receiver fails, so a task that could not be recorded (fencegate
    unreachable, a refusal) is sent anyway and logged as a warning; its runs still fail closed.
    A producer that must not send an unrecorded task calls ``record_queued`` itself.
    """

    def record_before_publish(
        sender: Any = None,
        body: Any = None,
        headers: Optional[Mapping[str, Any]] = None,
        **_: Any,
    ) -> None:
        task = (app or current_app).tasks.get(sender)
        if task is None or options_of(task) is None:
            return
        task_id, args, kwargs, retries = _message(body, headers or {})
        try:
            record_queued(client, task, task_id, args, kwargs, retries)
        except FencegateError as error:
            log.warning(
                "task %s[%s] was sent without being recorded queued in the jobs ledger: %s (%s)",
                sender,
                task_id,
                error.message,
                error.code,
            )

    before_task_publish.connect(record_before_publish, weak=False)
    return record_before_publish


def _message(
    body: Any, headers: Mapping[str, Any]
) -> Tuple[str, Sequence[Any], Mapping[str, Any], int]:
    """The task id, arguments and retry count of a message of Celery's protocol 2 (the default:
    the id in the headers, ``(args, kwargs, embed)`` as the body) or 1 (all in the body)."""
    if "id" in headers:
        args, kwargs = body[0], body[1]
        return str(headers["id"]), args or (), kwargs or {}, int(headers.get("retries") or 0)
    return (
        str(body["id"]),
        body.get("args") or (),
        body.get("kwargs") or {},
        int(body.get("retries") or 0),
    )
