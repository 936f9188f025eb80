"""The asynchronous saver writes what it is asked for on one thread together: the calls of one turn
of the event loop, and those asked while a commit of the thread is in flight, go out as one commit
once it is answered. A step's pending writes and its checkpoint thus cost one durable transaction,
not two. Every call is still answered only once its writes are committed; a refusal of one call's
content fails that call alone; a superseded writer's batch stores nothing and each call of it is
refused. Commits are counted in the store's audit log."""

import asyncio
from typing import Any, Dict, List, Optional, TypedDict
from uuid import uuid4

import pytest
from langgraph.graph import END, START, StateGraph
from lg_checkpoints import checkpoint, child_of, config, metadata

import fencegate
from fencegate import PayloadTooLargeError
from fencegate.langgraph import FencedCheckpointSaver, StaleWriteOwnerError

pytestmark = pytest.mark.asyncio


class HeldClient(fencegate.AsyncClient):
    """An AsyncClient whose commits wait, while held, before they are sent to the server."""

    def __init__(self, url: str, token: str) -> None:
        super().__init__(url, token)
        self.held: Optional[asyncio.Event] = None

    def hold(self) -> None:
        self.held = asyncio.Event()

    def release(self) -> None:
        assert self.held is not None
        self.held.set()

    async def commit(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        if self.held is not None:
            await self.held.wait()
        return await super().commit(*args, **kwargs)


@pytest.fixture
def held(tokens, make_saver) -> FencedCheckpointSaver:
    """A saver whose asynchronous client holds its commits while told to."""
    return make_saver(aclient=HeldClient(tokens.url, tokens.worker))


def commits_of(tenant, saver: FencedCheckpointSaver, thread_id: str) -> List[Dict[str, Any]]:
    scope = saver.scope_for(thread_id)
    entries = tenant.operator().audit(scope=scope, kind="commit", limit=1000)["items"]
    return [entry for entry in entries if entry["outcome"] == "committed"]


async def first_checkpoint(saver: FencedCheckpointSaver, thread_id: str) -> Dict[str, Any]:
    """The first checkpoint of the thread, stored on its own: the config that points at it."""
    return await saver.aput(config(thread_id), checkpoint(), metadata(step=-1), {})


async def pending_writes(saver: FencedCheckpointSaver, parent: Dict[str, Any]) -> List[Any]:
    tuple_ = await saver.aget_tuple(parent)
    assert tuple_ is not None
    return sorted(tuple_.pending_writes, key=repr)


async def test_a_steps_pending_writes_and_its_checkpoint_are_one_commit(saver, tenant):
    thread_id = str(uuid4())
    parent = await first_checkpoint(saver, thread_id)
    before = len(commits_of(tenant, saver, thread_id))
    _, stored = await asyncio.gather(
        saver.aput_writes(parent, [("n", 1)], "task-a"),
        saver.aput(child_of(parent), checkpoint({"n": 1}), metadata(step=0), {"n": 1}),
    )
    assert len(commits_of(tenant, saver, thread_id)) == before + 1
    newest = await saver.aget_tuple(config(thread_id))
    assert newest is not None
    assert newest.checkpoint["id"] == stored["configurable"]["checkpoint_id"]
    assert newest.checkpoint["channel_values"] == {"n": 1}
    assert await pending_writes(saver, parent) == [("task-a", "n", 1)]


async def test_calls_asked_while_a_commit_is_in_flight_go_out_together(held, tenant):
    thread_id = str(uuid4())
    parent = await first_checkpoint(held, thread_id)
    before = len(commits_of(tenant, held, thread_id))
    held.aclient.hold()
    first = asyncio.ensure_future(held.aput_writes(parent, [("a", 1)], "task-a"))
    await asyncio.sleep(0.05)  # the first call's commit is waiting to be sent
    later = asyncio.gather(
        held.aput_writes(parent, [("b", 2)], "task-b"),
        held.aput(child_of(parent), checkpoint({"n": 1}), metadata(step=0), {"n": 1}),
    )
    await asyncio.sleep(0.05)
    held.aclient.release()
    await asyncio.gather(first, later)
    assert len(commits_of(tenant, held, thread_id)) == before + 2
    assert await pending_writes(held, parent) == [("task-a", "a", 1), ("task-b", "b", 2)]


async def test_no_call_is_answered_before_its_commit_is(held, tenant):
    thread_id = str(uuid4())
    parent = await first_checkpoint(held, thread_id)
    held.aclient.hold()
    writes = asyncio.ensure_future(held.aput_writes(parent, [("n", 1)], "task-a"))
    put = asyncio.ensure_future(
        held.aput(child_of(parent), checkpoint({"n": 1}), metadata(step=0), {"n": 1})
    )
    await asyncio.sleep(0.05)
    assert not writes.done() and not put.done()
    held.aclient.release()
    await asyncio.gather(writes, put)
    assert await pending_writes(held, parent) == [("task-a", "n", 1)]


async def test_a_caller_that_stops_waiting_leaves_the_others_answered(held, tenant):
    thread_id = str(uuid4())
    parent = await first_checkpoint(held, thread_id)
    held.aclient.hold()
    gone = asyncio.ensure_future(held.aput_writes(parent, [("a", 1)], "task-a"))
    stays = asyncio.ensure_future(held.aput_writes(parent, [("b", 2)], "task-b"))
    await asyncio.sleep(0.05)
    gone.cancel()
    held.aclient.release()
    await stays
    assert gone.cancelled()
    assert await pending_writes(held, parent) == [("task-a", "a", 1), ("task-b", "b", 2)]


async def test_a_refusal_of_one_calls_content_fails_that_call_alone(saver, tenant):
    thread_id = str(uuid4())
    parent = await first_checkpoint(saver, thread_id)
    too_large, stored = await asyncio.gather(
        saver.aput_writes(parent, [("n", "x" * (512 * 1024))], "task-a"),
        saver.aput(child_of(parent), checkpoint({"n": 1}), metadata(step=0), {"n": 1}),
        return_exceptions=True,
    )
    assert isinstance(too_large, PayloadTooLargeError)
    assert not isinstance(stored, BaseException)
    newest = await saver.aget_tuple(config(thread_id))
    assert newest is not None
    assert newest.checkpoint["id"] == stored["configurable"]["checkpoint_id"]
    assert await pending_writes(saver, parent) == []


async def test_a_superseded_writers_batch_is_refused_whole_and_stores_nothing(
    saver, make_saver, tenant
):
    thread_id = str(uuid4())
    parent = await first_checkpoint(saver, thread_id)
    before = len(commits_of(tenant, saver, thread_id))
    owner = await make_saver().aclaim_write_ownership(thread_id)
    results = await asyncio.gather(
        saver.aput_writes(parent, [("n", 1)], "task-a"),
        saver.aput(child_of(parent), checkpoint({"n": 1}), metadata(step=0), {"n": 1}),
        return_exceptions=True,
    )
    for result in results:
        assert isinstance(result, StaleWriteOwnerError)
        assert result.code == "stale_fence"
    assert len(commits_of(tenant, saver, thread_id)) == before
    newest = await saver.aget_tuple(config(thread_id))
    assert newest is not None
    assert newest.checkpoint["id"] == parent["configurable"]["checkpoint_id"]
    assert await pending_writes(saver, parent) == []
    await owner.aclose()


async def test_a_regular_write_keeps_its_first_value_a_special_slot_its_last(saver, tenant):
    thread_id = str(uuid4())
    parent = await first_checkpoint(saver, thread_id)
    before = len(commits_of(tenant, saver, thread_id))
    await asyncio.gather(
        saver.aput_writes(parent, [("n", "first")], "task-a"),
        saver.aput_writes(parent, [("n", "second")], "task-a"),
        saver.aput_writes(parent, [("__error__", "first failure")], "task-b"),
        saver.aput_writes(parent, [("__error__", "second failure")], "task-b"),
    )
    assert len(commits_of(tenant, saver, thread_id)) == before + 1
    assert await pending_writes(saver, parent) == [
        ("task-a", "n", "first"),
        ("task-b", "__error__", "second failure"),
    ]


async def test_calls_past_the_write_limit_take_commits_each_call_whole_in_one(
    make_saver, tenant
):
    saver = make_saver(max_writes=4)
    thread_id = str(uuid4())
    parent = await first_checkpoint(saver, thread_id)
    before = len(commits_of(tenant, saver, thread_id))
    three = [("a", 1), ("b", 2), ("c", 3)]
    await asyncio.gather(
        saver.aput_writes(parent, three, "task-a"),
        saver.aput_writes(parent, three, "task-b"),
    )
    commits = commits_of(tenant, saver, thread_id)[before:]
    tasks = [sorted({record["name"].split("/")[-2] for record in c["records"]}) for c in commits]
    assert tasks == [["task-a"], ["task-b"]]
    assert len(await pending_writes(saver, parent)) == 6


class State(TypedDict):
    n: int


def three_steps(saver: FencedCheckpointSaver, each_node: Any = None) -> Any:
    def step(state: State) -> Dict[str, int]:
        if each_node is not None:
            each_node()
        return {"n": state["n"] + 1}

    graph = StateGraph(State)
    for node in ("plan", "act", "report"):
        graph.add_node(node, step)
    graph.add_edge(START, "plan")
    graph.add_edge("plan", "act")
    graph.add_edge("act", "report")
    graph.add_edge("report", END)
    return graph.compile(checkpointer=saver)


async def test_a_graph_run_costs_one_commit_per_checkpoint_under_sync(saver, tenant):
    # Five checkpoints for three nodes (the input, the start, one per node); each task's pending
    # writes are asked for with the checkpoint of its step and join its commit.
    thread_id = str(uuid4())
    run = {"configurable": {"thread_id": thread_id}}
    await three_steps(saver).ainvoke({"n": 0}, run, durability="sync")
    assert len(commits_of(tenant, saver, thread_id)) == 5
    again = len(commits_of(tenant, saver, thread_id))
    assert (await three_steps(saver).ainvoke({"n": 0}, run, durability="sync")) == {"n": 3}
    assert len(commits_of(tenant, saver, thread_id)) == again + 5
    assert len([t async for t in saver.alist(config(thread_id))]) == 10


async def test_a_graph_run_costs_one_commit_per_checkpoint_under_async(held, tenant):
    # Under "async" LangGraph runs on while its checkpoints are stored, one after the other, and
    # asks for each task's pending writes as the task ends. Held until the run has asked for all
    # of them, the first commit is in flight while they are asked: they go out with the next
    # checkpoint.
    thread_id = str(uuid4())
    run = {"configurable": {"thread_id": thread_id}}
    await three_steps(held).ainvoke({"n": 0}, run)
    before = len(commits_of(tenant, held, thread_id))
    asked = 0
    ask_writes = held.aput_writes

    async def counted(*args: Any, **kwargs: Any) -> None:
        nonlocal asked
        asked += 1
        if asked == 4:  # the start task's and each node's
            held.aclient.release()
        await ask_writes(*args, **kwargs)

    held.aput_writes = counted  # type: ignore[method-assign]
    held.aclient.hold()
    assert (await three_steps(held).ainvoke({"n": 0}, run)) == {"n": 3}
    assert asked == 4
    assert len(commits_of(tenant, held, thread_id)) == before + 5
    assert len([t async for t in held.alist(config(thread_id))]) == 10
