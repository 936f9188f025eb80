"""The Celery app the tests' workers run, configured from the environment the tests give them.

Each test has a key prefix of its own on the real Redis (broker and result backend), so its
workers see only its messages. The visibility timeout is 1 s: a message a run has not
acknowledged by then is delivered again, while that run goes on.
"""

import os
import time

import redis
from celery import Celery
from celery.signals import task_postrun

import fencegate
from fencegate.celery import fenced_task

PREFIX = os.environ["FG_CELERY_PREFIX"]
REDIS_URL = os.environ["FG_CELERY_REDIS"]
#: How long the first run of a task waits for the second one to start.
WAIT_FOR_SECOND_RUN_S = 40.0

app = Celery("fencegate_celery_tests", broker=REDIS_URL, backend=REDIS_URL)
app.conf.update(
    broker_transport_options={"visibility_timeout": 1, "global_keyprefix": PREFIX},
    result_backend_transport_options={"global_keyprefix": PREFIX},
    task_default_queue=f"{PREFIX}tasks",
    task_acks_late=True,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
    worker_hijack_root_logger=False,
)

marks = redis.Redis.from_url(REDIS_URL, decode_responses=True)
client = fencegate.Client(os.environ["FENCEGATE_URL"], os.environ["FENCEGATE_TOKEN"])
POLICY = os.environ.get("FG_CELERY_POLICY") or None


def key(name: str) -> str:
    return f"{PREFIX}marks:{name}"


def start_run(task_id: str) -> int:
    """Counts the runs of the task's body; the first run waits until a second one has started."""
    run = marks.incr(key(f"runs:{task_id}"))
    if run == 1:
        deadline = time.monotonic() + WAIT_FOR_SECOND_RUN_S
        while int(marks.get(key(f"runs:{task_id}")) or 0) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    return run


@app.task(bind=True, acks_late=True)
@fenced_task(client=client, ttl_ms=6_000, policy_version=POLICY)
def fenced_effect(task, fence, order):
    run = start_run(task.request.id)
    fence.add_intent(f"charge-{order}", "payments", {"order": order, "run": run})
    return {"order": order, "run": run, "fence": fence.fence, "holder": fence.holder}


@app.task(bind=True, acks_late=True)
def plain_effect(task, order):
    run = start_run(task.request.id)
    marks.rpush(key(f"effects:{order}"), run)
    return {"order": order, "run": run}


@app.task(bind=True, acks_late=True)
@fenced_task(client=client)
def fenced_count(task, fence, order):
    runs = marks.incr(key(f"runs:{task.request.id}"))
    return {"order": order, "runs": runs, "fence": fence.fence}


@app.task(bind=True, acks_late=True)
@fenced_task(client=client, policy_version=POLICY)
def fenced_order(task, fence, order):
    return {"order": order, "fence": fence.fence}


def order_scope(task, order, amount=None):
    """The entity scope of the docs' example: every task on one order shares it."""
    return f"celery/orders/{order}"


def on_order(task, fence, effect, order, amount):
    """One task on an order: counts its runs, stages its effect, returns what it did."""
    runs = marks.incr(key(f"runs:{task.request.id}"))
    fence.add_intent(f"{effect}-{task.request.id}", "payments", {"order": order, "amount": amount})
    return {"effect": effect, "order": order, "amount": amount, "runs": runs}


@app.task(bind=True, acks_late=True)
@fenced_task(client=client, scope=order_scope)
def charge_order(task, fence, order, amount=None):
    return on_order(task, fence, "charge", order, amount)


@app.task(bind=True, acks_late=True)
@fenced_task(client=client, scope=order_scope)
def refund_order(task, fence, order, amount=None):
    return on_order(task, fence, "refund", order, amount)


#: The queue of each policy version's fleet, and which fleet this process is (FG_CELERY_FLEET):
#: "v7" or "v8" runs that version and hands the other back, "both" runs either.
VERSION_QUEUES = {"v7": f"{PREFIX}v7", "v8": f"{PREFIX}v8"}
FLEET = os.environ.get("FG_CELERY_FLEET") or "both"
#: How long a held v8 body waits for the test to let it commit.
HOLD_S = 30.0


def workflow_scope(task, workflow):
    return f"celery/wf/{workflow}"


def compact_v7(task, fence, workflow):
    return {"workflow": workflow, "version": "v7", "fence": fence.fence}


def compact_v8(task, fence, workflow):
    """Held before its result's commit while the test keeps ``hold:<workflow>`` set."""
    if marks.get(key(f"hold:{workflow}")):
        marks.set(key(f"started:{workflow}"), fence.fence)
        deadline = time.monotonic() + HOLD_S
        while marks.get(key(f"hold:{workflow}")) and time.monotonic() < deadline:
            time.sleep(0.02)
    return {"workflow": workflow, "version": "v8", "fence": fence.fence}


_BODIES = {"v7": compact_v7, "v8": compact_v8}
_RUNS = ["v7", "v8"] if FLEET == "both" else [FLEET]


@app.task(bind=True, acks_late=True)
@fenced_task(
    client=client,
    scope=workflow_scope,
    versions={version: _BODIES[version] for version in _RUNS},
    version_queues={v: q for v, q in VERSION_QUEUES.items() if v not in _RUNS},
)
def compact(task, fence, workflow):
    """Names the task and its arguments; the body of the scope's version runs."""


@task_postrun.connect
def record_state(task_id=None, state=None, **_):
    """What Celery itself made of each run: SUCCESS, IGNORED, FAILURE."""
    marks.rpush(key(f"ended:{task_id}"), str(state))


def ends(task_id: str, count: int = 1, timeout: float = 20.0) -> list:
    """How the runs of a task ended, in the order recorded, once ``count`` of them are (or the
    timeout passed). Celery sends task_postrun after it stored the result: a caller that already
    has the result may look before the end is recorded."""
    ended = key(f"ended:{task_id}")
    deadline = time.monotonic() + timeout
    while marks.llen(ended) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    return marks.lrange(ended, 0, -1)
