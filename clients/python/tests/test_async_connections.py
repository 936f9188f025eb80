"""AsyncClient keeps its connections open between requests, and never sends a request on an idle
connection the server has closed (its keep-alive timeout): that request would be lost, and a
write's outcome unknown. Against the real server, through a relay that counts connections and can
close the idle ones as a server does."""

import asyncio
import socket
import threading
from typing import List
from urllib.parse import urlparse

import fencegate


class CountingRelay:
    """Passes bytes both ways, one upstream connection per client connection; counts them."""

    def __init__(self, upstream: str) -> None:
        parsed = urlparse(upstream)
        self._upstream = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self.connections: List[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

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
            threading.Thread(target=_pipe, args=(conn, up), daemon=True).start()
            threading.Thread(target=_pipe, args=(up, conn), daemon=True).start()


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            target.sendall(chunk)
    except OSError:
        pass
    for end in (source, target):
        try:
            end.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def test_requests_one_after_another_share_one_connection(tenant):
    relay = CountingRelay(tenant.server.url)

    async def scenario():
        async with fencegate.AsyncClient(relay.url, tenant.worker_token) as client:
            return [(await client.get_record("wf-k1/memory", "summary")).revision for _ in range(5)]

    try:
        assert asyncio.run(scenario()) == [0] * 5
    finally:
        relay.close()
    assert len(relay.connections) == 1


def test_a_write_after_the_server_closed_the_idle_connection_goes_out_on_a_new_one(tenant):
    relay = CountingRelay(tenant.server.url)
    scope = "wf-k2/memory"

    async def scenario():
        async with fencegate.AsyncClient(relay.url, tenant.worker_token) as client:
            await client.get_record(scope, "summary")
            relay.close_all()
            await asyncio.sleep(0.2)  # the client's loop sees the connection end
            # An acquire is never sent again after a lost reply: on the closed connection it
            # would be an unknown outcome; on a new one it is granted.
            return await client.acquire(scope, holder="w", ttl_ms=30_000)

    try:
        grant = asyncio.run(scenario())
    finally:
        relay.close()
    assert grant.scope == scope and grant.fence >= 1
    assert len(relay.connections) == 2
    assert tenant.operator().get_scope(scope).holder == "w"
