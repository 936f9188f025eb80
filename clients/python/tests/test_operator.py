"""The rest of the API through both clients, against the real server: scopes, intents and their
delivery, policies and cutovers, job events, audit, tokens and the operational routes."""

import pytest

import fencegate
from conftest import skip_without_route
from fencegate import Intent, Write


@pytest.fixture
def tenant(tenant, connect):
    """Every test here runs with the blocking Client and with the AsyncClient."""
    return tenant.through(connect)


def test_scopes_records_and_intents_round_trip(tenant):
    worker, operator = tenant.worker(), tenant.operator()
    scope = "wf-o1/memory"
    grant = worker.acquire(scope, holder="w", ttl_ms=30_000)
    result = worker.commit(
        scope, grant.fence, "o1",
        writes=[Write("a", 0, {"n": 1}), Write("b", 0, [1, 2])],
        intents=[Intent("o1-notify", "crm", {"to": "x"})],
    )
    assert result.committed and [i["status"] for i in result.intents] == ["pending"]
    assert worker.get_operation("o1") == result
    assert worker.get_operation("o1-never") is None
    assert sorted(r.name for r in worker.list_records(scope)) == ["a", "b"]
    assert [s.scope for s in worker.list_scopes(prefix="wf-o1/").items] == [scope]
    assert worker.get_scope("wf-o1/none") is None

    claimed = worker.claim_intents(dispatcher="py-dispatcher", ttl_ms=30_000, limit=10)
    assert [i["effectKey"] for i in claimed] == ["o1-notify"]
    done = worker.complete_intent("o1-notify", claim_fence=claimed[0]["claimFence"],
                                  outcome="delivered", provider_ref="crm-1")
    assert done["status"] == "delivered"
    assert worker.get_intent("o1-notify")["providerRef"] == "crm-1"
    assert worker.get_intent("o1-missing") is None
    assert [i["status"] for i in worker.list_intents(scope=scope).items] == ["delivered"]

    released = worker.release(scope, holder="w", fence=grant.fence)
    assert released.released and not released.already_released
    assert operator.cancel(scope, reason="done").fence == grant.fence + 1
    assert operator.delete_scope(scope)["fence"] == grant.fence + 2
    assert operator.get_scope(scope).status == "deleted"
    entries = operator.audit(scope=scope)["items"]
    assert {e["kind"] for e in entries} >= {"acquire", "commit", "release", "cancel", "delete"}


def test_policies_cutovers_and_job_events(tenant, server):
    worker, operator = tenant.worker(), tenant.operator()
    scope = "wf-o2/memory"
    v7 = worker.acquire(scope, holder="v7-worker", ttl_ms=30_000, policy_version="v7")
    policy, created = operator.register_policy("v8", description="new compaction")
    assert created and policy["version"] == "v8"
    assert operator.register_policy("v8", description="new compaction")[1] is False
    assert "v8" in [p["version"] for p in operator.list_policies()]
    worker.record_job_events([{"job_id": "job-1", "scope": scope, "policy_version": "v7",
                               "fence": v7.fence, "state": "running", "attempt": 1, "at": 1}])

    moved = operator.cutover(to_policy="v8", holder="v8-controller", scopes=[scope])
    assert moved["scopes"] == 1 and moved["fences"] == [{"scope": scope, "fence": v7.fence + 1}]
    late = worker.commit(scope, v7.fence, "o2-late", policy_version="v7",
                         writes=[Write("summary", 0, "v7 says")])
    assert late.error is not None and late.error.code == "stale_fence"
    with fencegate.LeaseKeeper(worker, "wf-o2/other", "v7-worker", ttl_ms=30_000,
                               policy_version="v7") as other:
        assert other.grant.policy_version == "v7"
    report = operator.cutover_report(moved["cutoverId"])
    assert report is not None and report["staleAccepted"] == 0
    assert operator.cutover_report("no-such-cutover") is None


def test_cutovers_are_listed_newest_first(tenant, server):
    skip_without_route(server, "GET", "/v1/cutovers")
    operator = tenant.operator()
    operator.register_policy("v2")
    first = operator.cutover(to_policy="v2", holder="c", scopes=["wf-o4/a"])
    # Cutovers started in the same millisecond are ordered by id: start the second one later (the
    # server runs on the test clock, which moves only when told to).
    server.advance_clock(10)
    second = operator.cutover(to_policy="v2", holder="c", scopes=["wf-o4/b"])
    page = operator.list_cutovers(limit=1)
    assert [c["cutoverId"] for c in page.items] == [second["cutoverId"]]
    assert page.next_cursor is not None
    rest = operator.list_cutovers(limit=10, cursor=page.next_cursor)
    assert [c["cutoverId"] for c in rest.items] == [first["cutoverId"]]


def test_tokens_and_operational_routes(tenant, server, admin):
    client = tenant.worker()
    assert client.healthz() is not None
    assert client.readyz() is True
    assert "fencegate" in client.metrics()
    assert "/v1/commit" in client.openapi()["paths"]

    extra = admin.create_token(tenant=tenant.name, role="worker", label="short-lived")
    assert fencegate.Client(server.url, extra["token"]).get_scope("wf-o3/x") is None
    admin.revoke_token(extra["id"])
    try:
        fencegate.Client(server.url, extra["token"]).get_scope("wf-o3/x")
        raise AssertionError("a revoked token was accepted")
    except fencegate.UnauthorizedError as refused:
        assert refused.http_status == 401
    assert tenant.worker_token not in repr(client)


def test_tokens_are_listed_without_secrets(tenant, server, admin):
    skip_without_route(server, "GET", "/v1/admin/tokens")
    listed = admin.list_tokens(tenant=tenant.name)
    assert sorted(t["role"] for t in listed) == ["operator", "worker"]
    assert all("token" not in t and "hash" not in str(t).lower() for t in listed)


def test_lease_job_states_and_refusal_codes(tenant, server):
    skip_without_route(server, "GET", "/v1/cutovers")
    worker, operator = tenant.worker(), tenant.operator()
    scope = "wf-o5/job"
    job = {"job_id": "q/1", "attempt": 1, "states": ["reserved", "running"]}
    grant = worker.acquire(scope, holder="w", ttl_ms=30_000, policy_version="v7", job=job)
    done = {"job_id": "q/1", "attempt": 1, "states": ["succeeded"]}
    assert worker.release(scope, holder="w", fence=grant.fence, job=done).released
    operator.register_policy("v8")
    moved = operator.cutover(to_policy="v8", holder="c", scopes=[scope])
    report = operator.cutover_report(moved["cutoverId"])
    assert report["oldJobs"]["total"] == 1 and report["oldJobs"]["byState"]["succeeded"] == 1

    sender = "wf-o5/sender"
    intents = [Intent("o5-send", "crm", {"to": "x"})]
    grant = worker.acquire(sender, holder="w", ttl_ms=30_000)
    assert worker.commit(sender, grant.fence, "o5", writes=[], intents=intents).committed
    claimed = worker.claim_intents(dispatcher="py-dispatcher", ttl_ms=30_000, limit=10)
    failed = worker.complete_intent("o5-send", claim_fence=claimed[0]["claimFence"],
                                    outcome="failed", retryable=False,
                                    error="target_not_allowed", code="target_not_allowed")
    assert failed["status"] == "failed"
    entries = operator.audit(scope=sender, kind="intent")["items"]
    assert [e["reason"] for e in entries if e.get("outcome") == "failed"] == ["target_not_allowed"]


def test_last_commit_releases_the_lease_with_the_job_state(tenant, server):
    skip_without_route(server, "GET", "/v1/cutovers")
    worker, operator = tenant.worker(), tenant.operator()
    scope = "wf-o6/job"
    job = {"job_id": "q/6", "attempt": 1, "states": ["reserved", "running"]}
    grant = worker.acquire(scope, holder="w", ttl_ms=30_000, policy_version="v7", job=job)
    done = {"job_id": "q/6", "attempt": 1, "states": ["succeeded"]}
    result = worker.commit(scope, grant.fence, "o6", writes=[Write("out", 0, "done")],
                           release=True, job=done)
    assert result.committed
    state = worker.get_scope(scope)
    assert state is not None and state.holder is None and state.fence == grant.fence
    kinds = [e["kind"] for e in operator.audit(scope=scope)["items"]]
    assert kinds == ["acquire", "commit", "release"]
    operator.register_policy("v8")
    moved = operator.cutover(to_policy="v8", holder="c", scopes=[scope])
    report = operator.cutover_report(moved["cutoverId"])
    assert report["oldJobs"]["total"] == 1 and report["oldJobs"]["byState"]["succeeded"] == 1
