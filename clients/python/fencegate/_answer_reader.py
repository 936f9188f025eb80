"""One HTTP/1.1 answer read from a connection's bytes as they arrive, for both transports.

An interim answer (1xx: ``100 Continue``, ``103 Early Hints``) is skipped: the answer is the final
one after it. The body is bounded by ``max_bytes``: an answer whose length says more is refused
at its head, one without a length (chunked, or ended by the close of the connection) as soon as
it has gone past the bound. The framing around the body is bounded too (the head, each
chunk-size line, the trailers), so a client never holds more than ``max_bytes`` and a few KiB of
one answer. Each delimiter is looked for only in the bytes that arrived since the last look, so
an answer that comes in many small reads costs no more to parse than one that comes at once.
"""

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

#: Longest status line plus headers accepted (the server's answers have a handful of headers).
MAX_HEAD = 64 * 1024
#: Longest chunk-size line accepted: a size in hex, and extensions the client ignores.
MAX_CHUNK_LINE = 1024
#: Longest trailer section accepted (the client ignores trailers).
MAX_TRAILERS = 64 * 1024
_NO_BODY = (204, 304)

Head = Tuple[int, Dict[str, str]]


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    content_type: Optional[str]
    #: The server keeps the connection open and sent nothing past the answer: it may carry another.
    reusable: bool
    #: The answer's Retry-After header, as sent; None without one.
    retry_after: Optional[str] = None


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
        #: Bytes at the start of the buffer already searched for the delimiter awaited.
        self._searched = 0
        self._head: Optional[Head] = None
        self._chunks: List[bytes] = []
        self._chunked_bytes = 0
        #: The size of the chunk whose data is awaited; None while its size line is.
        self._chunk_size: Optional[int] = None
        self._in_trailers = False

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
        end = self._find(b"\r\n\r\n", MAX_HEAD, "the answer's head")
        if end < 0:
            return None
        head = _parse_head(bytes(self._buffer[:end]))
        self._consume(end + 4)
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
        while not self._in_trailers:
            if self._chunk_size is None:
                line_end = self._find(b"\r\n", MAX_CHUNK_LINE, "a chunk-size line")
                if line_end < 0:
                    return None
                size = int(bytes(buffer[:line_end]).split(b";", 1)[0].strip(), 16)
                if size < 0:
                    raise ValueError("a negative chunk size")
                if self._chunked_bytes + size > self.max_bytes:
                    raise AnswerTooLong(head[0], head[1].get("content-type"), self.max_bytes)
                if size == 0:
                    # The last chunk, then trailers (unused) up to an empty line. The size
                    # line's CRLF stays: with none, it is the first half of that empty line's.
                    self._consume(line_end)
                    self._in_trailers = True
                    break
                self._consume(line_end + 2)
                self._chunk_size = size
            size = self._chunk_size
            if len(buffer) < size + 2:
                return None
            self._chunks.append(bytes(buffer[:size]))
            self._chunked_bytes += size
            self._consume(size + 2)
            self._chunk_size = None
        trailers_end = self._find(b"\r\n\r\n", MAX_TRAILERS, "the trailers")
        if trailers_end < 0:
            return None
        self._consume(trailers_end + 4)
        return b"".join(self._chunks)

    def _find(self, delimiter: bytes, longest: int, what: str) -> int:
        """Where ``delimiter`` starts in the buffer, looked for only in the bytes not searched
        yet; -1 until it arrives. ``what`` ends at it, and is refused past ``longest`` bytes."""
        start = max(0, self._searched - len(delimiter) + 1)
        end = self._buffer.find(delimiter, start)
        if (len(self._buffer) if end < 0 else end) > longest:
            raise ValueError(f"{what} is longer than {longest} bytes")
        if end < 0:
            self._searched = len(self._buffer)
        return end

    def _consume(self, count: int) -> None:
        """Drops the first ``count`` bytes of the buffer, which hold what was awaited."""
        del self._buffer[:count]
        self._searched = 0

    def _bodiless(self, head: Head) -> bool:
        return head[0] in _NO_BODY or (self._tunnel and 200 <= head[0] < 300)

    def _delimited_by_close(self, head: Head) -> bool:
        headers = head[1]
        return not self._bodiless(head) and not (
            "content-length" in headers or "chunked" in headers.get("transfer-encoding", "")
        )


def _answer(head: Head, body: bytes, reusable: bool) -> Answer:
    headers = head[1]
    return Answer(head[0], body, headers.get("content-type"), reusable, headers.get("retry-after"))


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
