"""API calls never follow a redirect, and an answer that is not fencegate's says nothing about a
write: a 302 or a proxy's 502 on a write is an unknown outcome, never a success and never a plain
server fault. A commit's is decided by its stored outcome; with none it is sent again, and after
the retries settled by abandon. With both clients."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, List

import pytest

import fencegate
from fault_proxy import GATEWAY_AFTER, GATEWAY_BEFORE, REDIRECT
from fencegate import Write


class RecordingServer:
    """Another local server a redirect points to; it records every request it gets and would
    answer each one as a committed commit."""

    def __init__(self) -> None:
        self.requests: List[Dict[str, str]] = []
        recording = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                recording.requests.append({k.lower(): v for k, v in self.headers.items()})
                body = b'{"outcome":"committed","operationId":"x","replayed":false}'
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def elsewhere():
    target = RecordingServer()
    yield target
    target.close()


def held_scope(tenant, name):
    scope = f"wf-{name}/memory"
    return scope, tenant.worker().acquire(scope, holder="w", ttl_ms=30_000)


def test_a_302_on_a_commit_is_not_followed_and_not_reported_committed(
    proxy, elsewhere, tenant, connect
):
    scope, grant = held_scope(tenant, "g1")
    proxy.redirect_to = elsewhere.url + "/v1/commit"
    # Every exchange redirected: both attempts, the reads of the stored outcome, the abandon.
    proxy.faults = [REDIRECT] * 5
    client = connect(proxy.url, tenant.worker_token, retries=1)
    with pytest.raises(fencegate.OutcomeUnknownError) as unknown:
        client.commit(scope, grant.fence, "g1", writes=[Write("summary", 0, "v")])
    assert "redirect" in str(unknown.value)
    assert elsewhere.requests == []  # the token never reached the other address
    assert tenant.worker().get_record(scope, "summary").exists is False


def test_a_302_on_a_commit_is_sent_again_when_nothing_was_stored(proxy, elsewhere, tenant, connect):
    scope, grant = held_scope(tenant, "g2")
    proxy.redirect_to = elsewhere.url + "/v1/commit"
    proxy.faults = [REDIRECT]
    result = connect(proxy.url, tenant.worker_token).commit(
        scope, grant.fence, "g2", writes=[Write("summary", 0, "v")]
    )
    assert result.outcome == "committed"
    assert [line.split()[1] for line in proxy.seen] == [
        "/v1/commit",
        "/v1/operations/g2",
        "/v1/commit",
    ]
    assert elsewhere.requests == []


def test_a_302_on_a_read_is_an_error_that_says_so(proxy, elsewhere, tenant, connect):
    proxy.redirect_to = elsewhere.url + "/v1/scopes/wf-g3%2Fmemory"
    proxy.faults = [REDIRECT]
    with pytest.raises(fencegate.InternalError) as refused:
        connect(proxy.url, tenant.worker_token).get_scope("wf-g3/memory")
    assert "never follow redirects" in refused.value.message
    assert refused.value.details == {"status": 302}
    assert elsewhere.requests == [] and len(proxy.seen) == 1


def test_a_302_on_a_lease_operation_is_an_unknown_outcome(proxy, elsewhere, tenant, connect):
    proxy.redirect_to = elsewhere.url + "/v1/leases/acquire"
    proxy.faults = [REDIRECT]
    with pytest.raises(fencegate.OutcomeUnknownError) as unknown:
        connect(proxy.url, tenant.worker_token).acquire("wf-g4/memory", holder="w", ttl_ms=30_000)
    assert unknown.value.details["status"] == 302
    assert elsewhere.requests == [] and len(proxy.seen) == 1


def test_a_gateway_502_on_a_lease_operation_is_an_unknown_outcome(proxy, tenant, connect):
    proxy.faults = [GATEWAY_AFTER]
    with pytest.raises(fencegate.OutcomeUnknownError) as unknown:
        connect(proxy.url, tenant.worker_token).acquire("wf-g5/memory", holder="w", ttl_ms=30_000)
    assert not isinstance(unknown.value, fencegate.InternalError)
    assert unknown.value.details["status"] == 502 and len(proxy.seen) == 1
    # It did take effect behind the proxy: only the store knows.
    assert tenant.operator().get_scope("wf-g5/memory").holder == "w"


def test_a_gateway_502_after_the_commit_was_stored_answers_its_stored_outcome(
    proxy, tenant, connect
):
    scope, grant = held_scope(tenant, "g6")
    proxy.faults = [GATEWAY_AFTER]
    result = connect(proxy.url, tenant.worker_token).commit(
        scope, grant.fence, "g6", writes=[Write("summary", 0, "v")]
    )
    assert result.outcome == "committed"
    assert [line.split()[1] for line in proxy.seen] == ["/v1/commit", "/v1/operations/g6"]


def test_a_gateway_502_before_the_commit_arrived_is_sent_again(proxy, tenant, connect):
    scope, grant = held_scope(tenant, "g7")
    proxy.faults = [GATEWAY_BEFORE]
    result = connect(proxy.url, tenant.worker_token).commit(
        scope, grant.fence, "g7", writes=[Write("summary", 0, "v")]
    )
    assert result.outcome == "committed" and result.replayed is False
    assert [line.split()[1] for line in proxy.seen] == [
        "/v1/commit",
        "/v1/operations/g7",
        "/v1/commit",
    ]
    assert tenant.worker().get_record(scope, "summary").value == "v"


def test_a_gateway_502_on_a_read_is_sent_again(proxy, tenant, connect):
    proxy.faults = [GATEWAY_BEFORE]
    record = connect(proxy.url, tenant.worker_token).get_record("wf-g8/memory", "summary")
    assert record.revision == 0 and len(proxy.seen) == 2
