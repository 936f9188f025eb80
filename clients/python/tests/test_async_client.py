"""What is particular to AsyncClient: its methods are coroutines that leave the event loop free
while a request is in flight, AsyncLeaseKeeper renews from a task and signals a lost lease once,
and the client needs no package beyond the standard library. (The behaviour both clients share is
tested with each of them: see the ``connect`` fixture.) Its connections belong to one event loop:
used again after that loop closed, it opens new ones on the new loop; called from another loop
while the first is open, it says so at once."""

import asyncio
import inspect
import subprocess
import sys
import time

import pytest

import fencegate
from conftest import HERE
from fencegate import AsyncLeaseKeeper, Write


def test_every_route_has_a_coroutine_method():
    for name in fencegate.Client.ROUTES:
        method = getattr(fencegate.AsyncClient, name)
        assert inspect.iscoroutinefunction(method), name
        assert inspect.signature(method) == inspect.signature(getattr(fencegate.Client, name))


def test_the_event_loop_runs_on_while_a_request_is_in_flight(proxy, tenant):
    proxy.delay = 0.5  # the request is held before it is forwarded

    async def scenario():
        ticks = 0
        in_flight = asyncio.Event()

        async def ticker():
            nonlocal ticks
            await in_flight.wait()
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticking = asyncio.ensure_future(ticker())
        async with fencegate.AsyncClient(proxy.url, tenant.worker_token) as client:
            read = asyncio.ensure_future(client.get_record("wf-a1/memory", "summary"))
            in_flight.set()
            record = await read
        ticking.cancel()
        return record, ticks

    try:
        record, ticks = asyncio.run(scenario())
    finally:
        proxy.close()
    assert record.revision == 0
    # A blocking call would have held the loop for the whole half second: no tick at all.
    assert ticks >= 10


def test_concurrent_calls_share_one_client(tenant):
    async def scenario():
        async with fencegate.AsyncClient(tenant.server.url, tenant.worker_token) as client:
            grants = await asyncio.gather(
                *(client.acquire(f"wf-a2/{n}", holder="w", ttl_ms=30_000) for n in range(8))
            )
            return sorted(grant.scope for grant in grants)

    assert asyncio.run(scenario()) == [f"wf-a2/{n}" for n in range(8)]


def test_the_async_keeper_renews_so_the_lease_outlives_its_ttl(tenant, server):
    scope = "wf-a3/memory"
    operator = tenant.operator()

    async def scenario():
        async with fencegate.AsyncClient(tenant.server.url, tenant.worker_token) as client:
            async with AsyncLeaseKeeper(client, scope, "keeper", ttl_ms=1_000,
                                        renew_every=0.05) as lease:
                now = server.advance_clock(800)
                for _ in range(500):
                    if operator.get_scope(scope).lease_expires_at == now + 1_000:
                        break
                    await asyncio.sleep(0.02)
                server.advance_clock(800)  # past the first grant's expiry
                result = await lease.commit("a3", writes=[Write("summary", 0, "kept")])
                return result, lease.lost.is_set()

    result, lost = asyncio.run(scenario())
    assert result.committed, result.error
    assert lost is False
    assert operator.get_scope(scope).holder is None  # released on exit


def test_the_async_keeper_signals_a_takeover_once_and_its_commit_is_fenced_out(tenant):
    scope = "wf-a4/memory"
    operator = tenant.operator()
    losses = []

    async def scenario():
        async with fencegate.AsyncClient(tenant.server.url, tenant.worker_token) as client:
            async with AsyncLeaseKeeper(client, scope, "keeper", ttl_ms=30_000, renew_every=0.05,
                                        on_lost=losses.append) as lease:
                operator.takeover(scope, holder="operator-run", ttl_ms=30_000)
                await asyncio.wait_for(lease.lost.wait(), 10)
                with pytest.raises(fencegate.StaleFenceError):
                    lease.check()
                return await lease.commit("a4", writes=[Write("summary", 0, "late")])

    result = asyncio.run(scenario())
    assert result.error is not None and result.error.code == "stale_fence"
    assert len(losses) == 1 and isinstance(losses[0], fencegate.StaleFenceError)
    assert operator.get_scope(scope).holder == "operator-run"  # never released by the keeper
    assert operator.get_record(scope, "summary").exists is False


def test_a_held_scope_refuses_the_async_keeper_with_lease_held(tenant):
    scope = "wf-a5/memory"
    tenant.worker().acquire(scope, holder="other", ttl_ms=30_000)

    async def scenario():
        async with fencegate.AsyncClient(tenant.server.url, tenant.worker_token) as client:
            await AsyncLeaseKeeper(client, scope, "keeper", ttl_ms=30_000).start()

    with pytest.raises(fencegate.LeaseHeldError) as held:
        asyncio.run(scenario())
    assert held.value.details["holder"] == "other"


def test_the_async_client_needs_nothing_but_the_standard_library(tenant):
    # httpx (or any HTTP package) made unimportable in a fresh interpreter: the client still talks.
    program = (
        "import sys, asyncio\n"
        "for absent in ('httpx', 'httpcore', 'aiohttp', 'anyio'): sys.modules[absent] = None\n"
        f"sys.path.insert(0, {str(HERE.parent)!r})\n"
        "import fencegate\n"
        "async def read():\n"
        f"    async with fencegate.AsyncClient({tenant.server.url!r}, {tenant.worker_token!r}) as c:\n"
        "        return [(await c.get_record('wf-a6/memory', 'summary')).revision for _ in range(3)]\n"
        "print(asyncio.run(read()))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[0, 0, 0]"


def test_a_client_used_again_after_its_first_event_loop_closed_works_on_the_new_one(tenant):
    client = fencegate.AsyncClient(tenant.server.url, tenant.worker_token, timeout=2)
    assert asyncio.run(client.get_record("wf-a7/memory", "summary")).revision == 0

    async def again():
        try:
            return await asyncio.wait_for(client.get_record("wf-a7/memory", "summary"), 5)
        finally:
            await client.aclose()

    started = time.monotonic()
    assert asyncio.run(again()).revision == 0
    assert time.monotonic() - started < 2


def test_a_client_called_from_a_second_open_event_loop_says_so_at_once(tenant, event_loop_thread):
    client = fencegate.AsyncClient(tenant.server.url, tenant.worker_token, timeout=2)
    event_loop_thread.run(client.get_record("wf-a8/memory", "summary"))

    async def elsewhere():
        return await asyncio.wait_for(client.get_record("wf-a8/memory", "summary"), 5)

    started = time.monotonic()
    try:
        with pytest.raises(RuntimeError) as refused:
            asyncio.run(elsewhere())
    finally:
        event_loop_thread.run(client.aclose())
    assert "another event loop" in str(refused.value)
    assert time.monotonic() - started < 1
