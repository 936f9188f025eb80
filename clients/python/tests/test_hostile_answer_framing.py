"""An answer whose framing never ends (a chunk-size line without its CRLF, trailers that go on, a
head that goes on) is refused once that part passes its bound: the client holds at most
``max_answer_bytes`` and a few KiB of an answer, however long the server keeps writing. Against
a server in the test that answers every request with such bytes, with both clients."""

import socket
import threading
from typing import Any, Callable

import pytest

import fencegate

#: What the hostile server writes at most; a client that read it all would hold it all.
HOSTILE_BYTES = 64 * 1024 * 1024
_CHUNKED_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
)
_PIECE = 64 * 1024


class HostileServer:
    """Answers each request with ``start``, then ``piece`` over and over until the client hangs
    up or HOSTILE_BYTES are written; ``sent`` counts the bytes written."""

    def __init__(self, start: bytes, piece: bytes) -> None:
        self._start, self._piece = start, piece
        self.sent = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def close(self) -> None:
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                data = conn.recv(65536)
                if not data:
                    return
                request += data
            try:
                conn.sendall(self._start)
                while self.sent < HOSTILE_BYTES:
                    conn.sendall(self._piece)
                    self.sent += len(self._piece)
            except OSError:
                pass  # the client hung up


#: The part that never ends, by what the client's refusal names: (first bytes, bytes repeated).
HOSTILE_ANSWERS = {
    "chunk-size line": (_CHUNKED_HEAD, b"0" * _PIECE),
    "chunk-size line, its extension": (_CHUNKED_HEAD + b"2;", b"x" * _PIECE),
    "trailers": (
        _CHUNKED_HEAD + b"2\r\n{}\r\n0\r\n",
        b"x-trailer: " + b"a" * (_PIECE - 13) + b"\r\n",
    ),
    "trailers, one line": (_CHUNKED_HEAD + b"2\r\n{}\r\n0\r\nx-trailer: ", b"a" * _PIECE),
    "head": (b"HTTP/1.1 200 OK\r\nx-header: ", b"a" * _PIECE),
}


@pytest.mark.parametrize("part", sorted(HOSTILE_ANSWERS))
def test_an_answer_whose_framing_never_ends_is_refused_at_its_bound(
    part: str, connect: Callable[..., Any]
):
    hostile = HostileServer(*HOSTILE_ANSWERS[part])
    try:
        # A deadline far off: only a bound ends the exchange before the server stops writing.
        client = connect(hostile.url, "token", timeout=30, retries=0, max_answer_bytes=64 * 1024)
        with pytest.raises(fencegate.StoreUnavailableError) as refused:
            client.get_record("wf-h1/memory", "summary")
    finally:
        hostile.close()
    assert "is not HTTP" in refused.value.message
    assert part.split(",")[0] in refused.value.message
    # What the sockets' buffers held besides, not the 64 MiB the server would have written.
    assert hostile.sent < HOSTILE_BYTES // 4
