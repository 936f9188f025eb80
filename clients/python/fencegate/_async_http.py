"""One HTTP exchange with the server over httpx (the asynchronous client).

As in the standard-library transport, redirects are never followed (httpx's default, kept
explicit), and a failure is classified by whether the request can have reached the server.
"""

from typing import Any, Optional

import httpx

from ._wire import LOST, NOT_SENT, Reply, TransportError, encode_request, reply_of, tls_refusal


def open_session(timeout: float) -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=httpx.Timeout(timeout), follow_redirects=False)


async def exchange(
    session: httpx.AsyncClient,
    url: str,
    method: str,
    token: Optional[str],
    body: Any,
) -> Reply:
    headers, data = encode_request(token, body)
    try:
        response = await session.request(method, url, headers=headers, content=data)
    except httpx.TransportError as error:
        raise _classify(error, session.timeout.read) from None
    return reply_of(response.status_code, response.content, response.headers.get("content-type"))


def _classify(error: httpx.TransportError, timeout: Optional[float]) -> TransportError:
    refused = tls_refusal(error)
    if refused is not None:
        return refused
    # No connection was made, or none was free: the request was never written.
    if isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)):
        return TransportError(NOT_SENT, f"could not connect ({error or type(error).__name__})")
    if isinstance(error, httpx.TimeoutException):
        return TransportError(LOST, f"no answer within {timeout} s")
    return TransportError(LOST, f"the connection failed ({error!r})")
