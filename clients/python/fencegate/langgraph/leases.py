"""The leases a saver holds: one per thread its runs write without a fence of their own, and one
per write ownership it claimed. Each is renewed every third of its ttl, from a thread when the
saver has a synchronous client, else from a task of the event loop, until it is released or
lost. A lost lease is kept, never re-acquired behind the run's back: the superseded run's next
write still carries its old fence, so the store refuses it and the run stops.
"""

import asyncio
import threading
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from .._base import FencegateError
from .._methods import AsyncClientApi, ClientApi
from .._route_table import RENEWAL_LEASE_LOST_CODES
from .saver_steps import SaverSteps, call


@dataclass
class HeldLease:
    scope: str
    holder: str
    fence: int
    lost: bool = False


class ThreadLeases:
    def __init__(
        self, client: Optional[ClientApi], aclient: Optional[AsyncClientApi], ttl_ms: int
    ) -> None:
        self.client = client
        self.aclient = aclient
        self.ttl_ms = ttl_ms
        self._held: Dict[Tuple[str, str], HeldLease] = {}
        #: The acquires in flight, by (scope, holder), which concurrent writes share.
        self.acquiring: Dict[Tuple[str, str], "asyncio.Future[Any]"] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._task: Optional["asyncio.Task[None]"] = None

    def held(self, scope: str, holder: str) -> Optional[HeldLease]:
        return self._held.get((scope, holder))

    def hold(self, scope: str, holder: str, fence: int) -> HeldLease:
        """Keeps a granted lease renewed."""
        lease = HeldLease(scope, holder, fence)
        with self._lock:
            self._held[(scope, holder)] = lease
        self._keep_renewing()
        return lease

    def forget(self, scope: str) -> None:
        """Drops every lease on ``scope`` without a word to the store (it was deleted)."""
        with self._lock:
            for key in [key for key in self._held if key[0] == scope]:
                del self._held[key]

    def release(self, lease: HeldLease) -> "SaverSteps[None]":
        """Releases a lease still held; a lost one simply is no longer kept."""
        with self._lock:
            self._held.pop((lease.scope, lease.holder), None)
        if lease.lost:
            return
        lease.lost = True
        try:
            yield call("release", lease.scope, lease.holder, lease.fence)
        except FencegateError:
            pass  # unreleased, the lease runs out by itself

    def release_all(self) -> List[HeldLease]:
        """Stops renewing; the leases to release."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=self.ttl_ms / 1000.0)
        if self._task is not None:
            self._task.cancel()
        with self._lock:
            return list(self._held.values())

    def _keep_renewing(self) -> None:
        self._stop.clear()
        if self.client is not None:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._renew_in_thread,
                    args=(self.client,),
                    name="fencegate-langgraph-leases",
                    daemon=True,
                )
                self._thread.start()
            return
        assert self.aclient is not None  # the saver has one client or the other
        if self._task is None or self._task.done():
            renewing = self._renew_in_task(self.aclient)
            self._task = asyncio.get_running_loop().create_task(renewing)

    def _renew_in_thread(self, client: ClientApi) -> None:
        while not self._stop.wait(self._interval()):
            for lease in self._live():
                try:
                    client.renew(*_renewal(lease, self.ttl_ms))
                except FencegateError as error:
                    _renew_failed(lease, error)

    async def _renew_in_task(self, aclient: AsyncClientApi) -> None:
        while not self._stop.is_set():
            await asyncio.sleep(self._interval())
            for lease in self._live():
                try:
                    await aclient.renew(*_renewal(lease, self.ttl_ms))
                except FencegateError as error:
                    _renew_failed(lease, error)

    def _live(self) -> List[HeldLease]:
        with self._lock:
            return [lease for lease in self._held.values() if not lease.lost]

    def _interval(self) -> float:
        return max(0.001, self.ttl_ms / 3000.0)


def _renew_failed(lease: HeldLease, error: FencegateError) -> None:
    # A store that cannot be reached is tried again next time; a lost lease stays lost.
    lease.lost = lease.lost or error.code in RENEWAL_LEASE_LOST_CODES


def _renewal(lease: HeldLease, ttl_ms: int) -> Tuple[str, str, int, int]:
    return lease.scope, lease.holder, lease.fence, ttl_ms
