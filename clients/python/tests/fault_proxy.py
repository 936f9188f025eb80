"""A TCP proxy in front of the server that can spoil one exchange. It can lose it: the request
never forwarded (the connection is cut after the client sent it), or forwarded and its reply cut
off; the client sees a lost connection either way, only the store knows what happened. It can
answer as a misconfigured or failing proxy would: a 502 before or after forwarding the request,
or a 302 to another address (``redirect_to``). It can hold a request for ``delay`` seconds
before forwarding it. It can spoil the server's answer as a broken server or middlebox would:
send it a byte at a time, put a ``103 Early Hints`` before it, answer 200 with a page that is not
JSON in its place, or answer an endless body (``ENDLESS``, capped at ``ENDLESS_BYTES`` so that a
client that reads it all still ends). And it can play a server older than a route: a request
whose path ends with ``missing_route`` is answered 404 ``not_found`` as the server answers a
route it does not have. It can also play a server whose store lost one commit's reply inside a
batch (``UNKNOWN_ITEM``): the batch is forwarded and applied, and the item of the commit named
``unknown_operation`` in its answer is replaced by ``503 outcome_unknown``, as the server answers
a commit whose outcome it does not know. Every request it takes is kept whole in ``requests``
(its request line and body), in the order taken."""

import json
import socket
import threading
import time
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import urlparse

PASS = "pass"
DROP_REQUEST = "drop_request"
DROP_REPLY = "drop_reply"
GATEWAY_BEFORE = "gateway_before"  # 502, the request never forwarded
GATEWAY_AFTER = "gateway_after"  # 502 in place of the server's answer
REDIRECT = "redirect"  # 302 to redirect_to, the request never forwarded
TRICKLE = "trickle"  # the answer a byte every TRICKLE_PAUSE seconds
EARLY_HINTS = "early_hints"  # a 103 interim answer, then the answer
NOT_JSON = "not_json"  # 200 text/html in place of the server's answer
ENDLESS = "endless"  # 200 with a body that goes on, the request never forwarded
ENDLESS_CHUNKED = "endless_chunked"  # the same in chunks
UNKNOWN_ITEM = "unknown_item"  # forwarded; unknown_operation's item answered outcome_unknown

TRICKLE_PAUSE = 0.05
ENDLESS_BYTES = 64 * 1024 * 1024

_BAD_GATEWAY = (
    b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: 24\r\n"
    b"Connection: close\r\n\r\n<h1>502 Bad Gateway</h1>"
)


class FaultProxy:
    def __init__(self, upstream: str) -> None:
        parsed = urlparse(upstream)
        self.upstream = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self.faults: List[str] = []
        self.seen: List[str] = []
        #: (request line, body) of each request taken.
        self.requests: List[Tuple[str, bytes]] = []
        self.redirect_to: Optional[str] = None
        self.delay = 0.0
        self.missing_route: Optional[str] = None
        #: The operationId whose item an UNKNOWN_ITEM answers outcome_unknown.
        self.unknown_operation: Optional[str] = None
        #: Bytes of the ENDLESS answer sent before the client hung up.
        self.endless_sent = 0
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
            request = read_request(conn)
            line = request.split(b"\r\n", 1)[0].decode()
            self.seen.append(line)
            self.requests.append((line, request.partition(b"\r\n\r\n")[2]))
            method, path = line.split(" ")[:2]
            if self.missing_route is not None and path.endswith(self.missing_route):
                conn.sendall(_no_route(method, path))
                return
            fault = self.faults.pop(0) if self.faults else PASS
            if fault == DROP_REQUEST:
                return
            if fault == GATEWAY_BEFORE:
                conn.sendall(_BAD_GATEWAY)
                return
            if fault == REDIRECT:
                conn.sendall(_redirect(self.redirect_to or "http://127.0.0.1:9/"))
                return
            if fault in (ENDLESS, ENDLESS_CHUNKED):
                self._send_endless(conn, chunked=fault == ENDLESS_CHUNKED)
                return
            time.sleep(self.delay)
            with socket.create_connection(self.upstream) as up:
                up.sendall(request)
                reply = b""
                while chunk := up.recv(65536):
                    reply += chunk
            if fault == DROP_REPLY:
                return
            if fault == UNKNOWN_ITEM:
                reply = self._unknown_item(request, reply)
            try:
                self._answer(conn, fault, reply)
            except OSError:
                pass  # the client hung up

    def _answer(self, conn: socket.socket, fault: str, reply: bytes) -> None:
        if fault == TRICKLE:
            for byte in reply:
                conn.sendall(bytes([byte]))
                time.sleep(TRICKLE_PAUSE)
        elif fault == EARLY_HINTS:
            conn.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n")
            conn.sendall(reply)
        elif fault == NOT_JSON:
            conn.sendall(_NOT_JSON)
        else:
            conn.sendall(_BAD_GATEWAY if fault == GATEWAY_AFTER else reply)

    def _unknown_item(self, request: bytes, reply: bytes) -> bytes:
        """The batch's answer with the item of ``unknown_operation`` answered outcome_unknown."""
        sent = json.loads(request.partition(b"\r\n\r\n")[2])
        head, _, body = reply.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        if any(line.lower().startswith(b"transfer-encoding:") for line in lines):
            raise AssertionError("UNKNOWN_ITEM expects an answer with a Content-Length")
        answer: Dict[str, Any] = json.loads(body)
        for commit, item in zip(sent["commits"], answer["items"]):
            if commit["operationId"] == self.unknown_operation:
                item["status"] = 503
                item["body"] = {
                    "error": {
                        "code": "outcome_unknown",
                        "message": "the store's reply to this commit was lost",
                        "details": {},
                    }
                }
        rewritten = json.dumps(answer).encode()
        kept = [line for line in lines if not line.lower().startswith(b"content-length:")]
        length = b"content-length: %d" % len(rewritten)
        return b"\r\n".join(kept + [length]) + b"\r\n\r\n" + rewritten

    def _send_endless(self, conn: socket.socket, chunked: bool) -> None:
        # No length: the body ends with the last chunk, or when the connection does.
        framing = b"transfer-encoding: chunked" if chunked else b"connection: close"
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n%s\r\n\r\n" % framing)
        piece = b"0," * 32768
        if chunked:
            piece = b"%x\r\n%s\r\n" % (len(piece), piece)
        try:
            while self.endless_sent < ENDLESS_BYTES:
                conn.sendall(piece)
                self.endless_sent += len(piece)
            conn.sendall(b"0\r\n\r\n" if chunked else b"0]")
        except OSError:
            pass  # the client hung up


_NOT_JSON = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 27\r\n"
    b"Connection: close\r\n\r\n<html>Signed in</html>\n\n\n\n\n"
)


def _no_route(method: str, path: str) -> bytes:
    body = (
        '{"error":{"code":"not_found","message":"no route %s %s","details":{}}}' % (method, path)
    ).encode()
    return (
        b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json; charset=utf-8\r\n"
        b"content-length: %d\r\nConnection: close\r\n\r\n" % len(body)
    ) + body


def _redirect(location: str) -> bytes:
    return (
        f"HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\n"
        "Connection: close\r\n\r\n"
    ).encode()


def read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    lines = head.split(b"\r\n")
    for line in lines[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        body += conn.recv(65536)
    # One exchange per connection: the server closes after its answer (which then says so), so
    # the proxy reads the answer to its end, and a client never reuses a proxied connection.
    kept = [line for line in lines if not line.lower().startswith(b"connection:")]
    return b"\r\n".join(kept + [b"Connection: close"]) + b"\r\n\r\n" + body


def pipe(source: socket.socket, target: socket.socket) -> None:
    """Passes bytes from ``source`` to ``target`` until either ends, then ends both."""
    try:
        while chunk := source.recv(65536):
            target.sendall(chunk)
    except OSError:
        pass
    close_both(source, target)


def close_both(source: socket.socket, target: socket.socket) -> None:
    for end in (source, target):
        try:
            end.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
