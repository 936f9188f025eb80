"""One fenced run through Celery's own tracer (``apply``), against a real server: what it commits,
what it records in the jobs ledger, and what it refuses."""

import pytest

pytest.importorskip("celery.app")  # the package, not this directory

import fencegate  # noqa: E402
from fencegate.celery import TaskSupersededError, fenced_task, result_record  # noqa: E402
from fencegate.celery.names import TaskDelivery  # noqa: E402


@pytest.fixture
def worker(tasks):
    return tasks.client


def test_a_run_replaced_while_its_body_runs_reports_nothing_and_stores_nothing(
    tasks, worker, tenant
):
    operator = tenant.operator()

    @tasks.app.task(bind=True, acks_late=True, name="replaced_mid_body")
    @fenced_task(client=worker)
    def replaced(task, fence, order):
        operator.takeover(fence.scope, holder="operator-7", ttl_ms=5_000)
        fence.add_intent(f"refund-{order}", "payments", {"order": order})
        return {"order": order}

    outcome = replaced.apply(args=["order-4"])

    assert outcome.state == "IGNORED"
    assert isinstance(outcome.result, TaskSupersededError)
    assert outcome.result.code == "stale_fence"
    scope = f"celery/{outcome.id}"
    assert operator.list_intents(scope=scope).items == []
    assert not operator.get_record(scope, result_record(outcome.id)).exists
    assert operator.get_scope(scope).holder == "operator-7"


def test_a_body_that_raises_releases_the_scope_and_the_run_reports_its_error(tasks, worker, tenant):
    @tasks.app.task(bind=True, acks_late=True, name="raises")
    @fenced_task(client=worker)
    def raises(task, fence):
        raise ValueError("the model answered nothing")

    outcome = raises.apply()

    assert outcome.state == "FAILURE" and isinstance(outcome.result, ValueError)
    scope = tenant.operator().get_scope(f"celery/{outcome.id}")
    assert scope.fence == 1 and scope.holder is None


def test_a_result_that_is_not_json_is_refused_before_anything_is_stored(tasks, worker, tenant):
    @tasks.app.task(bind=True, acks_late=True, name="not_json")
    @fenced_task(client=worker)
    def not_json(task, fence):
        return {"when": object()}

    outcome = not_json.apply()

    assert outcome.state == "FAILURE"
    assert isinstance(outcome.result, fencegate.InvalidRequestError)
    assert "return JSON values only" in outcome.result.message
    operator = tenant.operator()
    assert not operator.get_record(f"celery/{outcome.id}", result_record(outcome.id)).exists
    assert operator.get_scope(f"celery/{outcome.id}").holder is None


def test_commits_within_a_run_carry_the_task_and_the_fence_in_their_operation_id(tasks, worker):
    @tasks.app.task(bind=True, acks_late=True, name="two_commits")
    @fenced_task(client=worker, scope=lambda task, order: f"orders/{order}")
    def two_commits(task, fence, order):
        first = fence.commit(writes=[fencegate.Write("draft", 0, {"order": order})])
        named = fence.commit(
            writes=[fencegate.Write("draft", 1, {"order": order, "final": True})],
            operation_id="final-draft",
        )
        with pytest.raises(fencegate.InvalidRequestError, match="commit of the task's result"):
            fence.commit(writes=[fencegate.Write("draft", 2, None)], operation_id="result")
        return [first.operation_id, named.operation_id, fence.scope]

    outcome = two_commits.apply(args=["o-9"])

    assert outcome.state == "SUCCESS"
    assert outcome.result == [
        f"celery:{outcome.id}:1:1",
        f"celery:{outcome.id}:1:final-draft",
        "orders/o-9",
    ]


def test_a_result_already_stored_for_the_task_is_returned_and_other_tasks_results_are_kept(
    tasks, worker, tenant
):
    @tasks.app.task(bind=True, acks_late=True, name="stored_meanwhile")
    @fenced_task(client=worker, scope=lambda task, order: f"orders/{order}")
    def stored_meanwhile(task, fence, order):
        # As if another delivery of this task had stored its result, next to another task's.
        fence.commit(
            writes=[
                fencegate.Write(result_record("another-task"), 0, {"value": "another's"}),
                fencegate.Write(result_record(task.request.id), 0, {"value": "stored first"}),
            ]
        )
        return "computed again"

    outcome = stored_meanwhile.apply(args=["o-10"])

    assert outcome.state == "SUCCESS" and outcome.result == "stored first"
    operator = tenant.operator()
    assert operator.get_record("orders/o-10", result_record("another-task")).value == {
        "value": "another's"
    }
    assert operator.get_scope("orders/o-10").holder is None


def test_a_fenced_task_is_refused_outside_a_bound_task(tasks, worker):
    with pytest.raises(TypeError, match="runs from a worker"):
        tasks.fenced_count("order-5")

    def body(task, fence):
        return None

    plain = fenced_task(client=worker)(body)
    with pytest.raises(TypeError, match=r"@app.task\(bind=True, acks_late=True\)"):
        plain("not a task")
    with pytest.raises(TypeError, match="needs a fencegate.Client"):
        fenced_task(client="http://127.0.0.1:7420")


def test_a_cutover_covers_running_and_finished_tasks(tasks, worker, tenant):
    operator = tenant.operator()
    for version in ("celery-v1", "celery-v2"):
        operator.register_policy(version)
    cutovers = []

    @tasks.app.task(bind=True, acks_late=True, name="under_policy")
    @fenced_task(client=worker, scope=lambda task, order, **_: f"celery/orders/{order}",
                 policy_version="celery-v1")
    def under_policy(task, fence, order, cut=False):
        if cut:  # a cutover of every order while this run holds its order
            cutovers.append(operator.cutover("celery-v2", "controller", prefix="celery/orders/"))
        return {"order": order}

    finished = under_policy.apply(args=["o-1"])
    cut_short = under_policy.apply(args=["o-2"], kwargs={"cut": True})

    assert finished.state == "SUCCESS"
    assert cut_short.state == "IGNORED" and cut_short.result.code == "stale_fence"
    report = operator.cutover_report(cutovers[0]["cutoverId"])
    assert report["oldJobs"]["total"] == 2
    assert report["oldJobs"]["byState"]["succeeded"] == 1
    assert report["oldJobs"]["byState"]["running"] == 1
    assert report["staleAccepted"] == 0
    assert report["staleRejectedByReason"] == {"stale_fence": 1}
    assert operator.verify().ok


def test_a_body_learns_it_was_replaced_from_its_fence(tasks, worker, tenant):
    operator = tenant.operator()

    @tasks.app.task(bind=True, acks_late=True, name="checks_its_fence")
    @fenced_task(client=worker, ttl_ms=600)  # renewed every 200 ms
    def checks(task, fence):
        operator.takeover(fence.scope, holder="operator-8", ttl_ms=5_000)
        assert fence.lost.wait(10), "the refused renewal did not mark the fence lost"
        fence.check()
        return "never committed"

    outcome = checks.apply()

    assert outcome.state == "IGNORED" and outcome.result.code == "stale_fence"
    assert not operator.get_record(f"celery/{outcome.id}", result_record(outcome.id)).exists


def test_taking_over_from_an_earlier_delivery_needs_the_take_over_right(tasks, tenant):
    plain_worker = tenant.worker()  # a worker token without mayTakeOver
    task_id = "task-held-by-an-earlier-delivery"
    earlier = TaskDelivery("needs_the_right", task_id, 1).holder
    plain_worker.acquire(f"celery/{task_id}", holder=earlier, ttl_ms=60_000)

    @tasks.app.task(bind=True, acks_late=True, name="needs_the_right")
    @fenced_task(client=plain_worker)
    def needs_the_right(task, fence):
        return "never run"

    outcome = needs_the_right.apply(task_id=task_id)

    assert outcome.state == "FAILURE"
    assert isinstance(outcome.result, fencegate.ForbiddenError)
    assert "mayTakeOver" in outcome.result.message


def test_a_lease_of_another_holder_is_waited_out_not_taken_over(tasks, worker):
    worker.acquire("orders/o-held", holder="billing-job-3", ttl_ms=60_000)

    @tasks.app.task(bind=True, acks_late=True, name="waits")
    @fenced_task(client=worker, scope=lambda task: "orders/o-held", wait_s=0.3)
    def waits(task, fence):
        return "never run"

    outcome = waits.apply()

    assert outcome.state == "FAILURE"
    assert isinstance(outcome.result, fencegate.LeaseHeldError)
    assert outcome.result.details["holder"] == "billing-job-3"


def test_an_unreachable_store_fails_the_delivery_before_the_body_runs(tasks, free_port):
    ran = []
    unreachable = fencegate.Client(f"http://127.0.0.1:{free_port}", "fg_unused", retries=1)

    @tasks.app.task(bind=True, acks_late=True, name="store_down")
    @fenced_task(client=unreachable)
    def store_down(task, fence):
        ran.append(fence.fence)

    outcome = store_down.apply()

    assert outcome.state == "FAILURE"
    assert isinstance(outcome.result, fencegate.StoreUnavailableError)
    assert ran == []


def test_celery_checks_a_call_against_the_body_without_its_fence(tasks):
    with pytest.raises(TypeError, match="order"):
        tasks.fenced_count.delay()
    with pytest.raises(TypeError):
        tasks.fenced_count.delay("order-6", "one too many")
