"""Concurrent writes to a thread the saver does not hold yet share one acquire: LangGraph's first
run of a thread sends its checkpoint and task writes at once, and each would otherwise acquire
the thread's lease on its own."""

import asyncio
from typing import Any, List

import pytest

import fencegate
from fencegate.langgraph import FencedCheckpointSaver

pytestmark = pytest.mark.asyncio


class CountingClient(fencegate.AsyncClient):
    """A real AsyncClient that also keeps the scopes it sent an acquire for."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.acquired: List[str] = []

    async def acquire(self, scope: str, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        self.acquired.append(scope)
        return await super().acquire(scope, *args, **kwargs)


async def test_concurrent_first_writes_send_one_acquire(tokens: Any) -> None:
    client = CountingClient(tokens.url, tokens.worker)
    async with FencedCheckpointSaver(client=client) as saver:
        config = {
            "configurable": {"thread_id": "shared", "checkpoint_ns": "", "checkpoint_id": "c1"}
        }
        await asyncio.gather(
            *(saver.aput_writes(config, [("out", n)], f"task-{n}") for n in range(3))
        )
        assert client.acquired == [saver.scope_for("shared")]
        stored = await saver.aget_tuple(config)
        assert stored is None  # writes only, no checkpoint
        records = await client.list_records(saver.scope_for("shared"))
        assert len([r for r in records if r.exists]) == 3
    await client.aclose()


async def test_a_failed_shared_acquire_reaches_every_writer(tokens: Any) -> None:
    client = CountingClient(tokens.url, tokens.worker)
    holder = fencegate.Client(tokens.url, tokens.worker)
    async with FencedCheckpointSaver(client=client) as saver:
        holder.acquire(saver.scope_for("held"), "someone-else", 60_000)
        config = {"configurable": {"thread_id": "held", "checkpoint_ns": "", "checkpoint_id": "c1"}}
        outcomes = await asyncio.gather(
            *(saver.aput_writes(config, [("out", n)], f"task-{n}") for n in range(3)),
            return_exceptions=True,
        )
        assert [type(o).__name__ for o in outcomes] == ["LeaseHeldError"] * 3
        assert client.acquired == [saver.scope_for("held")]
    await client.aclose()
