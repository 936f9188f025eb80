"""One HTTP/1.1 answer read from a connection's bytes as they arrive, for both transports.

An interim answer (1xx: ``100 Continue``, ``103 Early Hints``) is skipped: the answer is the final
one after it. The body is bounded by ``max_bytes``: an answer whose length says more is refused
at its head, one without a length (chunked, or ended by the close of the connection) as soon as
it has gone past the bound, so a client never holds more than that of one answer.
"""

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

#: Longest status line plus headers accepted (the server's answers have a handful of headers).
MAX_HEAD = 64 * 1024
_NO_BODY = (204, 304)

Head = Tuple[int, Dict[str, str]]


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    content_type: Optional[str]
    #: The server keeps the connection open and sent nothing past the answer: it may carry another.
    reusable: bool


class AnswerTooLong(Exception):
    """The body is longer than the reader's bound; ``status`` is the answer's."""

    def __init__(self, status: int, content_type: Optional[str], max_bytes: int) -> None:
        super().__init__(f"an answer over {max_bytes} bytes")
        self.status = status
        self.content_type = content_type
        self.max_bytes = max_bytes


class AnswerReader:
    """Feeds on the bytes of one answer; ``feed`` returns it once complete. Bytes that are not an
    HTTP/1.x answer raise ValueError, a body over ``max_bytes`` AnswerTooLong.

    ``tunnel``: the answer to a CONNECT, whose 2xx has no body (the tunnel starts after it)."""

    def __init__(self, max_bytes: int, tunnel: bool = False) -> None:
        self.max_bytes = max_bytes
        self._tunnel = tunnel
        #: A byte of the answer has arrived.
        self.started = False
        self._buffer = bytearray()
        self._head: Optional[Head] = None
        self._chunks: Optional[List[bytes]] = None
        self._chunked_bytes = 0

    def feed(self, data: bytes) -> Optional[Answer]:
        """The answer once it is all there, None until then."""
        self.started = self.started or bool(data)
        self._buffer += data
        while self._head is None:
            head = self._take_head()
            if head is None:
                return None
            if head[0] == 101:
                raise ValueError("the server switched protocols, which no request asks for")
            if head[0] >= 200:
                self._head = head
                self._check_length(head)
        return self._body(self._head)

    def at_close(self) -> Optional[Answer]:
        """The answer whose body ends with the connection, now that the server closed it; None
        when the answer is not complete."""
        head = self._head
        if head is None or not self._delimited_by_close(head):
            return None
        return _answer(head, bytes(self._buffer), reusable=False)

    # Parsing

    def _take_head(self) -> Optional[Head]:
        buffer = self._buffer
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(buffer) > MAX_HEAD:
                raise ValueError("the answer's head is longer than 64 KiB")
            return None
        head = _parse_head(bytes(buffer[:end]))
        del buffer[: end + 4]
        return head

    def _check_length(self, head: Head) -> None:
        length = head[1].get("content-length")
        if length is not None and not self._bodiless(head) and _length(length) > self.max_bytes:
            raise AnswerTooLong(head[0], head[1].get("content-type"), self.max_bytes)

    def _body(self, head: Head) -> Optional[Answer]:
        status, headers = head
        buffer = self._buffer
        if self._bodiless(head):
            body = b""
        elif "chunked" in headers.get("transfer-encoding", ""):
            chunked = self._chunked_body(head)
            if chunked is None:
                return None
            body = chunked
        elif "content-length" in headers:
            length = _length(headers["content-length"])
            if len(buffer) < length:
                return None
            body = bytes(buffer[:length])
            del buffer[:length]
        else:
            if len(buffer) > self.max_bytes:
                raise AnswerTooLong(status, headers.get("content-type"), self.max_bytes)
            return None  # ends when the server closes the connection (at_close)
        keep = "close" not in headers.get("connection", "").lower()
        # Bytes past the answer were never asked for: the connection can no longer be trusted.
        return _answer(head, body, reusable=keep and not buffer)

    def _chunked_body(self, head: Head) -> Optional[bytes]:
        """The body once every chunk and the trailers have arrived; None until then."""
        buffer = self._buffer
        if self._chunks is None:
            self._chunks = []
        while True:
            line_end = buffer.find(b"\r\n")
            if line_end < 0:
                return None
            size = int(bytes(buffer[:line_end]).split(b";", 1)[0].strip(), 16)
            if size < 0:
                raise ValueError("a negative chunk size")
            if self._chunked_bytes + size > self.max_bytes:
                raise AnswerTooLong(head[0], head[1].get("content-type"), self.max_bytes)
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
            self._chunked_bytes += size
            del buffer[: start + size + 2]

    def _bodiless(self, head: Head) -> bool:
        return head[0] in _NO_BODY or (self._tunnel and 200 <= head[0] < 300)

    def _delimited_by_close(self, head: Head) -> bool:
        headers = head[1]
        return not self._bodiless(head) and not (
            "content-length" in headers or "chunked" in headers.get("transfer-encoding", "")
        )


def _answer(head: Head, body: bytes, reusable: bool) -> Answer:
    return Answer(head[0], body, head[1].get("content-type"), reusable)


def _parse_head(head: bytes) -> Head:
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


def _length(value: str) -> int:
    length = int(value)
    if length < 0:
        raise ValueError("a negative content-length")
    return length
