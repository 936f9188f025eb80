"""Names made of task ids: two tasks whose ids differ only past the 256 characters of a fencegate
name still have scopes, holders, operation ids, results and jobs of their own, and a delivery
takes a scope over only from a delivery of its own task, never from one whose id starts alike."""

import pytest

pytest.importorskip("celery.app")  # the package, not this directory

import fencegate  # noqa: E402
from fencegate.celery import default_scope, fenced_task, ledger_job_id, result_record  # noqa: E402
from fencegate.celery.names import TaskDelivery  # noqa: E402

#: Two task ids alike in their first 300 characters.
LONG_IDS = ("t" * 300 + "-a", "t" * 300 + "-b")


def test_long_task_ids_make_names_that_fit_and_differ():
    for name_of in (default_scope, result_record, lambda task_id: ledger_job_id("charge", task_id)):
        names = [name_of(task_id) for task_id in LONG_IDS]
        assert names[0] != names[1]
        assert all(len(name) == 256 for name in names)
    assert default_scope("order-7") == "celery/order-7"  # a name that fits is kept as it is


def test_tasks_with_long_ids_each_take_a_scope_of_their_own(tasks, tenant):
    operator = tenant.operator()
    operator.register_policy("long-v1")
    operator.register_policy("long-v2")

    @tasks.app.task(bind=True, acks_late=True, name="long_id_commits")
    @fenced_task(client=tasks.client, policy_version="long-v1")
    def long_id_commits(task, fence):
        first = fence.commit(writes=[fencegate.Write("draft", 0, {"n": 1})])
        second = fence.commit(writes=[fencegate.Write("draft", 1, {"n": 2})])
        return [fence.scope, fence.fence, first.outcome, second.outcome, second.operation_id]

    runs = [long_id_commits.apply(task_id=task_id) for task_id in LONG_IDS]

    assert [run.state for run in runs] == ["SUCCESS", "SUCCESS"]
    scopes = [run.result[0] for run in runs]
    assert scopes[0] != scopes[1]
    for run in runs:
        scope, fence, first, second, operation_id = run.result
        assert (fence, first, second) == (1, "committed", "committed")
        assert len(operation_id) == 256
        assert operator.get_record(scope, "draft").value == {"n": 2}
        assert operator.get_record(scope, result_record(run.id)).exists
    cutover = operator.cutover("long-v2", "controller", prefix="celery/")
    report = operator.cutover_report(cutover["cutoverId"])
    assert report["oldJobs"]["total"] == 2


def test_a_delivery_of_another_long_id_task_waits_out_the_lease_it_meets(tasks, tenant):
    worker = tasks.client
    held_by = TaskDelivery("waits_for_other", LONG_IDS[0], 1).holder
    worker.acquire("celery/orders/o-long", holder=held_by, ttl_ms=60_000)

    @tasks.app.task(bind=True, acks_late=True, name="waits_for_other")
    @fenced_task(client=worker, scope=lambda task: "celery/orders/o-long", wait_s=0.3)
    def waits_for_other(task, fence):
        return "never run"

    outcome = waits_for_other.apply(task_id=LONG_IDS[1])

    assert outcome.state == "FAILURE"
    assert isinstance(outcome.result, fencegate.LeaseHeldError)
    assert tenant.operator().get_scope("celery/orders/o-long").holder == held_by


def test_a_delivery_never_replaces_a_task_whose_id_only_starts_with_its_own(tasks):
    worker = tasks.client
    held_by = TaskDelivery("waits_for_longer_id", "order-9:refund", 1).holder
    worker.acquire("celery/orders/o-9", holder=held_by, ttl_ms=60_000)

    @tasks.app.task(bind=True, acks_late=True, name="waits_for_longer_id")
    @fenced_task(client=worker, scope=lambda task: "celery/orders/o-9", wait_s=0.3)
    def waits_for_longer_id(task, fence):
        return "never run"

    outcome = waits_for_longer_id.apply(task_id="order-9")

    assert outcome.state == "FAILURE"
    assert isinstance(outcome.result, fencegate.LeaseHeldError)
    assert outcome.result.details["holder"] == held_by
