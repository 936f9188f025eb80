"""The lease of one delivery of a task: acquired, or taken over from the delivery it replaces.

A broker redelivers a task whose message was not acknowledged in time (kombu's Redis transport
after its ``visibility_timeout``), while the first delivery may still be running. The new
delivery is the one the broker now counts on, so it takes the task's scope over (fence + 1) with
the worker take-over right; the earlier delivery's commits are refused from then on. A lease held
by anything else than a delivery of the same task is waited out, as the BullMQ integration does.
"""

import time

from .._base import FencegateError
from .._methods import ClientApi
from ..errors import LeaseHeldError
from ..lease import LeaseKeeper
from ..models import Grant
from .names import TaskDelivery
from .options import FencedTaskOptions


class DeliveryLease(LeaseKeeper):
    def __init__(
        self, client: ClientApi, scope: str, delivery: TaskDelivery, options: FencedTaskOptions
    ) -> None:
        super().__init__(client, scope, delivery.holder, options.ttl_ms, options.policy_version)
        self.delivery = delivery
        self.wait_s = options.wait_s
        self.policy_versions = options.policy_versions

    def lose(self, error: FencegateError) -> None:
        """Marks the lease lost: a commit was refused for want of authority."""
        self._lose(error)

    def _acquire(self) -> Grant:
        """Acquired, taken over from the delivery this one replaces, or waited for."""
        deadline = time.monotonic() + self.wait_s
        while True:
            try:
                return self.client.acquire(
                    self.scope,
                    self.holder,
                    self.ttl_ms,
                    self.policy_version,
                    job=self.delivery.ledger("reserved", "running"),
                    policy_versions=self.policy_versions,
                )
            except LeaseHeldError as held:
                current = str(held.details.get("holder", ""))
                if self.delivery.replaces(current):
                    return self._take_over(current)
                if time.monotonic() >= deadline:
                    raise
                time.sleep(min(1.0, max(0.05, deadline - time.monotonic())))

    def _take_over(self, replaced: str) -> Grant:
        # A task by version keeps the scope's version: the grant says which body runs, if any.
        grant = self.client.takeover(
            self.scope,
            self.holder,
            ttl_ms=self.ttl_ms,
            policy_version=self.policy_version,
            reason=f"the broker redelivered the task: {self.holder} replaces {replaced}",
        )
        # A takeover carries no job entry: the run's states are recorded under its new fence.
        if grant.policy_version is not None:
            job = self.delivery.ledger("reserved", "running")
            self.client.record_job_events(
                {
                    "job_id": job["job_id"],
                    "attempt": job["attempt"],
                    "scope": grant.scope,
                    "policy_version": grant.policy_version,
                    "fence": grant.fence,
                    "state": state,
                }
                for state in job["states"]
            )
        return grant
