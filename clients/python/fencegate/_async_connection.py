"""One keep-alive HTTP/1.1 connection of the asynchronous client, as an asyncio protocol.

Requests are written as they come; the answers are parsed from the bytes as they arrive and handed,
in order, to the futures waiting for them. A protocol does in one callback what stream readers do
in a chain of coroutines (read a line, read the head, read the body, each under its own timeout),
which on a machine where every exchange counts is most of the client's own time per request.

A connection that breaks, times out or sends what is not HTTP fails every answer still awaited
with a LOST ``TransportError``: its request was written, so it may have reached the server.
"""

import asyncio
from collections import deque
from typing import Callable, Deque, Dict, List, Optional, Tuple

from ._wire import LOST, TransportError

#: Longest status line plus headers accepted (the server's answers have a handful of headers).
MAX_HEAD = 64 * 1024
_NO_BODY = (204, 304)

#: status, body, content type, and whether the connection may carry another request.
Answer = Tuple[int, bytes, Optional[str], bool]


class Connection(asyncio.Protocol):
    """Writes requests, answers each one's future in order; ``on_idle`` is told when the last
    awaited answer has come and the connection may carry another request."""

    def __init__(self, timeout: float, on_idle: Callable[["Connection"], None]) -> None:
        self.timeout = timeout
        self._on_idle = on_idle
        self._transport: Optional[asyncio.Transport] = None
        self._waiting: Deque["asyncio.Future[Answer]"] = deque()
        self._buffer = bytearray()
        self._closed = False
        #: The head of the answer being read, once complete.
        self._head: Optional[Tuple[int, Dict[str, str]]] = None
        self._chunks: Optional[List[bytes]] = None
        self._timer: Optional[asyncio.TimerHandle] = None

    # What the caller uses

    def usable(self) -> bool:
        """Open at both ends and awaiting no answer: an idle connection the server closed (its
        keep-alive timeout) is dropped rather than reused."""
        return not self._closed and not self._waiting and self._transport is not None

    def send(self, request: bytes, answers: List["asyncio.Future[Answer]"]) -> None:
        """Writes ``request`` (one request, or several pipelined) whose answers, in order, go to
        ``answers``; each is given ``timeout`` seconds from the one before."""
        assert self._transport is not None
        if not self._waiting:
            self._arm()
        self._waiting.extend(answers)
        self._transport.write(request)

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
        self._closed = True

    def abort(self, error: BaseException) -> None:
        """Ends the connection; every answer still awaited fails with ``error``."""
        self._closed = True
        self._disarm()
        if self._transport is not None:
            self._transport.abort()
        self._fail(error)

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        try:
            while self._waiting and self._parse_one():
                pass
        except (ValueError, IndexError) as error:
            self.abort(TransportError(LOST, f"the answer is not HTTP ({error})"))
            return
        if self._buffer and not self._waiting:
            # Bytes nobody asked for: the connection can no longer be trusted.
            self.abort(TransportError(LOST, "the server sent more than was asked"))

    def eof_received(self) -> Optional[bool]:
        self._closed = True
        head = self._head
        if head is not None and self._waiting and _delimited_by_close(head):
            # An answer without a length ends when the server closes the connection.
            self._deliver((head[0], bytes(self._buffer), head[1].get("content-type"), False))
        self._fail(TransportError(LOST, "the server closed the connection"))
        return False

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self._closed = True
        self._disarm()
        reason = f"the connection failed ({exc})" if exc else "the server closed the connection"
        self._fail(TransportError(LOST, reason))

    # Parsing

    def _parse_one(self) -> bool:
        """Parses one answer from the buffer if it is all there; whether it was."""
        buffer = self._buffer
        if self._head is None:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) > MAX_HEAD:
                    raise ValueError("the answer's head is longer than 64 KiB")
                return False
            self._head = _parse_head(bytes(buffer[:end]))
            del buffer[: end + 4]
        status, headers = self._head
        if status in _NO_BODY:
            body = b""
        elif "chunked" in headers.get("transfer-encoding", ""):
            chunked = self._chunked_body()
            if chunked is None:
                return False
            body = chunked
        elif "content-length" in headers:
            length = _length(headers["content-length"])
            if len(buffer) < length:
                return False
            body = bytes(buffer[:length])
            del buffer[:length]
        else:
            return False  # ends when the server closes the connection (eof_received)
        keep = "close" not in headers.get("connection", "").lower()
        self._deliver((status, body, headers.get("content-type"), keep))
        return True

    def _chunked_body(self) -> Optional[bytes]:
        """The body once every chunk and the trailers have arrived; None until then."""
        buffer = self._buffer
        if self._chunks is None:
            self._chunks = []
        while True:
            line_end = buffer.find(b"\r\n")
            if line_end < 0:
                return None
            size = int(bytes(buffer[:line_end]).split(b";", 1)[0].strip(), 16)
            if size == 0:
                # The last chunk, then trailers (unused) up to an empty line.
                if buffer[line_end : line_end + 4] == b"\r\n\r\n":
                    trailers_end = line_end
                else:
                    trailers_end = buffer.find(b"\r\n\r\n", line_end)
                if trailers_end < 0:
                    return None
                del buffer[: trailers_end + 4]
                body, self._chunks = b"".join(self._chunks), None
                return body
            if len(buffer) < line_end + 2 + size + 2:
                return None
            start = line_end + 2
            self._chunks.append(bytes(buffer[start : start + size]))
            del buffer[: start + size + 2]

    def _deliver(self, answer: Answer) -> None:
        self._head = None
        answer_to = self._waiting.popleft()
        if not answer_to.done():  # its caller may have stopped waiting (cancelled)
            answer_to.set_result(answer)
        if not answer[3]:
            self.close()
            self._disarm()
            self._fail(TransportError(LOST, "the server closed the connection"))
        elif self._waiting:
            self._arm()
        else:
            self._disarm()
            self._on_idle(self)

    # Timeouts and failures

    def _arm(self) -> None:
        self._disarm()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self.timeout, self._timed_out)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _timed_out(self) -> None:
        self._timer = None
        self.abort(TransportError(LOST, f"no answer within {self.timeout} s"))

    def _fail(self, error: BaseException) -> None:
        waiting, self._waiting = self._waiting, deque()
        for answer in waiting:
            if not answer.done():
                answer.set_exception(error)


def _parse_head(head: bytes) -> Tuple[int, Dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    if not version.startswith("HTTP/1."):
        raise ValueError("the status line is not HTTP/1.x")
    status = int(rest[:3])
    headers: Dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers


def _delimited_by_close(head: Tuple[int, Dict[str, str]]) -> bool:
    status, headers = head
    return status not in _NO_BODY and not (
        "content-length" in headers or "chunked" in headers.get("transfer-encoding", "")
    )


def _length(value: str) -> int:
    length = int(value)
    if length < 0:
        raise ValueError("a negative content-length")
    return length
