"""One HTTP exchange with the server over the standard library (the synchronous client).

Redirects are never followed: following one would send the token to whatever origin it names,
and take another URL's answer (a GET, after a 302 on a POST) for this request's. A 3xx comes back
as the reply it is, and the client decides what it means.
"""

import errno
import http.client
import socket
import urllib.error
import urllib.request
from typing import Any, Optional

from ._wire import LOST, NOT_SENT, Reply, TransportError, encode_request, reply_of, tls_refusal

#: Connection errors that prove the request never reached the server.
_NEVER_CONNECTED = {errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH}


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # urllib then raises HTTPError with the 3xx, answered as is


_OPENER = urllib.request.build_opener(_RefuseRedirects())


def exchange(
    url: str,
    method: str,
    token: Optional[str],
    body: Any,
    timeout: float,
) -> Reply:
    headers, data = encode_request(token, body)
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            return reply_of(response.status, response.read(), response.headers.get("content-type"))
    except urllib.error.HTTPError as error:
        try:
            raw = error.read()
        except (OSError, http.client.HTTPException) as lost:
            raise TransportError(LOST, f"the answer was cut off ({lost!r})") from None
        content_type = error.headers.get("content-type") if error.headers is not None else None
        return reply_of(error.code, raw, content_type)
    except urllib.error.URLError as error:
        raise _classify(error.reason, timeout) from None
    except (OSError, http.client.HTTPException) as error:
        raise _classify(error, timeout) from None


def _classify(reason: Any, timeout: float) -> TransportError:
    if isinstance(reason, BaseException):
        refused = tls_refusal(reason)
        if refused is not None:
            return refused
    if isinstance(reason, (socket.timeout, TimeoutError)):
        return TransportError(LOST, f"no answer within {timeout} s")
    if isinstance(reason, (ConnectionRefusedError, socket.gaierror)):
        return TransportError(NOT_SENT, f"could not connect ({reason})")
    if isinstance(reason, OSError) and reason.errno in _NEVER_CONNECTED:
        return TransportError(NOT_SENT, f"could not connect ({reason})")
    return TransportError(LOST, f"the connection failed ({reason!r})")
