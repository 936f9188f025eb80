"""One HTTP exchange with the server, and what failed when it did not complete.

A request that never reached the server (connection refused, unknown host) is always safe to send
again; one that was sent and then lost (reset, timeout) may have taken effect.
"""

import errno
import http.client
import json
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Dict, Optional

NOT_SENT = "not_sent"
LOST = "lost"

#: Connection errors that prove the request never reached the server.
_NEVER_CONNECTED = {errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH}


class TransportError(Exception):
    """No answer: ``failure`` is NOT_SENT (nothing reached the server) or LOST (maybe it did)."""

    def __init__(self, failure: str, message: str) -> None:
        super().__init__(message)
        self.failure = failure


@dataclass
class Reply:
    status: int
    text: str
    content_type: str

    def json(self) -> Any:
        if self.text == "" or "json" not in self.content_type:
            return None
        try:
            return json.loads(self.text)
        except ValueError:
            return None


def exchange(
    url: str,
    method: str,
    token: Optional[str],
    body: Any,
    timeout: float,
) -> Reply:
    headers: Dict[str, str] = {"accept": "application/json"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    data = None
    if body is not None:
        headers["content-type"] = "application/json"
        data = json.dumps(body, separators=(",", ":")).encode("utf-8")
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return _reply(response.status, response.read(), response.headers)
    except urllib.error.HTTPError as error:
        try:
            raw = error.read()
        except (OSError, http.client.HTTPException) as lost:
            raise TransportError(LOST, f"the answer was cut off ({lost!r})") from None
        return _reply(error.code, raw, error.headers)
    except urllib.error.URLError as error:
        raise _classify(error.reason, timeout) from None
    except (OSError, http.client.HTTPException) as error:
        raise _classify(error, timeout) from None


def _reply(status: int, raw: bytes, headers: Any) -> Reply:
    content_type = (headers.get("content-type") if headers is not None else None) or ""
    return Reply(status=status, text=raw.decode("utf-8", "replace"), content_type=content_type)


def _classify(reason: Any, timeout: float) -> TransportError:
    if isinstance(reason, (socket.timeout, TimeoutError)):
        return TransportError(LOST, f"no answer within {timeout} s")
    if isinstance(reason, (ConnectionRefusedError, socket.gaierror)):
        return TransportError(NOT_SENT, f"could not connect ({reason})")
    if isinstance(reason, OSError) and reason.errno in _NEVER_CONNECTED:
        return TransportError(NOT_SENT, f"could not connect ({reason})")
    return TransportError(LOST, f"the connection failed ({reason!r})")
