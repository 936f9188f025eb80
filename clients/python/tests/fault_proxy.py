"""A TCP proxy in front of the server that can lose one exchange: the request never forwarded
(the connection is cut after the client sent it), or forwarded and its reply cut off. The
client sees a lost connection either way; only the store knows what happened."""

import socket
import threading
from typing import List
from urllib.parse import urlparse

PASS = "pass"
DROP_REQUEST = "drop_request"
DROP_REPLY = "drop_reply"


class FaultProxy:
    def __init__(self, upstream: str) -> None:
        parsed = urlparse(upstream)
        self.upstream = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self.faults: List[str] = []
        self.seen: List[str] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def close(self) -> None:
        self._listener.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            request = _read_request(conn)
            self.seen.append(request.split(b"\r\n", 1)[0].decode())
            fault = self.faults.pop(0) if self.faults else PASS
            if fault == DROP_REQUEST:
                return
            with socket.create_connection(self.upstream) as up:
                up.sendall(request)
                reply = b""
                while chunk := up.recv(65536):
                    reply += chunk
            if fault == DROP_REPLY:
                return
            conn.sendall(reply)


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        body += conn.recv(65536)
    return head + b"\r\n\r\n" + body
