"""fencegate.AsyncClient: the fencegate HTTP API as coroutines, over asyncio.

The same call steps as ``fencegate.Client`` (_api.py): the same methods, errors, retry rules and
settling of unknown commit outcomes; only the I/O differs, and it never blocks the event loop.
Like the blocking client it needs nothing but the standard library (_async_http.py), and it
keeps its connections open between requests.

    async with fencegate.AsyncClient(url, token) as client:
        grant = await client.acquire("wf-1/memory", holder="worker-7", ttl_ms=30_000)
"""

import asyncio
from typing import Optional

from ._async_http import Session
from ._call_steps import Exchange
from ._methods import AsyncMethods
from ._wire import Reply


class AsyncClient(AsyncMethods):
    """A worker, operator or admin token of one tenant, talking to one fencegate server.

    Its connections belong to the event loop that uses it: used again once that loop has closed,
    it opens new ones on the new loop; called from another loop while the first is open, it
    raises RuntimeError. Close it (``await client.aclose()``, or ``async with``) when done. Its
    arguments are ``fencegate.Client``'s.
    """

    #: The connections of the event loop in use; made by the first call on it.
    _session: Optional[Session] = None

    def __repr__(self) -> str:  # never the token
        return f"fencegate.AsyncClient({self.base_url!r})"

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Closes the client's connections; a later call opens new ones."""
        session, self._session = self._session, None
        if session is not None:
            await session.aclose()

    async def _exchange(self, step: Exchange) -> Reply:
        session = self._session_of_this_loop()
        return await session.exchange(
            step.method, step.path, self._token, step.body, step.resendable
        )

    def _session_of_this_loop(self) -> Session:
        session = self._session
        if session is not None and session.loop is not asyncio.get_running_loop():
            if not session.loop.is_closed():
                raise RuntimeError(
                    f"{self!r} is in use on another event loop that is still open: use one "
                    "AsyncClient per event loop, or aclose() it on its loop first"
                )
            session.discard()  # its loop is gone, and its connections with it
            session = None
        if session is None:
            session = self._session = Session(self._endpoint, self.timeout, self.max_answer_bytes)
        return session
