"""The lease of one delivery of a task: acquired, or taken over from the delivery it replaces.

A broker redelivers a task whose message was not acknowledged in time (kombu's Redis transport
after its ``visibility_timeout``), while the first delivery may still be running. The new
delivery is the one the broker now counts on, so it takes the task's scope over (fence + 1) with
the worker take-over right; the earlier delivery's commits are refused from then on. A lease held
by anything else than a delivery of the same task is waited out, as the BullMQ integration does.
"""

import threading
import time
from typing import Any, Dict, List, Mapping, Optional

from ..client import Client
from ..errors import LeaseHeldError
from ..lease import LeaseKeeper
from ..models import Grant
from .._base import FencegateError


class DeliveryLease(LeaseKeeper):
    def __init__(
        self,
        client: Client,
        scope: str,
        holder: str,
        ttl_ms: int,
        policy_version: Optional[str],
        job: Mapping[str, Any],
        replaces: str,
        wait_s: float,
    ) -> None:
        """``job`` is the run's ledger entry (``job_id``, ``attempt``); ``replaces`` the prefix of
        the holders this delivery may take the scope over from; ``wait_s`` how long it waits out
        another holder's lease before it gives up with ``lease_held``."""
        super().__init__(client, scope, holder, ttl_ms, policy_version)
        self.job = dict(job)
        self.replaces = replaces
        self.wait_s = wait_s

    def start(self) -> Grant:
        self._grant = self._take()
        self._thread = threading.Thread(
            target=self._renew_loop, name=f"fencegate-lease:{self.scope}", daemon=True
        )
        self._thread.start()
        return self._grant

    def lose(self, error: FencegateError) -> None:
        """Marks the lease lost: a commit was refused for want of authority."""
        self._lose(error)

    def ledger(self, states: List[str]) -> Dict[str, Any]:
        """The run's job entry with ``states``, as acquire, commit and release carry it."""
        return {**self.job, "states": states}

    def _take(self) -> Grant:
        deadline = time.monotonic() + self.wait_s
        while True:
            try:
                return self.client.acquire(
                    self.scope,
                    self.holder,
                    self.ttl_ms,
                    self.policy_version,
                    job=self.ledger(["reserved", "running"]),
                )
            except LeaseHeldError as held:
                current = str(held.details.get("holder", ""))
                if current.startswith(self.replaces):
                    return self._take_over(current)
                if time.monotonic() >= deadline:
                    raise
                time.sleep(min(1.0, max(0.05, deadline - time.monotonic())))

    def _take_over(self, replaced: str) -> Grant:
        grant = self.client.takeover(
            self.scope,
            self.holder,
            ttl_ms=self.ttl_ms,
            policy_version=self.policy_version,
            reason=f"the broker redelivered the task: {self.holder} replaces {replaced}",
        )
        # A takeover carries no job entry: the run's states are recorded under its new fence.
        if grant.policy_version is not None:
            self.client.record_job_events(
                {
                    **self.job,
                    "scope": grant.scope,
                    "policy_version": grant.policy_version,
                    "fence": grant.fence,
                    "state": state,
                }
                for state in ("reserved", "running")
            )
        return grant
