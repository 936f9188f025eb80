"""A task longer than the broker's visibility timeout is delivered to a second worker while its
first run still runs (kombu's Redis transport, acks_late): with fenced_task exactly one run's
effect is accepted and Celery reports that run; without it, both runs' effects happen."""

import time

import pytest

pytest.importorskip("celery.app")  # the package, not this directory
pytest.importorskip("redis")

from fencegate.celery import result_record  # noqa: E402


def redeliver_while_running(tasks, workers, task, order):
    """Worker A runs the task; once the visibility timeout has passed, worker B starts, restores
    the unacknowledged message and runs it too, while A's run waits for B's to start."""
    workers.start("a")
    sent = task.apply_async(args=[order])
    runs = tasks.key(f"runs:{sent.id}")
    wait_for(lambda: int(tasks.marks.get(runs) or 0) >= 1, "the first run to start", workers)
    time.sleep(1.5)  # past the 1 s visibility timeout
    workers.start("b")
    ended = tasks.key(f"ended:{sent.id}")
    wait_for(lambda: tasks.marks.llen(ended) >= 2, "both runs to end", workers)
    assert int(tasks.marks.get(runs)) == 2, "the task ran once only: it was not redelivered"
    return sent, sorted(tasks.marks.lrange(ended, 0, -1))


def wait_for(condition, what, workers, timeout=45.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}; workers said:\n{workers.output()}")


def test_a_redelivered_fenced_task_has_exactly_one_accepted_effect(tasks, workers, tenant):
    sent, states = redeliver_while_running(tasks, workers, tasks.fenced_effect, "order-1")

    assert states == ["IGNORED", "SUCCESS"]  # the replaced run reported nothing
    winner = sent.get(timeout=10)
    assert winner["run"] == 2  # the redelivery, which took the scope over
    operator = tenant.operator()
    scope = f"celery/{sent.id}"
    intents = operator.list_intents(scope=scope).items
    assert [(i["effectKey"], i["payload"]) for i in intents] == [
        ("charge-order-1", {"order": "order-1", "run": 2})
    ]
    stored = operator.get_record(scope, result_record(sent.id))
    assert stored.value == {"value": winner} and stored.revision == 1
    state = operator.get_scope(scope)
    assert state.fence == winner["fence"] == 2 and state.holder is None  # released by the commit
    refused = operator.audit(scope=scope, kind="commit", outcome="rejected")["items"]
    assert [(entry["reason"], entry["fence"]) for entry in refused] == [("stale_fence", 1)]
    assert refused[0]["operationId"] == f"celery:{sent.id}:1:result"
    report = operator.verify()
    assert report.ok and report.violations == []
    # Both deliveries are in the jobs ledger; the job's last state is the winner's.
    operator.register_policy("celery-tasks-v2")
    cutover = operator.cutover("celery-tasks-v2", "controller", scopes=[scope])
    jobs = operator.cutover_report(cutover["cutoverId"])["oldJobs"]
    assert jobs["total"] == 1 and jobs["byState"]["succeeded"] == 1


def test_without_the_decorator_both_runs_have_their_effect(tasks, workers):
    sent, states = redeliver_while_running(tasks, workers, tasks.plain_effect, "order-2")

    assert states == ["SUCCESS", "SUCCESS"]
    assert sorted(tasks.marks.lrange(tasks.key("effects:order-2"), 0, -1)) == ["1", "2"]
    assert sent.get(timeout=10)["order"] == "order-2"
