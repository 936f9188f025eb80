"""One HTTP/1.1 exchange with the server over asyncio streams (the asynchronous client).

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
from typing import Any, Awaitable, Dict, List, Optional, Set, Tuple, TypeVar
from urllib.parse import urlsplit

from ._wire import LOST, NOT_SENT, Reply, TransportError, encode_request, reply_of, tls_refusal

T = TypeVar("T")

#: Idle connections kept per client; more in flight at once are closed once answered.
_MAX_IDLE = 16
#: Longest status line plus headers accepted (the server's answers have a handful of headers).
_MAX_HEAD = 64 * 1024
_NO_BODY = (204, 304)
#: What a connection that broke, or an answer that is not HTTP, raises while it is read.
_BROKEN = (OSError, EOFError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError)


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def usable(self) -> bool:
        """Not closed by either side: an idle connection the server closed (its keep-alive
        timeout) is dropped rather than reused."""
        return not (self.writer.is_closing() or self.reader.at_eof())

    def close(self) -> None:
        self.writer.close()


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
        self._idle: List[_Connection] = []
        self._ssl: Optional[ssl.SSLContext] = None
        #: The reads of this turn of the event loop, sent together once it ends.
        self._reads: List[Tuple[bytes, "asyncio.Future[Reply]"]] = []
        self._pipelines: Set["asyncio.Task[None]"] = set()

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    async def exchange(self, method: str, path: str, token: Optional[str], body: Any) -> Reply:
        headers, data = encode_request(token, body)
        request = self._request_bytes(method, self._prefix + path, headers, data)
        if method == "GET":
            return await self._pipelined(request)
        connection = await self._connection()
        try:
            connection.writer.write(request)
            status, answer, content_type, reusable = await _within(
                self.timeout, _read_answer(connection)
            )
        except BaseException as error:  # cancelled as well: a half-read connection is unusable
            connection.close()
            raise self._lost(error) from None
        self._keep(connection, reusable)
        return reply_of(status, answer, content_type)

    async def _pipelined(self, request: bytes) -> Reply:
        loop = asyncio.get_running_loop()
        answer: "asyncio.Future[Reply]" = loop.create_future()
        self._reads.append((request, answer))
        if len(self._reads) == 1:
            loop.call_soon(self._send_reads)
        return await answer

    def _send_reads(self) -> None:
        reads, self._reads = self._reads, []
        pipeline = asyncio.ensure_future(self._pipeline(reads))
        self._pipelines.add(pipeline)  # kept until done: the loop holds tasks only weakly
        pipeline.add_done_callback(self._pipelines.discard)

    async def _pipeline(self, reads: List[Tuple[bytes, "asyncio.Future[Reply]"]]) -> None:
        """Sends the reads in one write and answers each, in order, from one connection."""
        answered = 0
        try:
            connection = await self._connection()
        except BaseException as error:  # answered to each read; a cancellation goes on
            _fail(reads, error)
            if not isinstance(error, Exception):
                raise
            return
        try:
            connection.writer.write(b"".join(request for request, _ in reads))
            reusable = True
            while answered < len(reads) and reusable:
                status, body, content_type, reusable = await _within(
                    self.timeout, _read_answer(connection)
                )
                _answer(reads[answered][1], reply_of(status, body, content_type))
                answered += 1
        except BaseException as error:
            connection.close()
            _fail(reads[answered:], self._lost(error))
            if not isinstance(error, Exception):
                raise
            return
        if answered < len(reads):  # the server ended the connection with reads unanswered
            _fail(reads[answered:], TransportError(LOST, "the server closed the connection"))
        self._keep(connection, reusable)

    def _keep(self, connection: _Connection, reusable: bool) -> None:
        if reusable and len(self._idle) < _MAX_IDLE:
            self._idle.append(connection)
        else:
            connection.close()

    def _lost(self, error: BaseException) -> BaseException:
        """What a failure after the request was written raises."""
        if isinstance(error, asyncio.TimeoutError):
            return TransportError(LOST, f"no answer within {self.timeout} s")
        if isinstance(error, _BROKEN):
            return TransportError(LOST, f"the connection failed ({_reason(error)})")
        return error

    async def _connection(self) -> _Connection:
        while self._idle:
            connection = self._idle.pop()
            if connection.usable():
                return connection
            connection.close()
        try:
            reader, writer = await _within(
                self.timeout,
                asyncio.open_connection(
                    self._host,
                    self._port,
                    ssl=self._context() if self._tls else None,
                    limit=_MAX_HEAD,
                ),
            )
        except asyncio.TimeoutError:
            raise TransportError(NOT_SENT, f"could not connect within {self.timeout} s") from None
        except OSError as error:  # ssl.SSLError is one: the handshake ends before any request
            refused = tls_refusal(error)
            if refused is not None:
                raise refused from None
            raise TransportError(NOT_SENT, f"could not connect ({_reason(error)})") from None
        return _Connection(reader, writer)

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = ssl.create_default_context()
        return self._ssl

    def _request_bytes(
        self, method: str, target: str, headers: Dict[str, str], data: Optional[bytes]
    ) -> bytes:
        lines = [f"{method} {target} HTTP/1.1", f"host: {self._host_header}"]
        lines.extend(f"{name}: {value}" for name, value in headers.items())
        if data is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"content-length: {0 if data is None else len(data)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        return head if data is None else head + data


def _answer(answer: "asyncio.Future[Reply]", reply: Reply) -> None:
    if not answer.done():  # its caller may have stopped waiting (cancelled)
        answer.set_result(reply)


def _fail(reads: List[Tuple[bytes, "asyncio.Future[Reply]"]], error: BaseException) -> None:
    for _, answer in reads:
        if answer.done():
            continue
        if isinstance(error, Exception):
            answer.set_exception(error)
        else:
            answer.cancel()


async def _read_answer(connection: _Connection) -> Tuple[int, bytes, Optional[str], bool]:
    """After the request is written: the status, body and content type of the answer, and
    whether the connection may carry another request."""
    await connection.writer.drain()
    reader = connection.reader
    head = await reader.readuntil(b"\r\n\r\n")
    status, headers = _parse_head(head)
    if status in _NO_BODY:
        answer = b""
    elif "chunked" in headers.get("transfer-encoding", ""):
        answer = await _read_chunked(reader)
    elif "content-length" in headers:
        answer = await reader.readexactly(_length(headers["content-length"]))
    else:  # the answer ends when the server closes the connection
        return status, await reader.read(), headers.get("content-type"), False
    keep = "close" not in headers.get("connection", "").lower()
    return status, answer, headers.get("content-type"), keep


def _parse_head(head: bytes) -> Tuple[int, Dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    if not version.startswith("HTTP/1."):
        raise ValueError("the answer is not HTTP/1.x")
    status = int(rest[:3])
    headers: Dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return status, headers


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0].strip(), 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass  # trailers, unused
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


def _length(value: str) -> int:
    length = int(value)
    if length < 0:
        raise ValueError("a negative content-length")
    return length


def _reason(error: BaseException) -> str:
    if isinstance(error, asyncio.IncompleteReadError):
        return "the server closed the connection before its answer was complete"
    return str(error) or type(error).__name__


async def _within(seconds: float, work: Awaitable[T]) -> T:
    # asyncio.timeout (3.11) bounds the work in the caller's task; wait_for wraps it in another.
    timeout = getattr(asyncio, "timeout", None)
    if timeout is None:
        return await asyncio.wait_for(work, seconds)
    async with timeout(seconds):
        return await work
