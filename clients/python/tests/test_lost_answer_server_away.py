"""A write goes out, the server takes it, and the connection dies before any byte of its answer,
with the server unreachable a while after (a restart, a failover). On a kept-alive connection
that looks like a connection dropped while idle, so the AsyncClient sends the request once more
on a new connection, which cannot connect. The first try had been written: the exchange stays a
lost reply, never "nothing was sent". A commit is then an unknown outcome (it was stored), and a
completion sent again later says the lost attempt may be the one that recorded it. Each test runs
with both clients, through a relay that keeps connections open as the server does."""

import socket
import struct
import threading
import time
from typing import Dict, List, Optional
from urllib.parse import urlparse

import pytest

import fencegate
from fault_proxy import close_both
from fencegate import Intent, Write


class VanishingRelay:
    """Passes bytes both ways, one upstream connection per client connection. After
    ``vanish_on(prefix)``, the next request whose first line starts with ``prefix`` reaches the
    server; when its answer comes back, the relay stops listening (new connections are refused)
    and resets the client's connection, so no byte of the answer arrives. It listens again
    ``back_after`` seconds later, or never when that is None."""

    def __init__(self, upstream: str) -> None:
        parsed = urlparse(upstream)
        self._upstream = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self._port}"
        self._prefix: Optional[bytes] = None
        self._back_after: Optional[float] = None
        #: Client connections whose next answer bytes make the relay vanish.
        self._doomed: Dict[socket.socket, bool] = {}
        #: First lines of the requests whose answers were lost.
        self.lost: List[str] = []
        self._listen()

    def vanish_on(self, prefix: str, back_after: Optional[float] = None) -> None:
        self._prefix, self._back_after = prefix.encode(), back_after

    def close(self) -> None:
        self._stop_listening()

    def _listen(self) -> None:
        threading.Thread(target=self._serve, args=(self._listener,), daemon=True).start()

    def _stop_listening(self) -> None:
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes accept(), refuses what comes next
        except OSError:
            pass
        self._listener.close()

    def _listen_again(self, after: float) -> None:
        time.sleep(after)
        self._listener = socket.create_server(("127.0.0.1", self._port))
        self._listen()

    def _serve(self, listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            up = socket.create_connection(self._upstream)
            threading.Thread(target=self._requests, args=(conn, up), daemon=True).start()
            threading.Thread(target=self._answers, args=(up, conn), daemon=True).start()

    def _requests(self, conn: socket.socket, up: socket.socket) -> None:
        try:
            while chunk := conn.recv(65536):
                if self._prefix is not None and chunk.startswith(self._prefix):
                    self._prefix = None
                    self._doomed[conn] = True
                    self.lost.append(chunk.split(b"\r\n", 1)[0].decode())
                up.sendall(chunk)
        except OSError:
            pass
        if self._doomed.get(conn):
            # SO_LINGER 0: the close sends a reset. It is done here, where the socket is read: a
            # socket closed while another thread waits on it stays open until that wait ends.
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()
            up.close()
            return
        close_both(conn, up)

    def _answers(self, up: socket.socket, conn: socket.socket) -> None:
        first = up.recv(65536)
        while first and not self._doomed.get(conn):
            conn.sendall(first)
            first = up.recv(65536)
        if not first:
            close_both(conn, up)
            return
        # The server answered: the answer is lost, and the server is gone for a while.
        self._stop_listening()
        if self._back_after is not None:
            threading.Thread(target=self._listen_again, args=(self._back_after,)).start()
        conn.shutdown(socket.SHUT_RD)  # the reading thread resets it


@pytest.fixture
def relay(tenant):
    relay = VanishingRelay(tenant.server.url)
    yield relay
    relay.close()


def test_a_commit_stored_before_its_answer_was_lost_is_an_unknown_outcome(relay, tenant, connect):
    scope = "wf-v1/memory"
    grant = tenant.worker().acquire(scope, holder="w", ttl_ms=30_000)
    client = connect(relay.url, tenant.worker_token)
    client.get_record(scope, "summary")  # the AsyncClient keeps this connection for the commit
    relay.vanish_on("POST /v1/commit")
    with pytest.raises(fencegate.OutcomeUnknownError) as unknown:
        client.commit(scope, grant.fence, "v1", writes=[Write("summary", 0, "v")])
    assert unknown.value.details["operationId"] == "v1"
    assert relay.lost == ["POST /v1/commit HTTP/1.1"]
    # The commit was stored: "nothing was changed" would have been false.
    assert tenant.worker().get_record(scope, "summary").revision == 1


def test_a_completion_recorded_before_its_answer_was_lost_says_so_when_sent_again(
    relay, tenant, connect
):
    worker = tenant.worker()
    grant = worker.acquire("wf-v2/memory", holder="w", ttl_ms=30_000)
    effect = Intent("v2-effect", "crm", {"n": 1})
    assert worker.commit("wf-v2/memory", grant.fence, "v2", intents=[effect]).committed
    # Retries enough to outlast the server's absence (each pause is at most a second).
    client = connect(relay.url, tenant.worker_token, retries=8)
    [claimed] = client.claim_intents(dispatcher="d", ttl_ms=30_000, limit=1)
    relay.vanish_on("POST /v1/intents/", back_after=0.3)
    with pytest.raises(fencegate.StaleClaimError) as refused:
        client.complete_intent("v2-effect", claim_fence=claimed["claimFence"], outcome="delivered")
    assert refused.value.details["afterLostReply"] is True
    assert relay.lost == ["POST /v1/intents/v2-effect/complete HTTP/1.1"]
    assert worker.get_intent("v2-effect")["status"] == "delivered"


def test_an_idempotent_write_taken_before_its_answer_was_lost_is_an_unknown_outcome(
    relay, tenant, connect
):
    client = connect(relay.url, tenant.operator_token, retries=1)
    client.list_policies()  # the AsyncClient keeps this connection for the write
    relay.vanish_on("POST /v1/policies")
    with pytest.raises(fencegate.OutcomeUnknownError):
        client.register_policy("v9", description="taken, then the server went away")
    assert relay.lost == ["POST /v1/policies HTTP/1.1"]
    # The policy was registered: "nothing was changed" would have been false.
    versions = [policy["version"] for policy in tenant.operator().list_policies()]
    assert "v9" in versions


def test_a_token_revoked_before_its_answer_was_lost_says_so_when_sent_again(
    relay, tenant, connect, server
):
    admin = connect(relay.url, server.admin_token, retries=8)
    made = admin.create_token(tenant=tenant.name, role="worker", label="to revoke")
    relay.vanish_on("DELETE /v1/admin/tokens/", back_after=0.3)
    with pytest.raises(fencegate.NotFoundError) as refused:
        admin.revoke_token(made["id"])
    assert refused.value.details["afterLostReply"] is True
    assert relay.lost == [f"DELETE /v1/admin/tokens/{made['id']} HTTP/1.1"]
