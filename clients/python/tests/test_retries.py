"""The retry rules of FencegateClient, through a proxy that loses exchanges: reads are sent again,
lease operations never are, and a commit whose outcome is unknown is settled by abandon. Each
test runs with the blocking Client and with the AsyncClient."""

import pytest

import fencegate
from fencegate import Write
from fault_proxy import DROP_REPLY, DROP_REQUEST, PASS


@pytest.fixture
def via(proxy, tenant, connect):
    """A worker client of the kind under test, talking through the proxy."""
    return lambda retries=3: connect(proxy.url, tenant.worker_token, timeout=10, retries=retries)


def commit_through(via, proxy, tenant, name, faults, retries=3, **options):
    """Acquires wf-NAME/memory, then commits through the proxy, `faults` on its exchanges."""
    scope = f"wf-{name}/memory"
    grant = tenant.worker().acquire(scope, holder="w", ttl_ms=30_000)
    proxy.faults = list(faults)
    return scope, grant, via(retries).commit(
        scope, grant.fence, name, writes=[Write("summary", 0, "v")], **options
    )


def paths(proxy):
    return [line.split()[1] for line in proxy.seen]


def test_a_read_whose_reply_was_lost_is_sent_again(proxy, tenant, via):
    proxy.faults = [DROP_REPLY]
    record = via().get_record("wf-r1/memory", "summary")
    assert record.revision == 0
    assert len(proxy.seen) == 2


def test_an_acquire_whose_reply_was_lost_is_not_sent_again(proxy, tenant, via):
    proxy.faults = [DROP_REPLY]
    with pytest.raises(fencegate.OutcomeUnknownError) as unknown:
        via().acquire("wf-r2/memory", holder="w", ttl_ms=30_000)
    assert unknown.value.retryable is True
    assert len(proxy.seen) == 1
    # It did take effect: the store is the one that knows.
    assert tenant.operator().get_scope("wf-r2/memory").holder == "w"


def test_a_completion_whose_reply_was_lost_is_sent_again_and_says_so(proxy, tenant, via):
    worker = tenant.worker()
    grant = worker.acquire("wf-r8/memory", holder="w", ttl_ms=30_000)
    intent = fencegate.Intent("r8-effect", "crm", {"n": 1})
    assert worker.commit("wf-r8/memory", grant.fence, "r8", intents=[intent]).committed
    [claimed] = worker.claim_intents(dispatcher="d", ttl_ms=30_000, limit=1)
    proxy.faults = [DROP_REPLY]
    # The lost attempt recorded it; the resend's claim fence is no longer current.
    with pytest.raises(fencegate.StaleClaimError) as refused:
        via().complete_intent(
            "r8-effect", claim_fence=claimed["claimFence"], outcome="delivered"
        )
    assert refused.value.details["afterLostReply"] is True
    assert len(proxy.seen) == 2
    assert worker.get_intent("r8-effect")["status"] == "delivered"


def test_an_unreachable_server_is_store_unavailable(tenant, connect):
    client = connect("http://127.0.0.1:9", tenant.worker_token, retries=1)
    with pytest.raises(fencegate.StoreUnavailableError):
        client.get_record("wf-r3/memory", "summary")
    with pytest.raises(fencegate.StoreUnavailableError):
        client.commit("wf-r3/memory", 1, "r3", writes=[Write("summary", 0, 1)])


def test_an_unknown_commit_can_be_left_unsettled_and_read_back(proxy, tenant, via):
    worker = tenant.worker()
    with pytest.raises(fencegate.OutcomeUnknownError) as unknown:
        # The commit's reply is lost, then so is the one read of its stored outcome.
        commit_through(
            via, proxy, tenant, "r4", [DROP_REPLY, DROP_REQUEST], retries=0, settle_unknown=False
        )
    assert unknown.value.details == {"operationId": "r4"}
    assert paths(proxy) == ["/v1/commit", "/v1/operations/r4"]
    grant = worker.get_scope("wf-r4/memory")
    stored = worker.get_operation("r4")
    assert stored is not None and stored.outcome == "committed"
    again = worker.commit("wf-r4/memory", grant.fence, "r4", writes=[Write("summary", 0, "v")])
    assert again.outcome == "committed" and again.replayed is True


def test_a_commit_whose_reply_was_lost_answers_its_stored_outcome(proxy, tenant, via):
    scope, _, result = commit_through(via, proxy, tenant, "r5", [DROP_REPLY])
    assert result.outcome == "committed"
    assert paths(proxy) == ["/v1/commit", "/v1/operations/r5"]
    record = tenant.worker().get_record(scope, "summary")
    assert (record.value, record.revision) == ("v", 1)


def test_a_commit_that_never_arrived_is_sent_again_and_commits(proxy, tenant, via):
    scope, _, result = commit_through(via, proxy, tenant, "r9", [DROP_REQUEST])
    assert result.outcome == "committed" and result.replayed is False
    assert paths(proxy) == ["/v1/commit", "/v1/operations/r9", "/v1/commit"]
    record = tenant.worker().get_record(scope, "summary")
    assert (record.value, record.revision) == ("v", 1)


def test_a_commit_lost_on_every_attempt_is_settled_as_abandoned_for_good(
    proxy, tenant, abandon_route, via
):
    worker = tenant.worker()
    lost_twice = [DROP_REQUEST, PASS, DROP_REQUEST, PASS]
    _, grant, result = commit_through(via, proxy, tenant, "r6", lost_twice, retries=1)
    assert result.outcome == "rejected"
    assert result.error is not None and result.error.code == "operation_abandoned"
    assert paths(proxy) == [
        "/v1/commit",
        "/v1/operations/r6",
        "/v1/commit",
        "/v1/operations/r6",
        "/v1/operations/r6/abandon",
    ]
    late = worker.commit("wf-r6/memory", grant.fence, "r6", writes=[Write("summary", 0, "v")])
    assert late.outcome == "rejected" and late.replayed is True
    assert late.error is not None and late.error.code == "operation_abandoned"
    assert worker.get_record("wf-r6/memory", "summary").exists is False


def test_bad_input_is_refused_before_it_is_sent(tenant, connect):
    worker = connect(tenant.server.url, tenant.worker_token)
    with pytest.raises(fencegate.InvalidRequestError) as refused:
        worker.get_record("..", "summary")
    assert refused.value.details == {"field": "scope"}
    with pytest.raises(fencegate.InvalidRequestError) as answered:
        worker.acquire("wf-r7/memory", holder="w", ttl_ms=5)
    assert "ttlMs" in answered.value.message


def test_a_worker_token_on_an_operator_endpoint_is_forbidden(tenant, connect):
    with pytest.raises(fencegate.ForbiddenError) as refused:
        connect(tenant.server.url, tenant.worker_token).verify()
    assert refused.value.code == "forbidden" and refused.value.http_status == 403
