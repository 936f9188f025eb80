"""fencegate.celery: Celery tasks with exactly one accepted result (the ``celery`` extra).

    from celery import Celery
    import fencegate
    from fencegate.celery import fenced_task, record_queued_tasks

    app = Celery("billing", broker="redis://127.0.0.1:6379/0", backend="redis://127.0.0.1:6379/0")
    client = fencegate.Client("http://127.0.0.1:7420", worker_token)

    @app.task(bind=True, acks_late=True)
    @fenced_task(client=client, policy_version="billing-v3")
    def charge(task, fence, order_id):
        fence.add_intent(f"charge-{order_id}", "payments", {"order": order_id})
        return {"order": order_id, "charged": True}

    record_queued_tasks(client, app)  # in the producer: sent tasks are in the jobs ledger, queued

docs/integrations.md describes both.
"""

from .fenced_task import fenced_task
from .names import default_scope, ledger_job_id, result_record
from .queued import record_queued, record_queued_tasks
from .superseded import TaskSupersededError
from .task_fence import TaskFence
from .versions import TaskHandedBack

__all__ = [
    "TaskFence",
    "TaskHandedBack",
    "TaskSupersededError",
    "default_scope",
    "fenced_task",
    "ledger_job_id",
    "record_queued",
    "record_queued_tasks",
    "result_record",
]
