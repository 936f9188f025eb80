"""The asynchronous client's HTTP/1.1 exchanges with the server (_async_connection.py).

The standard library only: a client keeps its idle connections open and sends the next request
on one of them (keep-alive), which spares a connection and, over TLS, a handshake per request.
As in the blocking transport, redirects are never followed: a 3xx comes back as the reply it is.
A failure is classified by whether the request can have reached the server: nothing written yet
(no connection, a refused certificate) is NOT_SENT, anything after the first byte written LOST.

Reads started in the same turn of the event loop (``asyncio.gather``) are pipelined: written
together on one connection, their answers read back in order. On a machine where every send
wakes the server, one write instead of one per connection is the cheaper exchange; a read is
safe to send again, so a pipeline the connection cut short answers LOST to the reads it left.
Writes are never pipelined: each is alone on its connection, so no write's outcome depends on
another request.
"""

import asyncio
import ssl
from typing import Any, List, Optional, Set, Tuple
from urllib.parse import urlsplit

from ._async_connection import Answer, Connection
from ._wire import LOST, NOT_SENT, Reply, TransportError, encode_body, reply_of, tls_refusal

#: Idle connections kept per client; more in flight at once are closed once answered.
_MAX_IDLE = 16
_WITH_BODY = ("POST", "PUT", "PATCH")


class Session:
    """The connections of one client to one server, reused while the server keeps them open."""

    def __init__(self, base_url: str, timeout: float) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the server URL must be http:// or https:// with a host: {base_url}")
        self.timeout = timeout
        self._tls = parts.scheme == "https"
        self._host = parts.hostname
        default_port = 443 if self._tls else 80
        self._port = parts.port or default_port
        host = f"[{self._host}]" if ":" in self._host else self._host
        self._host_header = host if parts.port in (None, default_port) else f"{host}:{parts.port}"
        self._prefix = parts.path.rstrip("/")
        self._idle: List[Connection] = []
        self._ssl: Optional[ssl.SSLContext] = None
        self._closed = False
        #: The header lines every request of a token carries, built once.
        self._headers: Optional[Tuple[Optional[str], bytes]] = None
        #: The reads of this turn of the event loop, sent together once it ends.
        self._reads: List[Tuple[bytes, "asyncio.Future[Answer]"]] = []
        self._pipelines: Set["asyncio.Task[None]"] = set()

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    async def exchange(self, method: str, path: str, token: Optional[str], body: Any) -> Reply:
        request = self._request_bytes(method, self._prefix + path, token, body)
        if method == "GET":
            return _reply(await self._pipelined(request))
        connection = await self._connection()
        answer: "asyncio.Future[Answer]" = asyncio.get_running_loop().create_future()
        connection.send(request, [answer])
        try:
            return _reply(await answer)
        except asyncio.CancelledError:
            # Whoever waits no longer, the connection is half-read: it carries nothing else.
            connection.abort(TransportError(LOST, "the caller stopped waiting"))
            raise

    async def _pipelined(self, request: bytes) -> Answer:
        loop = asyncio.get_running_loop()
        answer: "asyncio.Future[Answer]" = loop.create_future()
        self._reads.append((request, answer))
        if len(self._reads) == 1:
            loop.call_soon(self._send_reads)
        return await answer

    def _send_reads(self) -> None:
        reads, self._reads = self._reads, []
        idle = self._idle_connection()
        if idle is not None:
            _send_together(idle, reads)
            return
        pipeline = asyncio.ensure_future(self._pipeline_on_new_connection(reads))
        self._pipelines.add(pipeline)  # kept until done: the loop holds tasks only weakly
        pipeline.add_done_callback(self._pipelines.discard)

    async def _pipeline_on_new_connection(
        self, reads: List[Tuple[bytes, "asyncio.Future[Answer]"]]
    ) -> None:
        try:
            connection = await self._connection()
        except BaseException as error:  # answered to each read; a cancellation goes on
            for _, answer in reads:
                if not answer.done():
                    answer.set_exception(error) if isinstance(error, Exception) else answer.cancel()
            if not isinstance(error, Exception):
                raise
            return
        _send_together(connection, reads)

    def _keep(self, connection: Connection) -> None:
        """Called by a connection once it has answered all it was asked."""
        if not self._closed and len(self._idle) < _MAX_IDLE:
            self._idle.append(connection)
        else:
            connection.close()

    def _idle_connection(self) -> Optional[Connection]:
        while self._idle:
            connection = self._idle.pop()
            if connection.usable():
                return connection
            connection.close()
        return None

    async def _connection(self) -> Connection:
        idle = self._idle_connection()
        if idle is not None:
            return idle
        loop = asyncio.get_running_loop()
        try:
            _, connection = await asyncio.wait_for(
                loop.create_connection(
                    lambda: Connection(self.timeout, self._keep),
                    self._host,
                    self._port,
                    ssl=self._context() if self._tls else None,
                ),
                self.timeout,
            )
        except asyncio.TimeoutError:
            raise TransportError(NOT_SENT, f"could not connect within {self.timeout} s") from None
        except OSError as error:  # ssl.SSLError is one: the handshake ends before any request
            refused = tls_refusal(error)
            if refused is not None:
                raise refused from None
            reason = str(error) or type(error).__name__
            raise TransportError(NOT_SENT, f"could not connect ({reason})") from None
        return connection

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = ssl.create_default_context()
        return self._ssl

    def _request_bytes(self, method: str, target: str, token: Optional[str], body: Any) -> bytes:
        data = None if body is None else encode_body(body)
        head = f"{method} {target} HTTP/1.1\r\n".encode("latin-1") + self._common_headers(token)
        if data is not None:
            return head + b"content-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(
                data
            ) + data
        if method in _WITH_BODY:
            return head + b"content-length: 0\r\n\r\n"
        return head + b"\r\n"

    def _common_headers(self, token: Optional[str]) -> bytes:
        if self._headers is None or self._headers[0] != token:
            lines = [f"host: {self._host_header}", "accept: application/json"]
            if token is not None:
                lines.append(f"authorization: Bearer {token}")
            self._headers = (token, ("\r\n".join(lines) + "\r\n").encode("latin-1"))
        return self._headers[1]


def _send_together(
    connection: Connection, reads: List[Tuple[bytes, "asyncio.Future[Answer]"]]
) -> None:
    """The reads in one write; a read whose caller stopped waiting is still sent, its answer
    dropped, so the others' answers stay in order."""
    connection.send(b"".join(request for request, _ in reads), [answer for _, answer in reads])


def _reply(answer: Answer) -> Reply:
    status, body, content_type, _ = answer
    return reply_of(status, body, content_type)
