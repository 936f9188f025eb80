"""AsyncLeaseKeeper: LeaseKeeper for an AsyncClient, renewing from a task of the event loop."""

import asyncio
import time
from typing import Callable, Iterable, Optional

from ._base import FencegateError
from ._methods import AsyncClientApi
from .lease import LeaseRules
from .models import CommitPart, CommitResult, Grant


class AsyncLeaseKeeper(LeaseRules):
    """Acquire, keep and release one lease, as coroutines.

    >>> async with AsyncLeaseKeeper(client, "wf-1/memory", "worker-7", ttl_ms=30_000) as lease:
    ...     record = await client.get_record(lease.scope, "summary")
    ...     lease.check()                  # raises if the lease is known to be lost
    ...     result = await lease.commit(
    ...         f"summary-{lease.fence}", writes=[Write("summary", record.revision, "...")]
    ...     )
    """

    def __init__(
        self,
        client: AsyncClientApi,
        scope: str,
        holder: str,
        ttl_ms: int,
        policy_version: Optional[str] = None,
        renew_every: Optional[float] = None,
        on_lost: Optional[Callable[[FencegateError], None]] = None,
    ) -> None:
        """``renew_every`` in seconds, a third of the ttl by default; ``on_lost`` is called once,
        from the renewing task, with the error that ended the lease."""
        super().__init__(scope, holder, ttl_ms, policy_version, renew_every, on_lost)
        self.client = client
        self.lost = asyncio.Event()
        self._task: Optional["asyncio.Task[None]"] = None

    async def start(self) -> Grant:
        """Acquires the lease (refusals such as ``lease_held`` raise) and starts renewing it."""
        grant = await self.client.acquire(self.scope, self.holder, self.ttl_ms, self.policy_version)
        self._grant = grant
        self._task = asyncio.get_running_loop().create_task(
            self._renew_loop(), name=f"fencegate-lease:{self.scope}"
        )
        return grant

    async def stop(self, release: bool = True) -> None:
        """Stops renewing and, unless the lease was lost, releases it."""
        task, self._task = self._task, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
        if release and self._grant is not None and not self.lost.is_set():
            try:
                await self.client.release(self.scope, self.holder, self._grant.fence)
            except FencegateError:
                pass  # unreleased, the lease simply runs out

    async def __aenter__(self) -> "AsyncLeaseKeeper":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def commit(
        self,
        operation_id: str,
        writes: Iterable[CommitPart] = (),
        reads: Iterable[CommitPart] = (),
        intents: Iterable[CommitPart] = (),
        task_id: Optional[str] = None,
    ) -> CommitResult:
        """A commit on this scope carrying the granted fence (and policy version, if any)."""
        arguments = self._commit_arguments(operation_id, writes, reads, intents, task_id)
        result: CommitResult = await self.client.commit(**arguments)
        return result

    async def _renew_loop(self) -> None:
        last_renewed = time.monotonic()
        while True:
            await asyncio.sleep(self.renew_every)
            try:
                self._grant = await self.client.renew(
                    self.scope, self.holder, self.fence, self.ttl_ms
                )
                last_renewed = time.monotonic()
            except FencegateError as error:
                ended = self._renew_failure_ends_lease(error, last_renewed)
                if ended is not None:
                    self._lose(ended)
                    return

    def _lose(self, error: FencegateError) -> None:
        if self.lost.is_set():
            return
        self.loss = error
        self.lost.set()
        if self.on_lost is not None:
            self.on_lost(error)
