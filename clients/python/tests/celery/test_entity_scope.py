"""Several tasks on one entity scope (``celery/orders/<order>``): each task's run commits its own
result and intents, and a later task never returns an earlier task's result. Real Celery worker on
the real Redis."""

import pytest

pytest.importorskip("celery.app")  # the package, not this directory
pytest.importorskip("redis")

from fencegate.celery import result_record  # noqa: E402


def test_each_task_on_an_order_runs_once_and_returns_its_own_result(tasks, workers, tenant):
    workers.start("a")
    sent = [
        tasks.charge_order.apply_async(args=["o-7", 1999]),
        tasks.charge_order.apply_async(args=["o-7", 500]),
        tasks.refund_order.apply_async(args=["o-7", 1999]),
    ]

    answers = [one.get(timeout=20) for one in sent]

    assert answers == [
        {"effect": "charge", "order": "o-7", "amount": 1999, "runs": 1},
        {"effect": "charge", "order": "o-7", "amount": 500, "runs": 1},
        {"effect": "refund", "order": "o-7", "amount": 1999, "runs": 1},
    ]
    for one in sent:
        assert tasks.ends(one.id) == ["SUCCESS"]
    operator = tenant.operator()
    scope = "celery/orders/o-7"
    intents = operator.list_intents(scope=scope).items
    assert sorted((i["effectKey"], i["payload"]["amount"]) for i in intents) == sorted(
        [
            (f"charge-{sent[0].id}", 1999),
            (f"charge-{sent[1].id}", 500),
            (f"refund-{sent[2].id}", 1999),
        ]
    )
    for one, answer in zip(sent, answers):
        stored = operator.get_record(scope, result_record(one.id))
        assert stored.value == {"value": answer} and stored.revision == 1
    state = operator.get_scope(scope)
    assert state.fence == 3 and state.holder is None
    assert operator.verify().ok


def test_a_second_delivery_on_an_entity_scope_returns_its_own_tasks_result(
    tasks, workers, tenant
):
    workers.start("a")
    charged = tasks.charge_order.apply_async(args=["o-8", 700])
    assert charged.get(timeout=20)["runs"] == 1
    refund = tasks.refund_order.apply_async(args=["o-8", 700])
    assert refund.get(timeout=20) == {"effect": "refund", "order": "o-8", "amount": 700, "runs": 1}

    again = tasks.charge_order.apply_async(args=["o-8", 700], task_id=charged.id)

    assert again.get(timeout=20) == {"effect": "charge", "order": "o-8", "amount": 700, "runs": 1}
    assert tasks.marks.get(tasks.key(f"runs:{charged.id}")) == "1"  # not run again
    assert tenant.operator().get_scope("celery/orders/o-8").fence == 2
