"""The asynchronous saver commits through its AsyncClient, which coalesces: writes asked for
together on several threads (each thread one commit of its own) leave as one ``POST /v1/commits``,
counted at a proxy in front of the server; with the client's coalescing off, as one
``POST /v1/commit`` each. Every write is stored either way."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable, Dict, List, cast
from uuid import uuid4

import pytest
from fault_proxy import FaultProxy
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointMetadata
from lg_checkpoints import checkpoint, child_of, config, metadata

import fencegate
from fencegate.langgraph import FencedCheckpointSaver

if TYPE_CHECKING:  # for the fixture's type only: which conftest a run imports first varies
    from conftest import Tokens

pytestmark = pytest.mark.asyncio

THREADS = 4


def thread_config(thread: str) -> RunnableConfig:
    return cast(RunnableConfig, config(thread))


def next_of(stored: RunnableConfig) -> RunnableConfig:
    """The config of the checkpoint after ``stored``."""
    return cast(RunnableConfig, child_of(cast(Dict[str, Any], stored)))


def step(n: int) -> CheckpointMetadata:
    return cast(CheckpointMetadata, metadata(step=n))


def commit_routes(proxy: FaultProxy) -> List[str]:
    """The commit requests the proxy took (a lease renewal may come between them)."""
    paths = [line.split(" ")[1] for line in proxy.seen]
    return [path for path in paths if path in ("/v1/commit", "/v1/commits")]


async def write_threads_together(
    saver: FencedCheckpointSaver, proxy: FaultProxy
) -> List[RunnableConfig]:
    """Stores a first checkpoint on each of THREADS threads (acquiring their leases), then, all
    at once, each thread's next step: its task's pending writes and its checkpoint, which the
    saver joins into one commit per thread. Checks that all of it is stored, and answers the
    configs of the checkpoints stored together; the proxy counts from the first checkpoints on."""
    threads = [str(uuid4()) for _ in range(THREADS)]
    parents = [
        await saver.aput(thread_config(thread), checkpoint(), step(-1), {}) for thread in threads
    ]
    proxy.seen.clear()
    written = await asyncio.gather(
        *(saver.aput_writes(parent, [("n", 1)], "task-a") for parent in parents),
        *(
            saver.aput(next_of(parent), checkpoint({"n": 1}), step(0), {"n": 1})
            for parent in parents
        ),
    )
    stored = [cast(RunnableConfig, put) for put in written[THREADS:]]
    for thread, parent, put in zip(threads, parents, stored):
        newest = await saver.aget_tuple(thread_config(thread))
        assert newest is not None
        assert newest.checkpoint["id"] == put["configurable"]["checkpoint_id"]
        assert newest.checkpoint["channel_values"] == {"n": 1}
        ran = await saver.aget_tuple(parent)
        assert ran is not None
        assert list(ran.pending_writes or []) == [("task-a", "n", 1)]
    return stored


async def test_concurrent_writes_of_several_threads_leave_as_one_batch(
    tokens: Tokens,
    make_saver: Callable[..., FencedCheckpointSaver],
    proxy: FaultProxy,
) -> None:
    saver = make_saver(aclient=fencegate.AsyncClient(proxy.url, tokens.worker))
    await write_threads_together(saver, proxy)
    # Each thread's writes and checkpoint are one commit; the threads' commits one request.
    assert commit_routes(proxy) == ["/v1/commits"]


async def test_with_the_clients_coalescing_off_each_thread_commits_alone(
    tokens: Tokens,
    make_saver: Callable[..., FencedCheckpointSaver],
    proxy: FaultProxy,
) -> None:
    alone = fencegate.AsyncClient(proxy.url, tokens.worker, coalesce_commits=False)
    saver = make_saver(aclient=alone)
    await write_threads_together(saver, proxy)
    assert commit_routes(proxy) == ["/v1/commit"] * THREADS
