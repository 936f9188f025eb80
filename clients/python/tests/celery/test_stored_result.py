"""A delivery of a task whose result is stored already returns it without running the body."""

import pytest

pytest.importorskip("celery.app")  # the package, not this directory
pytest.importorskip("redis")


def test_a_second_delivery_of_a_finished_task_returns_the_stored_result(tasks, workers, tenant):
    workers.start("a")
    first = tasks.fenced_count.apply_async(args=["order-3"])
    answer = first.get(timeout=20)
    assert answer == {"order": "order-3", "runs": 1, "fence": 1}

    again = tasks.fenced_count.apply_async(args=["order-3"], task_id=first.id)
    assert tasks.ends(first.id, 2) == ["SUCCESS", "SUCCESS"]
    assert again.get(timeout=5) == answer
    assert tasks.marks.get(tasks.key(f"runs:{first.id}")) == "1"  # the body ran once
    scope = tenant.operator().get_scope(f"celery/{first.id}")
    assert scope.fence == 1 and scope.holder is None  # the second delivery took nothing
