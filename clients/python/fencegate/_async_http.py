"""The asynchronous client's HTTP/1.1 exchanges with the server (_async_connection.py).

The standard library only: a client keeps its idle connections open and sends the next request
on one of them (keep-alive), which spares a connection and, over TLS, a handshake per request.
Each connection carries one exchange at a time. An exchange has one deadline, ``timeout`` seconds
from its start, for connecting and answering together. As in the blocking transport, redirects
are never followed: a 3xx comes back as the reply it is. A failure is classified by whether the
request can have reached the server: nothing written yet (no connection, a refused certificate,
a proxy that refused the tunnel) is NOT_SENT, anything after the first byte written LOST.

An idle connection that something in between dropped without a word (a NAT, a load balancer's
idle timeout) is only found out by the request written on it, which then fails before any byte
of an answer. A request that may be sent twice (``resendable``: a read, an idempotent write, a
commit, which its operationId applies at most once) then goes out once more, on a new
connection. When no new connection can be opened, the exchange stays the first try's, LOST: the
server may have taken the request and then gone away (a restart), and NOT_SENT would tell the
call that nothing changed. Any other request is not sent twice: the server may have taken it
before the connection failed, and the call reports that as it reports any lost reply. So such a
request goes only on a connection idle for a second at most, otherwise on a new one.

A session belongs to the event loop it was made on: its connections are that loop's.
"""

import asyncio
from typing import Any, List, Optional

from ._async_connection import Connection
from ._endpoint import Endpoint
from ._wire import LOST, NOT_SENT, Reply, TransportError, tls_refusal

#: Idle connections kept per client; more in flight at once are closed once answered.
_MAX_IDLE = 16
#: The longest a connection may have been idle to carry a request that cannot be sent twice: a
#: NAT or load balancer that drops flows sooner than that is not to be expected.
_IDLE_TRUSTED_S = 1.0


class Session:
    """The connections of one client to one server, on one event loop, reused while the server
    keeps them open."""

    def __init__(self, endpoint: Endpoint, timeout: float, max_answer_bytes: int) -> None:
        self.loop = asyncio.get_running_loop()
        self.timeout = timeout
        self._endpoint = endpoint
        self._max_answer_bytes = max_answer_bytes
        self._idle: List[Connection] = []
        self._closed = False

    async def aclose(self) -> None:
        self.discard()

    def discard(self) -> None:
        """Closes the idle connections (also once the session's event loop has closed)."""
        self._closed = True
        self._drop_idle()

    async def exchange(
        self, method: str, path: str, token: Optional[str], body: Any, resendable: bool
    ) -> Reply:
        deadline = self.loop.time() + self.timeout
        request = self._endpoint.request(method, path, token, body)
        connection = self._idle_connection(None if resendable else _IDLE_TRUSTED_S)
        if connection is None:
            connection = await self._open(deadline)
        try:
            return await self._exchange_on(connection, request, deadline)
        except TransportError as error:
            if not (connection.reused and error.unanswered and resendable):
                raise
            first = error
        # Dropped while idle; the other idle connections were most likely dropped too.
        self._drop_idle()
        try:
            connection = await self._open(deadline)
        except TransportError:
            # The request was written once: the server may have taken it and gone away since.
            raise first from None
        return await self._exchange_on(connection, request, deadline)

    async def _exchange_on(self, connection: Connection, request: bytes, deadline: float) -> Reply:
        answer = connection.exchange(request, deadline, self.timeout, self._max_answer_bytes)
        try:
            reply = await answer
        except asyncio.CancelledError:
            # Whoever waits no longer, the connection is half-read: it carries nothing else.
            connection.abort(TransportError(LOST, "the caller stopped waiting"))
            raise
        self._keep(connection)
        return reply

    def _keep(self, connection: Connection) -> None:
        if connection.usable() and not self._closed and len(self._idle) < _MAX_IDLE:
            connection.reused = True
            connection.idle_since = self.loop.time()
            self._idle.append(connection)
        else:
            connection.close()

    def _idle_connection(self, idle_at_most: Optional[float]) -> Optional[Connection]:
        """The connection idle the shortest time, if it has been idle ``idle_at_most`` seconds
        or less; the others, idle longer, stay for requests that may be sent twice."""
        while self._idle:
            connection = self._idle[-1]
            if idle_at_most is not None and self.loop.time() - connection.idle_since > idle_at_most:
                return None
            self._idle.pop()
            if connection.usable():
                return connection
            connection.close()
        return None

    def _drop_idle(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    async def _open(self, deadline: float) -> Connection:
        try:
            return await asyncio.wait_for(self._connect(deadline), deadline - self.loop.time())
        except asyncio.TimeoutError:
            raise TransportError(NOT_SENT, f"could not connect within {self.timeout} s") from None
        except OSError as error:  # ssl.SSLError is one: the handshake ends before any request
            refused = tls_refusal(error)
            if refused is not None:
                raise refused from None
            reason = str(error) or type(error).__name__
            raise TransportError(NOT_SENT, f"could not connect ({reason})") from None

    async def _connect(self, deadline: float) -> Connection:
        endpoint = self._endpoint
        host, port = endpoint.address
        direct_tls = endpoint.tls and not endpoint.tunnelled
        _, connection = await self.loop.create_connection(
            Connection,
            host,
            port,
            ssl=endpoint.ssl_context() if direct_tls else None,
            server_hostname=endpoint.host if direct_tls else None,
        )
        if endpoint.tunnelled:
            try:
                await self._tunnel(connection, deadline)
            except BaseException as error:  # the time for connecting is up, or the tunnel failed
                connection.abort(error)
                raise
        return connection

    async def _tunnel(self, connection: Connection, deadline: float) -> None:
        """TLS to the server through the proxy's CONNECT tunnel; nothing is sent to the server
        until it is up, so every failure here is NOT_SENT."""
        endpoint = self._endpoint
        try:
            reply = await connection.exchange(
                endpoint.tunnel_request(), deadline, self.timeout, 0, tunnel=True
            )
        except TransportError as error:
            raise TransportError(NOT_SENT, f"the proxy's tunnel failed ({error})") from None
        if not 200 <= reply.status < 300:
            raise TransportError(
                NOT_SENT, f"the proxy refused the tunnel to {endpoint.host} (HTTP {reply.status})"
            )
        transport = connection.transport()
        tls = await self.loop.start_tls(
            transport, connection, endpoint.ssl_context(), server_hostname=endpoint.host
        )
        connection.use_transport(tls)  # type: ignore[arg-type]
