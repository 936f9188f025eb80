"""Paging a scope's records by prefix, direction and cursor, cancel_intents following the pages
of a cancel to the last, and a worker token with the take-over right, through both clients
against the real server."""

import pytest

import fencegate
from fencegate import Intent, Write

#: The most intents one page of cancel-intents looks at (the server's CANCEL_INTENTS_PAGE).
CANCEL_PAGE = 50


def write_records(worker, scope, names):
    grant = worker.acquire(scope, holder="w", ttl_ms=30_000)
    writes = [Write(name, 0, {"name": name}) for name in names]
    assert worker.commit(scope, grant.fence, f"{scope}-seed", writes=writes).committed


def test_records_are_paged_by_prefix_direction_and_cursor(tenant, connect):
    worker = connect(tenant.server.url, tenant.worker_token)
    scope = "wf-p1/memory"
    write_records(tenant.worker(), scope, ["cp/1", "cp/2", "cp/3", "cp/4", "cp/5", "other"])

    first = worker.list_records_page(scope, prefix="cp/", direction="desc", limit=2)
    assert [r.name for r in first.items] == ["cp/5", "cp/4"]
    assert all(isinstance(r, fencegate.RecordState) for r in first.items)
    assert first.next_cursor is not None
    second = worker.list_records_page(
        scope, prefix="cp/", direction="desc", limit=2, cursor=first.next_cursor
    )
    assert [r.name for r in second.items] == ["cp/3", "cp/2"]
    last = worker.list_records_page(
        scope, prefix="cp/", direction="desc", limit=2, cursor=second.next_cursor
    )
    assert [r.name for r in last.items] == ["cp/1"]
    assert last.next_cursor is None

    ascending = worker.list_records_page(scope)
    assert [r.name for r in ascending.items] == ["cp/1", "cp/2", "cp/3", "cp/4", "cp/5", "other"]
    assert ascending.next_cursor is None


def test_a_bad_page_query_is_refused_with_what_to_fix(tenant, connect):
    worker = connect(tenant.server.url, tenant.worker_token)
    with pytest.raises(fencegate.InvalidRequestError) as refused:
        worker.list_records_page("wf-p2/memory", direction="sideways")
    assert "direction" in refused.value.message
    with pytest.raises(fencegate.InvalidRequestError):
        worker.list_records_page("wf-p2/memory", limit=0)


def test_cancel_intents_follows_every_page_to_the_last(tenant, connect):
    worker = connect(tenant.server.url, tenant.worker_token)
    scope = "wf-p3/memory"
    superseded = worker.acquire(scope, holder="run-1", ttl_ms=30_000)
    keys = [f"p3-{i:03d}" for i in range(7 * 16)]
    commits = [
        {
            "scope": scope,
            "fence": superseded.fence,
            "operation_id": f"p3-{start}",
            "intents": [Intent(key, "crm", {}) for key in keys[start : start + 16]],
        }
        for start in range(0, len(keys), 16)
    ]
    assert all(result.committed for result in worker.commit_many(commits))
    current = connect(tenant.server.url, tenant.operator_token).takeover(
        scope, holder="run-2", ttl_ms=30_000
    )

    cancelled = worker.cancel_intents(scope, "run-2", current.fence, superseded.fence)
    # More than two pages hold: every one of them was asked for, in order, each key once.
    assert len(keys) > 2 * CANCEL_PAGE
    assert cancelled == keys
    assert worker.get_intent(keys[-1])["status"] == "cancelled"
    # Sent again, every page answers the same and nothing more is cancelled.
    assert worker.cancel_intents(scope, "run-2", current.fence, superseded.fence) == keys


def test_a_worker_token_with_the_take_over_right_takes_over_only_its_prefixes(tenant, connect):
    admin = connect(tenant.server.url, tenant.server.admin_token)
    created = admin.create_token(
        tenant=tenant.name, role="worker", label="rescuer", may_take_over=["jobs/"]
    )
    assert created["mayTakeOver"] == ["jobs/"]
    rescuer = connect(tenant.server.url, created["token"])
    worker = tenant.worker()
    held = worker.acquire("jobs/j1", holder="frozen", ttl_ms=60_000)
    grant = rescuer.takeover("jobs/j1", holder="rescuer", ttl_ms=30_000)
    assert (grant.holder, grant.fence) == ("rescuer", held.fence + 1)

    worker.acquire("other/j1", holder="frozen", ttl_ms=60_000)
    with pytest.raises(fencegate.ForbiddenError):
        rescuer.takeover("other/j1", holder="rescuer", ttl_ms=30_000)
    with pytest.raises(fencegate.ForbiddenError):
        worker.takeover("jobs/j1", holder="plain worker", ttl_ms=30_000)
