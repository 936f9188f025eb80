"""fencegate.AsyncClient: the fencegate HTTP API as coroutines, over asyncio streams.

The same plans as ``fencegate.Client`` (_api.py): the same methods, errors, retry rules and
settling of unknown commit outcomes; only the I/O differs, and it never blocks the event loop.
Like the blocking client it needs nothing but the standard library (_async_http.py), and it
keeps its connections open between requests.

    async with fencegate.AsyncClient(url, token) as client:
        grant = await client.acquire("wf-1/memory", holder="worker-7", ttl_ms=30_000)
"""

from typing import Any, Awaitable, Callable, Optional

from ._api import ApiPlans, install_calls
from ._async_http import Session
from ._plans import Exchange, run_async
from ._wire import Reply


class AsyncClient(ApiPlans):
    """A worker, operator or admin token of one tenant, talking to one fencegate server.

    Its connections belong to the event loop that first uses it: use one AsyncClient per loop,
    and close it (``await client.aclose()``, or ``async with``) when done.
    """

    def __init__(self, base_url: str, token: str, timeout: float = 10.0, retries: int = 3) -> None:
        """``timeout`` is per attempt, in seconds; ``retries`` extra attempts where allowed."""
        super().__init__(base_url, token, timeout, retries)
        self._session: Optional[Session] = None

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
        if self._session is None:
            self._session = Session(self.base_url, self.timeout)
        return await self._session.exchange(step.method, step.path, self._token, step.body)


def _awaitable(plan: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    async def call(self: AsyncClient, *args: Any, **kwargs: Any) -> Any:
        return await run_async(plan(self, *args, **kwargs), self._exchange)

    return call


install_calls(AsyncClient, _awaitable)
