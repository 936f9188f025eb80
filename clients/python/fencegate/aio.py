"""fencegate.AsyncClient: the fencegate HTTP API as coroutines, over asyncio.

The same call steps as ``fencegate.Client`` (_api.py): the same methods, errors, retry rules and
settling of unknown commit outcomes; only the I/O differs, and it never blocks the event loop.
Like the blocking client it needs nothing but the standard library (_async_http.py), and it
keeps its connections open between requests.

    async with fencegate.AsyncClient(url, token) as client:
        grant = await client.acquire("wf-1/memory", holder="worker-7", ttl_ms=30_000)
"""

import asyncio
import time
from typing import Any, Iterable, Mapping, Optional

from ._async_http import Session
from ._call_steps import Exchange, run_async
from ._coalescing import CommitCoalescer, check_window
from ._commit_batch import commit_body, send_commit
from ._methods import AsyncMethods
from ._rate_limit import DEFAULT_RATE_LIMIT_WAIT_S, rate_limit_pause
from ._wire import MAX_ANSWER_BYTES, MAX_BODY_BYTES, Reply
from .models import CommitPart, CommitResult


class AsyncClient(AsyncMethods):
    """A worker, operator or admin token of one tenant, talking to one fencegate server.

    Its connections belong to the event loop that uses it: used again once that loop has closed,
    it opens new ones on the new loop; called from another loop while the first is open, it
    raises RuntimeError. Close it (``await client.aclose()``, or ``async with``) when done. Its
    arguments are ``fencegate.Client``'s.
    """

    #: The connections of the event loop in use; made by the first call on it.
    _session: Optional[Session] = None
    #: The commits waiting to go together, on the event loop in use.
    _coalescer: Optional[CommitCoalescer] = None

    def __init__(
        self,
        base_url: str,
        token: str,
        timeout: float = 10.0,
        retries: int = 3,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        coalesce_commits: bool = True,
        coalesce_window_ms: float = 0,
        rate_limit_wait: float = DEFAULT_RATE_LIMIT_WAIT_S,
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        """As ``fencegate.Client``'s, and: ``coalesce_commits`` (default True) sends concurrent
        ``commit`` calls together, one ``POST /v1/commits`` per batch that fits, each caller
        answered on its own (False: each alone); ``coalesce_window_ms`` is how long a commit
        waits for others, 0 (default) until the event loop's next turn, at most 1 (any other
        value is a ``ValueError``)."""
        super().__init__(
            base_url, token, timeout, retries, max_answer_bytes, rate_limit_wait, max_body_bytes
        )
        self.coalesce_commits = coalesce_commits
        self.coalesce_window_ms = check_window(coalesce_window_ms)

    async def commit(
        self,
        scope: str,
        fence: int,
        operation_id: str,
        writes: Iterable[CommitPart] = (),
        reads: Iterable[CommitPart] = (),
        intents: Iterable[CommitPart] = (),
        task_id: Optional[str] = None,
        policy_version: Optional[str] = None,
        settle_unknown: bool = True,
        release: bool = False,
        job: Optional[Mapping[str, Any]] = None,
    ) -> CommitResult:
        """As ``fencegate.Client.commit``; with coalescing on, commits called together go out
        in one request, and each caller gets its own answer or error."""
        body = commit_body(
            scope,
            fence,
            operation_id,
            writes,
            reads,
            intents,
            task_id,
            policy_version,
            release,
            job,
        )
        if not self.coalesce_commits:
            return await run_async(send_commit(self, body, settle_unknown), self._exchange)
        return await self._coalescer_of_this_loop().commit(body, settle_unknown)

    def _coalescer_of_this_loop(self) -> CommitCoalescer:
        coalescer = self._coalescer
        if coalescer is None or coalescer.loop is not asyncio.get_running_loop():
            coalescer = self._coalescer = CommitCoalescer(
                self, self._exchange, self.coalesce_window_ms
            )
        return coalescer

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
        # The rate limit's budget runs from the first send, the exchanges included.
        started = time.monotonic()
        while True:
            session = self._session_of_this_loop()
            reply = await session.exchange(
                step.method, step.path, self._token, step.body, step.resendable
            )
            waited = time.monotonic() - started
            pause = rate_limit_pause(reply, waited, self.rate_limit_wait)
            if pause is None:
                return reply
            await asyncio.sleep(pause)

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
