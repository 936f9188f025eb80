"""LeaseKeeper: holds a lease, renews it in the background, signals when it is lost, and commits
with the fence it was granted. AsyncLeaseKeeper (aio_lease.py) is the same for AsyncClient.

The keeper's view is a hint, never the authority: a commit always carries the fence and the store
decides. A paused or frozen process cannot renew, its lease lapses, and when it wakes its commit
is rejected ``stale_fence`` however sure it was. What the keeper adds is an early signal, so a
worker can stop working on a scope it no longer owns (``lost``, ``on_lost``, ``check()``).
"""

import threading
import time
from typing import Any, Callable, Dict, Iterable, Optional

from ._base import FencegateError
from ._methods import ClientApi
from ._route_table import RENEWAL_LEASE_LOST_CODES
from .errors import LeaseExpiredError
from .models import CommitPart, CommitResult, Grant


class LeaseRules:
    """What both keepers share: the lease they hold, and when a failed renew ends it."""

    def __init__(
        self,
        scope: str,
        holder: str,
        ttl_ms: int,
        policy_version: Optional[str],
        renew_every: Optional[float],
        on_lost: Optional[Callable[[FencegateError], None]],
    ) -> None:
        self.scope = scope
        self.holder = holder
        self.ttl_ms = ttl_ms
        self.policy_version = policy_version
        self.renew_every = renew_every if renew_every is not None else ttl_ms / 3000.0
        self.on_lost = on_lost
        self.loss: Optional[FencegateError] = None
        self._grant: Optional[Grant] = None

    @property
    def grant(self) -> Grant:
        if self._grant is None:
            raise RuntimeError("the lease was not acquired: call start() or use `with`")
        return self._grant

    @property
    def fence(self) -> int:
        return self.grant.fence

    def check(self) -> None:
        """Raises the error that ended the lease, if the keeper knows it ended."""
        if self.loss is not None:
            raise self.loss

    def _commit_arguments(
        self,
        operation_id: str,
        writes: Iterable[CommitPart],
        reads: Iterable[CommitPart],
        intents: Iterable[CommitPart],
        task_id: Optional[str],
    ) -> Dict[str, Any]:
        """A commit on this scope carrying the granted fence (and policy version, if any)."""
        grant = self.grant
        return dict(
            scope=self.scope,
            fence=grant.fence,
            operation_id=operation_id,
            writes=writes,
            reads=reads,
            intents=intents,
            task_id=task_id,
            policy_version=grant.policy_version,
        )

    def _renew_failure_ends_lease(
        self, error: FencegateError, last_renewed: float
    ) -> Optional[FencegateError]:
        """The error that ends the lease after a failed renew, or None to try again."""
        # The renewal's own codes: it never answers the commit-only ones (authority_revoked,
        # lease_expired), since a lease that ran out and that nobody took since is renewed.
        if error.code in RENEWAL_LEASE_LOST_CODES:
            return error
        # Unavailable or unknown: try again, unless the lease has surely run out by now.
        if time.monotonic() - last_renewed >= self.ttl_ms / 1000.0:
            return LeaseExpiredError(
                f"the lease on {self.scope} could not be renewed within its ttl ({error})",
                {"scope": self.scope},
            )
        return None


class LeaseKeeper(LeaseRules):
    """Acquire, keep and release one lease; it renews from a background thread.

    >>> with LeaseKeeper(client, "wf-1/memory", "worker-7", ttl_ms=30_000) as lease:
    ...     record = client.get_record(lease.scope, "summary")
    ...     lease.check()                  # raises if the lease is known to be lost
    ...     result = lease.commit(
    ...         f"summary-{lease.fence}", writes=[Write("summary", record.revision, "...")]
    ...     )
    """

    def __init__(
        self,
        client: ClientApi,
        scope: str,
        holder: str,
        ttl_ms: int,
        policy_version: Optional[str] = None,
        renew_every: Optional[float] = None,
        on_lost: Optional[Callable[[FencegateError], None]] = None,
    ) -> None:
        """``renew_every`` in seconds, a third of the ttl by default; ``on_lost`` is called once,
        from the renewing thread, with the error that ended the lease."""
        super().__init__(scope, holder, ttl_ms, policy_version, renew_every, on_lost)
        self.client = client
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()

    def start(self) -> Grant:
        """Acquires the lease (refusals such as ``lease_held`` raise) and starts renewing it."""
        grant = self._acquire()
        self._grant = grant
        self._thread = threading.Thread(
            target=self._renew_loop, name=f"fencegate-lease:{self.scope}", daemon=True
        )
        self._thread.start()
        return grant

    def _acquire(self) -> Grant:
        return self.client.acquire(self.scope, self.holder, self.ttl_ms, self.policy_version)

    def stop(self, release: bool = True) -> None:
        """Stops renewing and, unless the lease was lost, releases it."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        if release and self._grant is not None and not self.lost.is_set():
            try:
                self.client.release(self.scope, self.holder, self._grant.fence)
            except FencegateError:
                pass  # unreleased, the lease simply runs out

    def __enter__(self) -> "LeaseKeeper":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def commit(
        self,
        operation_id: str,
        writes: Iterable[CommitPart] = (),
        reads: Iterable[CommitPart] = (),
        intents: Iterable[CommitPart] = (),
        task_id: Optional[str] = None,
    ) -> CommitResult:
        """A commit on this scope carrying the granted fence (and policy version, if any)."""
        arguments = self._commit_arguments(operation_id, writes, reads, intents, task_id)
        return self.client.commit(**arguments)

    def _renew_loop(self) -> None:
        last_renewed = time.monotonic()
        while not self._stop.wait(self.renew_every):
            try:
                self._grant = self.client.renew(self.scope, self.holder, self.fence, self.ttl_ms)
                last_renewed = time.monotonic()
            except FencegateError as error:
                ended = self._renew_failure_ends_lease(error, last_renewed)
                if ended is not None:
                    self._lose(ended)
                    return

    def _lose(self, error: FencegateError) -> None:
        with self._lock:
            if self.lost.is_set():
                return
            self.loss = error
            self.lost.set()
        if self.on_lost is not None:
            self.on_lost(error)
