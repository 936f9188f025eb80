"""How many exchanges one call can make when none is answered, as the client README states it:
``timeout`` bounds each exchange, not the call, and a commit whose outcome stays unknown makes
``(retries + 1) * (retries + 3)`` of them. Against a server in the test that reads every request
and never answers, with both clients."""

import socket
import threading
import time
from typing import Any, Callable, List

import pytest

import fencegate
from fencegate import Write


class SilentServer:
    """Reads each request and never answers; ``requests`` holds their first lines."""

    def __init__(self) -> None:
        self.requests: List[str] = []
        self._open: List[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def close(self) -> None:
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        for conn in self._open:
            conn.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self._open.append(conn)
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        try:
            while data := conn.recv(65536):
                if data[:1].isupper():  # a request's first line (requests here are small)
                    self.requests.append(data.split(b"\r\n", 1)[0].decode())
        except OSError:
            pass


def wait_until(condition: Callable[[], bool], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)


@pytest.fixture
def silent():
    server = SilentServer()
    yield server
    server.close()


def test_a_commit_never_answered_makes_retries_plus_one_times_retries_plus_three_exchanges(
    silent: SilentServer, connect: Callable[..., Any]
):
    client = connect(silent.url, "token", timeout=0.3, retries=1)
    with pytest.raises(fencegate.OutcomeUnknownError):
        client.commit("wf-c1/memory", 1, "c1", writes=[Write("summary", 0, "v")])
    commit, read, abandon = (
        "POST /v1/commit HTTP/1.1",
        "GET /v1/operations/c1 HTTP/1.1",
        "POST /v1/operations/c1/abandon HTTP/1.1",
    )
    # Each attempt, then the reads of its stored outcome; after the last, the abandon.
    wait_until(lambda: len(silent.requests) >= 8)
    assert silent.requests == [commit, read, read] * 2 + [abandon] * 2
