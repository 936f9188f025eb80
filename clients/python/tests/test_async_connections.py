"""AsyncClient keeps its connections open between requests, and never sends a request on an idle
connection the server has closed (its keep-alive timeout): that request would be lost, and a
write's outcome unknown. An idle connection that something in between dropped without a word (a
NAT, a load balancer's idle timeout) is only found out by the request written on it: when it
fails before any byte of an answer, a request that may be sent twice goes out once more on a new
connection. Against the real server, through a relay that counts connections and can close the
idle ones as a server does, or forget them as a NAT does."""

import asyncio
import socket
import struct
import threading
from typing import Any, Awaitable, Callable, List, Set, Tuple
from urllib.parse import urlparse

import pytest

import fencegate
from fault_proxy import close_both, pipe
from fencegate import Write


class CountingRelay:
    """Passes bytes both ways, one upstream connection per client connection; counts them."""

    def __init__(self, upstream: str) -> None:
        parsed = urlparse(upstream)
        self._upstream = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self.connections: List[socket.socket] = []
        #: (method, path) of each request passed on to the server.
        self.forwarded: List[Tuple[str, str]] = []
        #: Client connections whose next bytes are answered with a reset, never passed on.
        self._forgotten: Set[socket.socket] = set()
        threading.Thread(target=self._serve, daemon=True).start()

    def forget_all(self) -> None:
        """Forgets every open connection, as a NAT or load balancer forgets an idle flow: the
        client is not told, and what it sends next is answered with a reset."""
        self._forgotten.update(self.connections)

    def close_all(self) -> None:
        """Closes every client connection, as a server closes idle ones after its timeout."""
        for conn in self.connections:
            conn.shutdown(socket.SHUT_RDWR)
            conn.close()

    def close(self) -> None:
        self._listener.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.connections.append(conn)
            up = socket.create_connection(self._upstream)
            threading.Thread(target=self._requests, args=(conn, up), daemon=True).start()
            threading.Thread(target=pipe, args=(up, conn), daemon=True).start()

    def _requests(self, conn: socket.socket, up: socket.socket) -> None:
        try:
            while chunk := conn.recv(65536):
                if conn in self._forgotten:
                    # SO_LINGER 0: the close sends a reset, as a middlebox does to a flow it forgot.
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    conn.close()
                    up.close()
                    return
                if chunk[:1].isupper():  # a request's first line (requests here are small)
                    method, path = chunk.split(b" ", 2)[:2]
                    self.forwarded.append((method.decode(), path.decode()))
                up.sendall(chunk)
        except OSError:
            pass
        close_both(conn, up)


@pytest.fixture
def relay(tenant):
    relay = CountingRelay(tenant.server.url)
    yield relay
    relay.close()


def with_client(relay: CountingRelay, tenant, scenario: Callable[[Any], Awaitable[Any]]) -> Any:
    """What ``scenario(client)`` returns, run on an event loop of its own with an AsyncClient
    whose connections pass the relay."""

    async def run() -> Any:
        async with fencegate.AsyncClient(relay.url, tenant.worker_token) as client:
            return await scenario(client)

    return asyncio.run(run())


def test_requests_one_after_another_share_one_connection(relay, tenant):
    async def scenario(client):
        return [(await client.get_record("wf-k1/memory", "summary")).revision for _ in range(5)]

    assert with_client(relay, tenant, scenario) == [0] * 5
    assert len(relay.connections) == 1


def test_a_write_after_the_server_closed_the_idle_connection_goes_out_on_a_new_one(relay, tenant):
    scope = "wf-k2/memory"

    async def scenario(client):
        await client.get_record(scope, "summary")
        relay.close_all()
        await asyncio.sleep(0.2)  # the client's loop sees the connection end
        # An acquire is never sent again after a lost reply: on the closed connection it
        # would be an unknown outcome; on a new one it is granted.
        return await client.acquire(scope, holder="w", ttl_ms=30_000)

    grant = with_client(relay, tenant, scenario)
    assert grant.scope == scope and grant.fence >= 1
    assert len(relay.connections) == 2
    assert tenant.operator().get_scope(scope).holder == "w"


def test_a_commit_on_an_idle_connection_dropped_in_between_goes_out_again_on_a_new_one(
    relay, tenant, connect
):
    scope = "wf-k3/memory"
    grant = tenant.worker().acquire(scope, holder="w", ttl_ms=30_000)
    client = connect(relay.url, tenant.worker_token)
    client.get_record(scope, "summary")
    relay.forget_all()  # the kept-alive connection is gone, and the client is not told
    result = client.commit(scope, grant.fence, "k3", writes=[Write("summary", 0, "v")])
    assert result.outcome == "committed" and result.replayed is False
    # The commit reached the server once, and no read of a stored outcome was needed.
    assert relay.forwarded == [
        ("GET", "/v1/scopes/wf-k3%2Fmemory/records/summary"),
        ("POST", "/v1/commit"),
    ]


def test_a_lease_operation_is_not_sent_again_on_a_new_connection_so_it_avoids_long_idle_ones(
    relay, tenant
):
    async def acquire_after(client, scope, idle):
        await client.get_record(scope, "summary")
        relay.forget_all()  # the kept-alive connection is gone, and the client is not told
        await asyncio.sleep(idle)
        return await client.acquire(scope, holder="w", ttl_ms=30_000)

    async def scenario(client):
        # A lease operation may have taken effect when its connection fails: the client cannot
        # tell a connection dropped before the request from one dropped after it.
        with pytest.raises(fencegate.OutcomeUnknownError):
            await acquire_after(client, "wf-k4/memory", 0)
        # After a second idle, it does not trust the connection, and opens a new one.
        return await acquire_after(client, "wf-k6/memory", 1.1)

    grant = with_client(relay, tenant, scenario)
    assert grant.scope == "wf-k6/memory" and grant.fence == 1
    assert relay.forwarded == [
        ("GET", "/v1/scopes/wf-k4%2Fmemory/records/summary"),
        ("GET", "/v1/scopes/wf-k6%2Fmemory/records/summary"),
        ("POST", "/v1/leases/acquire"),
    ]


def test_reads_started_together_after_the_server_closed_the_idle_connection_are_answered(
    relay, tenant
):
    scope = "wf-k5/memory"

    async def scenario(client):
        await client.get_record(scope, "warm")
        relay.close_all()  # the idle connection ends as the reads are made
        return await asyncio.gather(*(client.get_record(scope, f"r{n}") for n in range(3)))

    records = with_client(relay, tenant, scenario)
    assert [(r.name, r.exists) for r in records] == [(f"r{n}", False) for n in range(3)]
