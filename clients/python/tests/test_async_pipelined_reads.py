"""Reads an AsyncClient starts together (``asyncio.gather``) go out on one connection, in one
write, and each gets its own answer in order (HTTP/1.1 pipelining): a LangGraph saver reads a
thread's newest checkpoint and its pending writes together as every run starts. Against the real
server, through the connection-counting relay."""

import asyncio
from typing import Any, Awaitable, Callable, Tuple

from test_async_connections import CountingRelay

import fencegate
from fencegate.models import Write

Scenario = Callable[[fencegate.AsyncClient, CountingRelay], Awaitable[Any]]


def through_relay(tenant: Any, scenario: Scenario) -> Tuple[Any, CountingRelay]:
    """What ``scenario`` returns, run with a client whose connections pass the relay."""
    relay = CountingRelay(tenant.server.url)

    async def with_client() -> Any:
        async with fencegate.AsyncClient(relay.url, tenant.worker_token) as client:
            return await scenario(client, relay)

    try:
        return asyncio.run(with_client()), relay
    finally:
        relay.close()


def test_reads_started_together_share_one_connection_and_each_gets_its_answer(tenant):
    scope = "wf-p1/memory"

    async def scenario(client: fencegate.AsyncClient, relay: CountingRelay) -> Any:
        grant = await client.acquire(scope, holder="w", ttl_ms=30_000)
        writes = [Write(f"r{n}", expect_revision=0, value={"n": n}) for n in range(4)]
        await client.commit(scope=scope, fence=grant.fence, operation_id="p1", writes=writes)
        opened = len(relay.connections)
        records = await asyncio.gather(*(client.get_record(scope, f"r{n}") for n in range(4)))
        return opened, [record.value for record in records]

    (opened, values), relay = through_relay(tenant, scenario)
    assert values == [{"n": n} for n in range(4)]
    assert len(relay.connections) == opened == 1


def test_pipelined_reads_on_a_connection_the_server_closed_are_sent_again(tenant):
    scope = "wf-p2/memory"

    async def scenario(client: fencegate.AsyncClient, relay: CountingRelay) -> Any:
        await client.get_record(scope, "warm")
        relay.close_all()  # the idle connection ends as the reads are made
        return await asyncio.gather(*(client.get_record(scope, f"r{n}") for n in range(3)))

    records, _ = through_relay(tenant, scenario)
    assert [(r.name, r.exists) for r in records] == [(f"r{n}", False) for n in range(3)]
