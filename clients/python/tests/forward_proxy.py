"""An HTTP forward proxy for the tests, as HTTP_PROXY and HTTPS_PROXY name one: a request in
absolute form (``GET http://host:port/path``) is passed on to that host, one exchange per
connection; ``CONNECT host:port`` opens a tunnel to it. It records each request line and the
Proxy-Authorization it came with. And a TLS front for the real server (``TlsFront``), with a
certificate the tests make and trust (SSL_CERT_FILE), so an https:// URL can reach it."""

import base64
import socket
import ssl
import subprocess
import threading
from pathlib import Path
from typing import Callable, List, Optional, Tuple
from urllib.parse import urlsplit

from fault_proxy import pipe, read_request


class ForwardProxy:
    def __init__(self) -> None:
        self.requests: List[str] = []
        self.authorizations: List[Optional[str]] = []
        self._listener, port = _serve(self._handle)
        self.url = f"http://127.0.0.1:{port}"

    def close(self) -> None:
        self._listener.close()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            request = read_request(conn)
            head = request.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
            self.requests.append(head[0])
            self.authorizations.append(_header(head, "proxy-authorization"))
            method, target = head[0].split(" ")[:2]
            if method == "CONNECT":
                host, _, port = target.rpartition(":")
                with socket.create_connection((host, int(port))) as up:
                    conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    _tunnel(conn, up)
                return
            parts = urlsplit(target)
            origin_form = f"{method} {parts.path}{'?' + parts.query if parts.query else ''}"
            request = request.replace(head[0].encode(), f"{origin_form} HTTP/1.1".encode(), 1)
            with socket.create_connection((parts.hostname, parts.port or 80)) as up:
                up.sendall(request)
                conn.sendall(_read_all(up))


class TlsFront:
    """Accepts TLS for 127.0.0.1 with a certificate made here (``cert``), passes each request on
    to ``upstream`` in plain HTTP, one exchange per connection."""

    def __init__(self, upstream: str, directory: Path) -> None:
        self.cert, key = directory / "front-cert.pem", directory / "front-key.pem"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
             "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
             "-keyout", str(key), "-out", str(self.cert)],
            check=True, capture_output=True,
        )
        self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._context.load_cert_chain(self.cert, key)
        parts = urlsplit(upstream)
        self._upstream: Tuple[str, int] = (parts.hostname or "127.0.0.1", parts.port or 80)
        self._listener, port = _serve(self._handle)
        self.url = f"https://127.0.0.1:{port}"

    def close(self) -> None:
        self._listener.close()

    def _handle(self, raw: socket.socket) -> None:
        try:
            with self._context.wrap_socket(raw, server_side=True) as conn:
                request = read_request(conn)
                with socket.create_connection(self._upstream) as up:
                    up.sendall(request)
                    conn.sendall(_read_all(up))
        except (OSError, ssl.SSLError):
            pass


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def _serve(handle: Callable[[socket.socket], None]) -> Tuple[socket.socket, int]:
    """A listener on a free port of 127.0.0.1, each connection handled in a thread of its own."""
    listener = socket.create_server(("127.0.0.1", 0))
    threading.Thread(target=_accept, args=(listener, handle), daemon=True).start()
    return listener, listener.getsockname()[1]


def _accept(listener: socket.socket, handle: Callable[[socket.socket], None]) -> None:
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


def _header(lines: List[str], name: str) -> Optional[str]:
    for line in lines[1:]:
        key, _, value = line.partition(":")
        if key.strip().lower() == name:
            return value.strip()
    return None


def _read_all(up: socket.socket) -> bytes:
    reply = b""
    while chunk := up.recv(65536):
        reply += chunk
    return reply


def _tunnel(conn: socket.socket, up: socket.socket) -> None:
    back = threading.Thread(target=pipe, args=(up, conn), daemon=True)
    back.start()
    pipe(conn, up)
    back.join(10)
