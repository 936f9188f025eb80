"""Answers the clients do not trust, from a broken server or something in between: a client reads
at most ``max_answer_bytes`` of an answer, gives a whole exchange at most its ``timeout`` however
slowly the answer comes, skips an interim answer (``103 Early Hints``), and takes a 2xx that is
not a JSON object for what it is: an internal error on a read, an unknown outcome on a write.
With both clients, through the fault proxy in front of the real server."""

import time

import pytest

import fencegate
from fault_proxy import EARLY_HINTS, ENDLESS, ENDLESS_BYTES, ENDLESS_CHUNKED, NOT_JSON, TRICKLE
from fencegate import Write


@pytest.mark.parametrize("endless", [ENDLESS, ENDLESS_CHUNKED])
def test_an_endless_answer_is_refused_at_max_answer_bytes_without_reading_the_rest(
    proxy, tenant, connect, endless
):
    proxy.faults = [endless]
    client = connect(proxy.url, tenant.worker_token, max_answer_bytes=1 << 20, retries=0)
    with pytest.raises(fencegate.InternalError) as refused:
        client.list_scopes()
    assert "max_answer_bytes" in refused.value.message
    assert refused.value.details["status"] == 200
    # What the sockets' buffers held besides, not the 64 MiB the proxy would have sent.
    assert proxy.endless_sent < ENDLESS_BYTES // 4


def test_a_write_whose_answer_is_over_max_answer_bytes_is_an_unknown_outcome(
    proxy, tenant, connect
):
    proxy.faults = [ENDLESS]
    client = connect(proxy.url, tenant.worker_token, max_answer_bytes=1 << 20)
    with pytest.raises(fencegate.OutcomeUnknownError) as unknown:
        client.acquire("wf-u2/memory", holder="w", ttl_ms=30_000)
    assert "max_answer_bytes" in unknown.value.message
    assert len(proxy.seen) == 1


def test_a_record_longer_than_max_answer_bytes_is_refused_and_a_short_one_read(tenant, connect):
    scope = "wf-u3/memory"
    worker = tenant.worker()
    grant = worker.acquire(scope, holder="w", ttl_ms=30_000)
    worker.commit(scope, grant.fence, "u3", writes=[Write("big", 0, "x" * 200_000)])
    client = connect(tenant.server.url, tenant.worker_token, max_answer_bytes=64 * 1024)
    with pytest.raises(fencegate.InternalError) as refused:
        client.get_record(scope, "big")
    assert "65536 bytes" in refused.value.message
    assert client.get_record(scope, "small").exists is False


def test_an_answer_that_trickles_in_ends_at_the_timeout_of_the_exchange(proxy, tenant, connect):
    proxy.faults = [TRICKLE]  # a few hundred bytes, one every 50 ms: each read is quick
    client = connect(proxy.url, tenant.worker_token, timeout=1, retries=0)
    started = time.monotonic()
    with pytest.raises(fencegate.StoreUnavailableError) as lost:
        client.get_record("wf-u4/memory", "summary")
    assert time.monotonic() - started < 2.5
    assert "no answer within 1 s" in lost.value.message


def test_an_early_hints_answer_is_skipped_for_the_answer_that_follows(proxy, tenant, connect):
    proxy.faults = [EARLY_HINTS, EARLY_HINTS]
    client = connect(proxy.url, tenant.worker_token, timeout=5)
    assert client.get_record("wf-u5/memory", "summary").revision == 0
    grant = client.acquire("wf-u5/memory", holder="w", ttl_ms=30_000)
    assert grant.fence == 1 and len(proxy.seen) == 2


def test_a_read_answered_200_with_a_page_that_is_not_json_is_an_internal_error(
    proxy, tenant, connect
):
    tenant.worker().acquire("wf-u6/memory", holder="w", ttl_ms=30_000)
    proxy.faults = [NOT_JSON]
    with pytest.raises(fencegate.InternalError) as refused:
        connect(proxy.url, tenant.worker_token).get_scope("wf-u6/memory")
    assert refused.value.details["status"] == 200
    assert "not a JSON object" in refused.value.message
    assert len(proxy.seen) == 1


def test_a_write_answered_200_with_a_page_that_is_not_json_is_an_unknown_outcome(
    proxy, tenant, connect
):
    proxy.faults = [NOT_JSON]
    with pytest.raises(fencegate.OutcomeUnknownError) as unknown:
        connect(proxy.url, tenant.worker_token).acquire("wf-u7/memory", holder="w", ttl_ms=30_000)
    assert unknown.value.details["status"] == 200 and len(proxy.seen) == 1
    # It did take effect behind the page: only the store knows.
    assert tenant.operator().get_scope("wf-u7/memory").holder == "w"


def test_a_commit_answered_200_with_a_page_that_is_not_json_answers_its_stored_outcome(
    proxy, tenant, connect
):
    scope = "wf-u8/memory"
    grant = tenant.worker().acquire(scope, holder="w", ttl_ms=30_000)
    proxy.faults = [NOT_JSON]
    result = connect(proxy.url, tenant.worker_token).commit(
        scope, grant.fence, "u8", writes=[Write("summary", 0, "v")]
    )
    assert result.outcome == "committed"
    assert [line.split()[1] for line in proxy.seen] == ["/v1/commit", "/v1/operations/u8"]
