"""Fenced tasks sent to the broker are in the jobs ledger as ``queued`` (record_queued_tasks, a
receiver of Celery's before_task_publish, or record_queued called by the producer), so a
cutover's report counts the tasks still waiting under the old generation. Real Celery on the real
Redis and a real server; the ledger is read through cutover reports, as an operator reads it."""

import logging

import pytest

pytest.importorskip("celery.app")  # the package, not this directory
pytest.importorskip("redis")

from celery.signals import before_task_publish  # noqa: E402

import fencegate  # noqa: E402
from fencegate.celery import fenced_task, record_queued, record_queued_tasks  # noqa: E402

NEXT_POLICY = "celery-tasks-v2"


@pytest.fixture
def recorded(tasks):
    """The test process is the producer: it records the fenced tasks it sends."""
    handler = record_queued_tasks(tasks.client, tasks.app)
    yield handler
    before_task_publish.disconnect(handler)


def parked(tasks) -> str:
    """A queue no worker of the test consumes: a task sent there stays queued."""
    return f"{tasks.PREFIX}parked"


def old_jobs(operator, to_policy, **moved):
    """The old-generation jobs of a cutover moving ``scopes=[...]`` or ``prefix=...``."""
    cutover = operator.cutover(to_policy, "controller", **moved)
    return operator.cutover_report(cutover["cutoverId"])["oldJobs"]


def test_a_sent_task_is_queued_until_its_run_records_its_states(tasks, workers, recorded, tenant):
    waiting = tasks.fenced_order.apply_async(args=["order-11"], queue=parked(tasks))
    workers.start("a")
    ran = tasks.fenced_order.apply_async(args=["order-12"])
    assert ran.get(timeout=20) == {"order": "order-12", "fence": 1}

    operator = tenant.operator()
    operator.register_policy(NEXT_POLICY)
    jobs = old_jobs(
        operator, NEXT_POLICY, scopes=[f"celery/{waiting.id}", f"celery/{ran.id}"]
    )

    # The run's states came after the queued one recorded before its message was published.
    assert jobs["total"] == 2
    assert jobs["byState"]["queued"] == 1 and jobs["byState"]["succeeded"] == 1


def test_a_cutover_counts_a_task_still_queued_under_the_old_generation(tasks, recorded, tenant):
    operator = tenant.operator()
    for version in ("celery-v1", "celery-v2"):
        operator.register_policy(version)
    named_for = []

    def order_scope(task, order):
        named_for.append(task.request.id)
        return f"celery/orders/{order}"

    @tasks.app.task(bind=True, acks_late=True, name="per_order")
    @fenced_task(client=tasks.client, scope=order_scope, policy_version="celery-v1")
    def per_order(task, fence, order):
        return {"order": order, "fence": fence.fence}

    first = per_order.apply(args=["o-1"])  # a run: the order's scope exists, fence 1, celery-v1
    waiting = per_order.apply_async(args=["o-1"], queue=parked(tasks))  # sent, never run

    assert first.state == "SUCCESS"
    assert named_for == [first.id, waiting.id]  # the scope function saw the message's request
    jobs = old_jobs(operator, "celery-v2", prefix="celery/orders/")
    assert jobs["total"] == 2
    assert jobs["byState"]["queued"] == 1 and jobs["byState"]["succeeded"] == 1


def test_a_producer_records_a_task_itself_before_sending_it(tasks, tenant):
    task_id = "order-17-charge"
    assert record_queued(tasks.client, tasks.fenced_order, task_id, args=["order-17"]) is True
    tasks.fenced_order.apply_async(args=["order-17"], task_id=task_id, queue=parked(tasks))

    operator = tenant.operator()
    operator.register_policy(NEXT_POLICY)
    jobs = old_jobs(operator, NEXT_POLICY, scopes=[f"celery/{task_id}"])
    assert jobs["total"] == 1 and jobs["byState"]["queued"] == 1


def test_a_producer_recording_a_task_itself_learns_fencegate_is_unreachable(tasks, free_port):
    unreachable = fencegate.Client(f"http://127.0.0.1:{free_port}", "fg_unused", retries=1)

    with pytest.raises(fencegate.StoreUnavailableError):
        record_queued(unreachable, tasks.fenced_order, "task-not-sent", args=["order-13"])


def test_the_publish_hook_sends_a_task_it_could_not_record_and_says_so(tasks, free_port, caplog):
    unreachable = fencegate.Client(f"http://127.0.0.1:{free_port}", "fg_unused", retries=1)
    handler = record_queued_tasks(unreachable, tasks.app)
    try:
        with caplog.at_level(logging.WARNING, logger="fencegate.celery"):
            sent = tasks.fenced_order.apply_async(args=["order-14"], queue=parked(tasks))
    finally:
        before_task_publish.disconnect(handler)

    [warning] = [entry for entry in caplog.records if entry.name == "fencegate.celery"]
    assert sent.id in warning.getMessage() and "store_unavailable" in warning.getMessage()
    assert warning.exc_info is None  # one line, no stack trace
    assert tasks.marks.llen(tasks.PREFIX + parked(tasks)) == 1  # the message was sent


def test_only_fenced_tasks_with_a_policy_version_are_recorded(tasks, recorded, tenant):
    assert record_queued(tasks.client, tasks.plain_effect, "plain-task", args=["order-15"]) is False
    unpinned = tasks.fenced_count.apply_async(args=["order-16"], queue=parked(tasks))

    operator = tenant.operator()
    operator.register_policy(NEXT_POLICY)
    assert old_jobs(operator, NEXT_POLICY, scopes=[f"celery/{unpinned.id}"])["total"] == 0


def test_a_task_without_a_policy_version_is_recorded_under_the_one_pinned_on_its_scope(
    tasks, tenant
):
    task_id = "order-18-count"
    scope = f"celery/{task_id}"
    grant = tasks.client.acquire(scope, "earlier-run", 5_000, policy_version=tasks.POLICY)
    tasks.client.release(scope, "earlier-run", grant.fence)

    assert record_queued(tasks.client, tasks.fenced_count, task_id, args=["order-18"]) is True
    operator = tenant.operator()
    operator.register_policy(NEXT_POLICY)
    jobs = old_jobs(operator, NEXT_POLICY, scopes=[scope])
    assert jobs["total"] == 1 and jobs["byState"]["queued"] == 1
