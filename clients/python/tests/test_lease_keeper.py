"""LeaseKeeper renews in the background, signals a lost lease once, and commits with its fence."""

import threading
import time

import pytest

import fencegate
from fencegate import LeaseKeeper, Write


def wait_for(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition did not come true within the timeout")
        time.sleep(0.02)


def test_the_keeper_renews_so_the_lease_outlives_its_ttl(tenant, server):
    operator = tenant.operator()
    scope = "wf-k1/memory"
    with LeaseKeeper(tenant.worker(), scope, "keeper", ttl_ms=1_000, renew_every=0.05) as lease:
        granted_until = lease.grant.lease_expires_at
        now = server.advance_clock(800)
        wait_for(lambda: operator.get_scope(scope).lease_expires_at == now + 1_000)
        server.advance_clock(800)  # past the first grant's expiry
        result = lease.commit("k1", writes=[Write("summary", 0, "kept")])
        assert result.committed, result.error
        assert granted_until is not None and now + 800 > granted_until
        assert not lease.lost.is_set()
    scope_after = operator.get_scope(scope)
    assert scope_after.holder is None  # released on exit


def test_the_keeper_signals_a_takeover_once_and_its_commit_is_fenced_out(tenant):
    operator = tenant.operator()
    scope = "wf-k2/memory"
    losses = []
    signalled = threading.Event()

    def on_lost(error):
        losses.append(error)
        signalled.set()

    with LeaseKeeper(tenant.worker(), scope, "keeper", ttl_ms=30_000, renew_every=0.05,
                     on_lost=on_lost) as lease:
        operator.takeover(scope, holder="operator-run", ttl_ms=30_000)
        assert signalled.wait(10)
        assert lease.lost.is_set()
        with pytest.raises(fencegate.StaleFenceError):
            lease.check()
        result = lease.commit("k2", writes=[Write("summary", 0, "late")])
        assert result.outcome == "rejected"
        assert result.error is not None and result.error.code == "stale_fence"
    assert len(losses) == 1 and isinstance(losses[0], fencegate.StaleFenceError)
    assert operator.get_scope(scope).holder == "operator-run"  # never released by the keeper
    assert operator.get_record(scope, "summary").exists is False


def test_a_held_scope_refuses_the_keeper_with_lease_held(tenant):
    scope = "wf-k3/memory"
    tenant.worker().acquire(scope, holder="other", ttl_ms=30_000)
    with pytest.raises(fencegate.LeaseHeldError) as held:
        LeaseKeeper(tenant.worker(), scope, "keeper", ttl_ms=30_000).start()
    assert held.value.details["holder"] == "other"
    assert held.value.retryable is True
