"""One HTTP exchange with the server on a socket of its own (the synchronous client).

The exchange has one deadline, ``timeout`` seconds from its start: each step (connecting, the TLS
handshake, writing, every read) waits only for what is left of it, so an answer that trickles in
cannot hold the caller longer. The answer is read by the transports' one reader
(_answer_reader.py): interim answers skipped, the body bounded. Redirects are never followed:
following one would send the token to whatever origin it names, and take another URL's answer (a
GET, after a 302 on a POST) for this request's. A 3xx comes back as the reply it is, and the
client decides what it means. A failure before the request is written is NOT_SENT, any after
LOST.
"""

import socket
import time
from typing import Any, Optional

from ._answer_reader import Answer, AnswerReader, AnswerTooLong
from ._endpoint import Endpoint
from ._wire import LOST, NOT_SENT, Reply, TransportError, reply_of, tls_refusal, too_long

_READ_SIZE = 65536


def exchange(
    endpoint: Endpoint,
    method: str,
    path: str,
    token: Optional[str],
    body: Any,
    timeout: float,
    max_answer_bytes: int,
) -> Reply:
    deadline = time.monotonic() + timeout
    request = endpoint.request(method, path, token, body, close=True)
    with _connect(endpoint, deadline, timeout) as sock:
        try:
            sock.settimeout(_left(deadline, timeout, NOT_SENT))
            sock.sendall(request)
            answer = _read_answer(sock, AnswerReader(max_answer_bytes), deadline, timeout)
        except AnswerTooLong as long:
            return too_long(long.status, long.content_type, long.max_bytes)
        except (socket.timeout, TimeoutError):
            raise TransportError(LOST, f"no answer within {timeout} s") from None
        except (ValueError, IndexError) as error:
            raise TransportError(LOST, f"the answer is not HTTP ({error})") from None
        except OSError as error:
            raise TransportError(LOST, f"the connection failed ({error!r})") from None
    return reply_of(answer.status, answer.body, answer.content_type, answer.retry_after)


def _connect(endpoint: Endpoint, deadline: float, timeout: float) -> socket.socket:
    """A socket to the server, TLS set up (through the proxy's tunnel when there is one); nothing
    of the request written yet, so every failure here is NOT_SENT."""
    sock: Optional[socket.socket] = None
    try:
        sock = socket.create_connection(
            endpoint.address, timeout=_left(deadline, timeout, NOT_SENT)
        )
        if endpoint.tunnelled:
            _open_tunnel(sock, endpoint, deadline, timeout)
        if endpoint.tls:
            sock.settimeout(_left(deadline, timeout, NOT_SENT))
            sock = endpoint.ssl_context().wrap_socket(sock, server_hostname=endpoint.host)
        return sock
    except TransportError:
        _close(sock)
        raise
    except (socket.timeout, TimeoutError):
        _close(sock)
        raise TransportError(NOT_SENT, f"could not connect within {timeout} s") from None
    except (OSError, ValueError) as error:  # ssl.SSLError is an OSError
        _close(sock)
        refused = tls_refusal(error)
        if refused is not None:
            raise refused from None
        raise TransportError(NOT_SENT, f"could not connect ({error})") from None


def _open_tunnel(sock: socket.socket, endpoint: Endpoint, deadline: float, timeout: float) -> None:
    sock.settimeout(_left(deadline, timeout, NOT_SENT))
    sock.sendall(endpoint.tunnel_request())
    try:
        answer = _read_answer(sock, AnswerReader(0, tunnel=True), deadline, timeout, NOT_SENT)
    except AnswerTooLong as refusal:
        answer = Answer(refusal.status, b"", refusal.content_type, False)
    if not 200 <= answer.status < 300:
        raise TransportError(
            NOT_SENT, f"the proxy refused the tunnel to {endpoint.host} (HTTP {answer.status})"
        )


def _read_answer(
    sock: socket.socket,
    reader: AnswerReader,
    deadline: float,
    timeout: float,
    late: str = LOST,
) -> Answer:
    while True:
        sock.settimeout(_left(deadline, timeout, late))
        data = sock.recv(_READ_SIZE)
        if not data:
            answer = reader.at_close()
            if answer is None:
                raise TransportError(
                    late, "the server closed the connection", unanswered=not reader.started
                )
            return answer
        answer = reader.feed(data)
        if answer is not None:
            return answer


def _left(deadline: float, timeout: float, late: str) -> float:
    """The seconds left of the exchange; none left ends it as ``late``."""
    left = deadline - time.monotonic()
    if left <= 0:
        what = "could not connect" if late == NOT_SENT else "no answer"
        raise TransportError(late, f"{what} within {timeout} s")
    return left


def _close(sock: Optional[socket.socket]) -> None:
    if sock is not None:
        sock.close()
