"""Results a task stored before the upgrade still mark it done on its own default scope: the single
``result`` record, and the scope and record shortened the earlier way (``-`` and the digest) for a
task whose id is too long for a name. On an entity scope neither is read: either may be another
task's. Real Celery worker on the real Redis; the earlier results are written
through the client as the earlier release wrote them."""

import uuid

import pytest

pytest.importorskip("celery.app")  # the package, not this directory
pytest.importorskip("redis")

import fencegate
from fencegate._names import escape_name, fit_name_unmarked
from fencegate.celery import default_scope, fenced_task, result_record

#: The record one release back kept every task's result in, one per scope.
SINGLE_RESULT = "result"


def store_result(client, scope, record, value):
    """A result committed the way the earlier release committed it: created, then released."""
    grant = client.acquire(scope, holder="before-the-upgrade", ttl_ms=10_000)
    done = client.commit(
        scope=scope,
        fence=grant.fence,
        operation_id=f"before-the-upgrade:{uuid.uuid4().hex}",
        writes=[fencegate.Write(record, expect_revision=0, value={"value": value})],
        release=True,
    )
    assert done.outcome == "committed"


def long_task_id(tag):
    """An id long enough that names made of it were shortened."""
    return "t" * 300 + f"-{tag}-{uuid.uuid4().hex}"


def unmarked(prefix, task_id):
    return fit_name_unmarked(f"{prefix}/{escape_name(task_id)}")


def test_a_task_whose_result_was_stored_before_the_upgrade_on_its_own_scope_is_done(tasks, workers):
    single = str(uuid.uuid4())
    store_result(tasks.client, default_scope(single), SINGLE_RESULT, {"stored": "single"})
    long_record = long_task_id("record")
    store_result(
        tasks.client,
        unmarked("celery", long_record),
        unmarked("result", long_record),
        {"stored": "shortened record"},
    )
    long_single = long_task_id("single")
    store_result(
        tasks.client,
        unmarked("celery", long_single),
        SINGLE_RESULT,
        {"stored": "long single"},
    )
    workers.start("a")

    sent = {
        task_id: tasks.fenced_count.apply_async(args=["order-1"], task_id=task_id)
        for task_id in (single, long_record, long_single)
    }

    assert {task_id: one.get(timeout=20) for task_id, one in sent.items()} == {
        single: {"stored": "single"},
        long_record: {"stored": "shortened record"},
        long_single: {"stored": "long single"},
    }
    for task_id in sent:
        assert tasks.marks.get(tasks.key(f"runs:{task_id}")) is None  # the body never ran
        assert tasks.ends(task_id) == ["SUCCESS"]


def test_on_an_entity_scope_the_single_result_record_is_not_read(tasks, workers, tenant):
    scope = "celery/orders/o-upgrade"
    task_id = str(uuid.uuid4())
    store_result(tasks.client, scope, SINGLE_RESULT, {"stored": "some task of the order"})
    workers.start("a")

    again = tasks.charge_order.apply_async(args=["o-upgrade", 300], task_id=task_id)

    ran = {"effect": "charge", "order": "o-upgrade", "amount": 300, "runs": 1}
    assert again.get(timeout=20) == ran
    operator = tenant.operator()
    assert operator.get_record(scope, result_record(task_id)).value == {"value": ran}
    untouched = operator.get_record(scope, SINGLE_RESULT)
    assert untouched.value == {"value": {"stored": "some task of the order"}}
    assert untouched.revision == 1


def test_on_an_entity_scope_a_record_shortened_the_unmarked_way_is_not_read(tasks, tenant):
    scope = "celery/orders/o-unmarked"
    task_id = long_task_id("entity")
    store_result(tasks.client, scope, unmarked("result", task_id), {"stored": "unmarked"})

    @tasks.app.task(bind=True, acks_late=True, name="runs_on_an_order")
    @fenced_task(client=tasks.client, scope=lambda task: scope)
    def runs_on_an_order(task, fence):
        return {"ran": True}

    outcome = runs_on_an_order.apply(task_id=task_id)

    assert outcome.state == "SUCCESS" and outcome.result == {"ran": True}
    stored = tenant.operator().get_record(scope, result_record(task_id))
    assert stored.value == {"value": {"ran": True}}
