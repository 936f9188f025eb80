"""fenced_task by policy version, with real Celery workers on the real Redis: a worker that has
both versions runs the body of each scope's version; two fleets of one version each hand a task
of the other version to its queue; and a rollback while a v8 body runs refuses its result, after
which the task goes to the v7 queue and v7's result is the task's."""

import time

import pytest

pytest.importorskip("celery.app")  # the package, not this directory
pytest.importorskip("redis")

from fencegate.celery import fenced_task  # noqa: E402
from fencegate.errors import InvalidRequestError  # noqa: E402


def pin(tenant, versions):
    """Registers v7 and v8 and pins each workflow's scope to its version."""
    operator = tenant.operator()
    worker = tenant.worker()
    for version in ("v7", "v8"):
        operator.register_policy(version)
    for workflow, version in versions.items():
        scope = f"celery/wf/{workflow}"
        grant = worker.acquire(scope, "seed", 60_000, policy_version=version)
        worker.release(scope, "seed", grant.fence)
    return operator


def committed_versions(operator, workflow):
    page = operator.audit(scope=f"celery/wf/{workflow}", kind="commit", outcome="committed")
    return [entry["policyVersion"] for entry in page["items"]]



def ends_of(tasks, task_id):
    """How each delivery of a task ended, sorted. The worker that hands a task back records its
    IGNORED after re-sending it, so the other fleet's SUCCESS may be recorded first or before the
    IGNORED is: wait (bounded) for two ends rather than assume their order."""
    return sorted(tasks.ends(task_id, 2))

def test_a_worker_with_both_versions_runs_the_body_of_each_scopes_version(
    tasks, workers, tenant
):
    operator = pin(tenant, {"a": "v7", "b": "v8"})
    workers.start("both", FG_CELERY_FLEET="both")

    sent = [tasks.compact.apply_async(args=[workflow]) for workflow in ("a", "b", "new")]

    answers = [one.get(timeout=20)["version"] for one in sent]
    assert answers == ["v7", "v8", "v7"]  # a scope never pinned takes the first version given
    assert committed_versions(operator, "b") == ["v8"]
    assert operator.get_scope("celery/wf/new").policy_version == "v7"


def test_fleets_hand_tasks_back_and_a_rollback_mid_flight_refuses_v8(tasks, workers, tenant):
    workflows = [f"w{i}" for i in range(8)]
    operator = pin(tenant, {workflow: "v7" for workflow in workflows})
    workers.start("v7", FG_CELERY_FLEET="v7", FG_CELERY_QUEUE=tasks.VERSION_QUEUES["v7"])
    workers.start("v8", FG_CELERY_FLEET="v8", FG_CELERY_QUEUE=tasks.VERSION_QUEUES["v8"])
    operator.start_rollout(
        rollout_id="v8-ramp", from_policy="v7", to_policy="v8", prefix="celery/wf/", steps=[50, 100]
    )
    moved = [w for w in workflows if operator.get_scope(f"celery/wf/{w}").policy_version == "v8"]
    stayed = [w for w in workflows if w not in moved]
    assert len(moved) >= 2 and stayed

    # Each sent to the other fleet's queue: handed back, run by the scope's version.
    to_v8 = tasks.compact.apply_async(args=[moved[0]], queue=tasks.VERSION_QUEUES["v7"])
    to_v7 = tasks.compact.apply_async(args=[stayed[0]], queue=tasks.VERSION_QUEUES["v8"])
    assert to_v8.get(timeout=20)["version"] == "v8"
    assert to_v7.get(timeout=20)["version"] == "v7"
    assert ends_of(tasks, to_v8.id) == ["IGNORED", "SUCCESS"]

    # A v8 body holds its result while the operator rolls the rollout back.
    held = moved[1]
    tasks.marks.set(tasks.key(f"hold:{held}"), "1")
    in_flight = tasks.compact.apply_async(args=[held], queue=tasks.VERSION_QUEUES["v8"])
    deadline = time.monotonic() + 20
    while tasks.marks.get(tasks.key(f"started:{held}")) is None:
        assert time.monotonic() < deadline, "the v8 body never started"
        time.sleep(0.02)
    operator.rollback_rollout("v8-ramp", reason="v8 drops facts")
    tasks.marks.delete(tasks.key(f"hold:{held}"))

    assert in_flight.get(timeout=20)["version"] == "v7"
    assert ends_of(tasks, in_flight.id) == ["IGNORED", "SUCCESS"]
    assert committed_versions(operator, held) == ["v7"]
    report = operator.rollout_report("v8-ramp")
    assert report["rollback"]["staleAttempts"] == 1
    assert report["rollback"]["staleAccepted"] == 0
    assert operator.verify().ok


def test_contradicting_arguments_are_refused(tasks):
    def body(task, fence, workflow):
        return workflow

    with pytest.raises(InvalidRequestError, match="not both"):
        fenced_task(tasks.client, policy_version="v7", versions={"v7": body})
    with pytest.raises(InvalidRequestError, match="at least one"):
        fenced_task(tasks.client, versions={})
    with pytest.raises(InvalidRequestError, match="goes with versions"):
        fenced_task(tasks.client, version_queues={"v8": "q8"})

    def other(task, fence, order):
        return order

    with pytest.raises(TypeError, match="parameters of body"):
        fenced_task(tasks.client, versions={"v7": other})(body)
