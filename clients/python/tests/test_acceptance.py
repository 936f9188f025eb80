"""Acceptance cases A1-A5 (competing workers) through both Python clients, each in a controlled
order and each checked on the authoritative state: records, scopes, the audit log and verify."""

import pytest

import fencegate
from fencegate import Write


@pytest.fixture
def tenant(tenant, connect):
    """Every test here runs with the blocking Client and with the AsyncClient."""
    return tenant.through(connect)


def commits_of(operator, scope):
    return [e for e in operator.audit(scope=scope, kind="commit")["items"]]


def assert_verified(operator):
    report = operator.verify()
    assert report.ok, report.violations
    assert report.violations == []


def test_a1_second_candidate_on_the_same_revision_is_stale_revision(tenant):
    worker, operator = tenant.worker(), tenant.operator()
    scope = "wf-a1/memory"
    grant = worker.acquire(scope, holder="w1", ttl_ms=30_000)
    first_read = worker.get_record(scope, "summary")
    second_read = worker.get_record(scope, "summary")
    assert first_read.revision == second_read.revision == 0

    first = worker.commit(scope, grant.fence, "a1-first",
                          writes=[Write("summary", first_read.revision, "first")])
    second = worker.commit(scope, grant.fence, "a1-second",
                           writes=[Write("summary", second_read.revision, "second")])

    assert first.outcome == "committed" and first.records[0].revision == 1
    assert second.outcome == "rejected"
    assert second.error is not None and second.error.code == "stale_revision"
    assert worker.get_record(scope, "summary").value == "first"
    audited = {e["operationId"]: (e["outcome"], e["reason"]) for e in commits_of(operator, scope)}
    assert audited["a1-first"][0] == "committed"
    assert audited["a1-second"] == ("rejected", "stale_revision")
    assert_verified(operator)


def test_a2_expired_holder_resuming_after_a_new_grant_is_stale_fence(tenant, server):
    a, b, operator = tenant.worker(), tenant.worker(), tenant.operator()
    scope = "wf-a2/memory"
    grant_a = a.acquire(scope, holder="A", ttl_ms=1_000)
    read_a = a.get_record(scope, "summary")
    # A pauses here; its lease runs out by store time.
    server.advance_clock(1_001)
    grant_b = b.acquire(scope, holder="B", ttl_ms=30_000)
    assert grant_b.fence == grant_a.fence + 1
    read_b = b.get_record(scope, "summary")
    assert b.commit(scope, grant_b.fence, "a2-b",
                    writes=[Write("summary", read_b.revision, "from B")]).committed

    late = a.commit(scope, grant_a.fence, "a2-a",
                    writes=[Write("summary", read_a.revision, "from A")])

    assert late.outcome == "rejected"
    assert late.error is not None and late.error.code == "stale_fence"
    assert late.error.details["currentFence"] == grant_b.fence
    assert operator.get_record(scope, "summary").value == "from B"
    assert_verified(operator)


def test_a3_commit_after_takeover_before_the_new_holder_writes_is_rejected(tenant):
    a, operator = tenant.worker(), tenant.operator()
    scope = "wf-a3/memory"
    grant_a = a.acquire(scope, holder="A", ttl_ms=30_000)
    assert a.get_scope(scope).fence == grant_a.fence  # A has read its authority, then pauses
    taken = operator.takeover(scope, holder="B", ttl_ms=30_000, reason="A looks stuck")
    assert taken.fence == grant_a.fence + 1

    late = a.commit(scope, grant_a.fence, "a3-a", writes=[Write("summary", 0, "from A")])

    assert late.outcome == "rejected"
    assert late.error is not None and late.error.code == "stale_fence"
    record = operator.get_record(scope, "summary")
    assert record.exists is False and record.revision == 0
    assert_verified(operator)


def test_a4_stale_renew_and_release_leave_the_replacement_untouched(tenant, server):
    stale, replacement, operator = tenant.worker(), tenant.worker(), tenant.operator()
    scope = "wf-a4/memory"
    old = stale.acquire(scope, holder="A", ttl_ms=1_000)
    server.advance_clock(1_001)
    new = replacement.acquire(scope, holder="B", ttl_ms=30_000)
    before = operator.get_scope(scope)

    with pytest.raises(fencegate.StaleFenceError) as renewed:
        stale.renew(scope, holder="A", fence=old.fence, ttl_ms=30_000)
    with pytest.raises(fencegate.StaleFenceError) as released:
        stale.release(scope, holder="A", fence=old.fence)

    assert renewed.value.code == released.value.code == "stale_fence"
    assert renewed.value.retryable is False
    after = operator.get_scope(scope)
    assert (after.holder, after.fence, after.lease_expires_at) == (
        "B", new.fence, before.lease_expires_at)
    assert_verified(operator)


def test_a5_two_tasks_on_one_record_never_lose_an_update(tenant):
    worker, operator = tenant.worker(), tenant.operator()
    scope = "wf-a5/memory"
    grant = worker.acquire(scope, holder="w", ttl_ms=30_000)
    seed = worker.commit(scope, grant.fence, "a5-seed", writes=[Write("counter", 0, 10)])
    assert seed.committed
    read_1 = worker.get_record(scope, "counter")
    read_2 = worker.get_record(scope, "counter")

    task_1 = worker.commit(scope, grant.fence, "a5-task-1", task_id="task-1",
                           writes=[Write("counter", read_1.revision, read_1.value + 1)])
    task_2 = worker.commit(scope, grant.fence, "a5-task-2", task_id="task-2",
                           writes=[Write("counter", read_2.revision, read_2.value + 5)])

    assert [task_1.outcome, task_2.outcome] == ["committed", "rejected"]
    assert task_2.error is not None and task_2.error.code == "stale_revision"
    record = operator.get_record(scope, "counter")
    assert (record.value, record.revision) == (11, read_1.revision + 1)
    assert_verified(operator)
