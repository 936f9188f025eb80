"""FencedStore, LangGraph's BaseStore on fencegate records, against a real server through both
halves (the synchronous Client and the AsyncClient).

The first tests restate LangGraph's own store cases in our words: the non-vector cases of
langgraph's ``libs/checkpoint/tests/test_store.py`` (namespace listing, namespace rules) and of
LangGraph.js's PostgreSQL store tests (crud, batch, namespace and search files). The rest are the
store's own promises: preconditions answered by ``MemoryConflictError``, a superseded run's write
refused, two parallel nodes of a real StateGraph losing nothing, memory read and written by the
TypeScript FencedStore."""

import asyncio
import json
import operator
import os
import subprocess
import threading
from pathlib import Path
from typing import Annotated, Any, Dict, List, Optional, TypedDict
from uuid import uuid4

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import GetOp, ListNamespacesOp, PutOp, SearchOp

from fencegate.errors import InvalidRequestError
from fencegate.langgraph import (
    FencedPutOp,
    FencedStore,
    MemoryConflictError,
    MemoryItem,
    StaleWriteOwnerError,
)
from fencegate.models import Write

pytestmark = pytest.mark.asyncio

SCRIPT = Path(__file__).resolve().parent / "ts_memory.js"
ROOT = Path(__file__).resolve().parents[4]


class Memory:
    """One test body for both halves: ``api`` "async" awaits the a-methods, "sync" runs the
    synchronous ones (on the synchronous client) in a worker thread."""

    def __init__(self, store: FencedStore, api: str) -> None:
        self.store = store
        self.api = api

    async def __call__(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.api == "async":
            return await getattr(self.store, "a" + name)(*args, **kwargs)
        return await asyncio.to_thread(getattr(self.store, name), *args, **kwargs)


@pytest.fixture(params=["async", "sync"])
def memory(saver: Any, request: Any) -> Memory:
    return Memory(FencedStore(saver).for_thread(f"mem-{uuid4()}"), request.param)


async def put_all(memory: Memory, namespaces: List[tuple]) -> None:
    for index, namespace in enumerate(namespaces):
        await memory("put", namespace, f"id_{index}", {"data": f"value_{index:02d}"})


# LangGraph's test_store.py: listing namespaces


async def test_namespaces_by_prefix_suffix_wildcard_depth_and_page(memory: Memory) -> None:
    await put_all(
        memory,
        [
            ("a", "b", "c"),
            ("a", "b", "d", "e"),
            ("a", "b", "d", "i"),
            ("a", "b", "f"),
            ("a", "c", "f"),
            ("b", "a", "f"),
            ("users", "123"),
        ],
    )
    under_ab = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]
    assert await memory("list_namespaces", prefix=("a", "b")) == under_ab
    ending_f = [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert await memory("list_namespaces", suffix=("f",)) == ending_f
    both = await memory("list_namespaces", prefix=("a",), suffix=("f",))
    assert both == [("a", "b", "f"), ("a", "c", "f")]
    cut = await memory("list_namespaces", prefix=("a", "b"), max_depth=3)
    assert cut == [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]
    assert await memory("list_namespaces", prefix=("a", "b"), limit=2) == under_ab[:2]
    assert await memory("list_namespaces", prefix=("a", "b"), offset=2) == under_ab[2:]
    wild = await memory("list_namespaces", prefix=("a", "*", "f"))
    assert wild == [("a", "b", "f"), ("a", "c", "f")]
    assert await memory("list_namespaces", suffix=("*", "f")) == ending_f
    assert await memory("list_namespaces", prefix=("nonexistent",)) == []
    assert await memory("list_namespaces", prefix=("users", "123")) == [("users", "123")]
    depth_two = await memory("list_namespaces", max_depth=2)
    assert depth_two == [("a", "b"), ("a", "c"), ("b", "a"), ("users", "123")]


async def test_namespaces_of_an_empty_thread_and_wildcards_that_meet_nothing(
    memory: Memory,
) -> None:
    assert await memory("list_namespaces") == []
    await put_all(memory, [("users", "789", "settings"), ("guests", "456", "preferences")])
    assert await memory("list_namespaces", suffix=("*", "preferences")) == [
        ("guests", "456", "preferences")
    ]
    assert await memory("list_namespaces", prefix=("*", "users"), suffix=("*", "settings")) == []
    # A deleted item's namespace is no longer listed.
    await memory("delete", ("users", "789", "settings"), "id_0")
    assert await memory("list_namespaces") == [("guests", "456", "preferences")]


# LangGraph's test_store.py and LangGraph.js's crud file: namespace rules


async def test_bad_namespaces_are_refused_and_write_nothing(memory: Memory) -> None:
    doc = {"foo": "bar"}
    for namespace in [(), ("the", "thing.about"), ("some", "fun", ""), ("a", "b:c"), ("a", 1)]:
        with pytest.raises(InvalidRequestError) as refused:
            await memory("put", namespace, "foo", doc)
        assert refused.value.details["field"] == "namespace"
    with pytest.raises(InvalidRequestError, match="langgraph"):
        await memory("put", ("langgraph", "foo"), "bar", doc)
    # Also through batch: FencedStore refuses the reserved root there too (LangGraph's
    # InMemoryStore lets a batch bypass the rule; no fencegate write skips the checks).
    with pytest.raises(InvalidRequestError, match="langgraph"):
        await memory("batch", [PutOp(("langgraph", "foo"), "bar", doc)])
    assert await memory("list_namespaces") == []
    # "langgraph" below the root is an ordinary label.
    where = ("foo", "langgraph", "foo")
    await memory("put", where, "bar", doc)
    assert (await memory("get", where, "bar")).value == doc
    assert [item.value for item in await memory("search", where)] == [doc]
    await memory("delete", where, "bar")
    assert await memory("get", where, "bar") is None


# LangGraph.js's crud file


async def test_put_get_update_delete_and_complex_values(memory: Memory) -> None:
    namespace = ("crud", "simple")
    value = {
        "string": "test",
        "number": 42,
        "boolean": True,
        "null": None,
        "array": [1, 2, 3, "four"],
        "nested": {"deep": {"value": "nested data"}},
    }
    assert await memory("get", namespace, "nope") is None
    await memory("put", namespace, "item", value)
    item = await memory("get", namespace, "item")
    assert isinstance(item, MemoryItem)
    assert (item.namespace, item.key, item.value, item.revision) == (namespace, "item", value, 1)
    assert item.created_at <= item.updated_at
    await memory("put", namespace, "item", {"foo": "baz", "extra": 123})
    updated = await memory("get", namespace, "item")
    assert updated.value == {"foo": "baz", "extra": 123}
    assert updated.revision == 2
    assert updated.created_at == item.created_at
    assert updated.updated_at >= item.updated_at
    await memory("delete", namespace, "item")
    assert await memory("get", namespace, "item") is None
    await memory("delete", namespace, "never-written")  # deleting nothing is no error


async def test_ttl_and_vector_search_are_refused_not_ignored(memory: Memory) -> None:
    with pytest.raises(InvalidRequestError) as refused:
        await memory("put", ("ttl",), "temp", {"data": 1}, ttl=5)
    assert refused.value.details["field"] == "ttl"
    with pytest.raises(InvalidRequestError) as refused:
        await memory("search", ("docs",), query="long text")
    assert refused.value.details["field"] == "query"
    assert await memory("list_namespaces") == []
    # index is LangGraph's signature: accepted, and changes nothing.
    await memory("put", ("docs",), "d", {"text": "x"}, index=False)
    assert (await memory("get", ("docs",), "d")).value == {"text": "x"}


# LangGraph.js's batch file


async def test_batch_runs_in_order_each_operation_seeing_the_ones_before(memory: Memory) -> None:
    results = await memory(
        "batch",
        [
            PutOp(("batch",), "a", {"n": 1}),
            GetOp(("batch",), "a"),
            PutOp(("batch",), "a", {"n": 2}),
            SearchOp(("batch",)),
            PutOp(("batch",), "a", None),
            GetOp(("batch",), "a"),
            ListNamespacesOp(),
        ],
    )
    assert results[0] is None
    assert results[1].value == {"n": 1}
    assert [item.value for item in results[3]] == [{"n": 2}]
    assert results[5] is None
    assert results[6] == []


async def test_a_batch_with_one_bad_operation_changes_nothing(memory: Memory) -> None:
    with pytest.raises(InvalidRequestError):
        await memory(
            "batch", [PutOp(("batch",), "a", {"n": 1}), PutOp(("batch",), "b", "not a dict")]
        )
    assert await memory("get", ("batch",), "a") is None


# LangGraph.js's search file


async def test_search_by_prefix_filter_operators_and_pages(memory: Memory) -> None:
    docs = {
        "doc1": {"category": "programming", "difficulty": "beginner", "score": 4.5},
        "doc2": {"category": "programming", "difficulty": "intermediate", "score": 3.0},
        "doc3": {"category": "programming", "difficulty": "beginner", "score": 4.0},
    }
    for key, value in docs.items():
        await memory("put", ("docs",), key, value)
    await memory("put", ("recipes",), "cake", {"category": "dessert", "difficulty": "easy"})

    def keys(items: List[Any]) -> List[str]:
        return [item.key for item in items]

    assert keys(await memory("search", ("docs",))) == ["doc1", "doc2", "doc3"]
    assert keys(await memory("search", ())) == ["doc1", "doc2", "doc3", "cake"]
    assert keys(await memory("search", ("docs",), filter={"category": "programming"})) == [
        "doc1",
        "doc2",
        "doc3",
    ]
    beginner = {"difficulty": {"$eq": "beginner"}}
    assert keys(await memory("search", ("docs",), filter=beginner)) == ["doc1", "doc3"]
    several = {"category": "programming", "difficulty": {"$ne": "intermediate"}}
    assert keys(await memory("search", ("docs",), filter=several)) == ["doc1", "doc3"]
    within = {"difficulty": {"$in": ["beginner", "intermediate"]}}
    assert len(await memory("search", ("docs",), filter=within)) == 3
    above = {"score": {"$gt": 3.2}, "difficulty": {"$nin": ["intermediate"]}}
    assert keys(await memory("search", ("docs",), filter=above)) == ["doc1", "doc3"]
    first = await memory("search", ("docs",), limit=2)
    second = await memory("search", ("docs",), limit=2, offset=2)
    assert keys(first) + keys(second) == ["doc1", "doc2", "doc3"]
    assert await memory("search", ("nonexistent",)) == []
    with pytest.raises(InvalidRequestError):
        await memory("search", ("docs",), filter={"score": {"$regex": "x"}})


# FencedStore's own promises: preconditions


async def test_a_put_at_the_revision_read_lands_and_a_stale_one_is_refused(
    memory: Memory,
) -> None:
    where = ("customer", "profile")
    await memory("put", where, "facts", {"facts": ["a"]}, if_absent=True)
    read = await memory("get", where, "facts")
    await memory("put", where, "facts", {"facts": ["a", "b"]}, if_revision=read.revision)
    with pytest.raises(MemoryConflictError) as refused:
        await memory("put", where, "facts", {"facts": ["a", "c"]}, if_revision=read.revision)
    conflict = refused.value
    assert conflict.code == "stale_revision"
    assert conflict.is_memory_conflict_error
    assert conflict.current is not None and conflict.current.value == {"facts": ["a", "b"]}
    with pytest.raises(MemoryConflictError):
        await memory("put", where, "facts", {"facts": []}, if_absent=True)
    with pytest.raises(MemoryConflictError):
        await memory("delete", where, "facts", if_revision=read.revision)
    assert (await memory("get", where, "facts")).value == {"facts": ["a", "b"]}
    # Through batch, as a FencedPutOp.
    with pytest.raises(MemoryConflictError):
        await memory("batch", [FencedPutOp(where, "facts", {"x": 1}, if_revision=1)])


async def test_two_concurrent_upserts_of_one_key_both_land_whole(saver: Any) -> None:
    store = FencedStore(saver).for_thread(f"mem-{uuid4()}")
    await asyncio.gather(
        store.aput(("test",), "key", {"value": 1}), store.aput(("test",), "key", {"value": 2})
    )
    item = await store.aget(("test",), "key")
    assert item is not None and item.value in ({"value": 1}, {"value": 2})
    assert item.revision == 2


# FencedStore's own promises: a superseded run


async def test_a_superseded_run_cannot_write_memory(saver: Any) -> None:
    thread_id = f"mem-{uuid4()}"
    first = saver.claim_write_ownership(thread_id)
    old_run = FencedStore(saver).for_thread(thread_id, fence=first.fence)
    await asyncio.to_thread(old_run.put, ("notes",), "k", {"by": "first"})
    second = saver.claim_write_ownership(thread_id)
    new_run = FencedStore(saver).for_thread(thread_id, fence=second.fence)
    for attempt in (
        lambda: old_run.aput(("notes",), "k", {"by": "stale"}),
        lambda: old_run.adelete(("notes",), "k"),
        lambda: asyncio.to_thread(old_run.put, ("notes",), "other", {"by": "stale"}),
    ):
        with pytest.raises(StaleWriteOwnerError) as refused:
            await attempt()
        assert refused.value.code == "stale_fence"
    assert (await new_run.aget(("notes",), "k")).value == {"by": "first"}
    assert await new_run.aget(("notes",), "other") is None
    await new_run.aput(("notes",), "k", {"by": "second"})


async def test_records_whose_names_no_put_writes_are_skipped(saver: Any) -> None:
    thread_id = f"mem-{uuid4()}"
    owner = saver.claim_write_ownership(thread_id)
    # The holder commits raw records whose names the escape never makes: a bad escape, bytes that
    # are no UTF-8, a needless escape of ``a`` (which must not read as key ``a``), an empty key.
    raw = [
        "mem/ns/@ZZ",
        "mem/ns/@FF",
        "mem/ns/@61",
        "mem/ns/@6",
        "mem/ns/",
        "mem/@6Es/k",
    ]
    result = saver.client.commit(
        saver.scope_for(thread_id),
        owner.fence,
        "raw-memory-names",
        writes=[Write(name, 0, {"value": {"v": name}}) for name in raw],
    )
    assert result.outcome == "committed"
    run = FencedStore(saver).for_thread(thread_id, fence=owner.fence)
    await run.aput(("ns",), "a", {"v": "put"})
    await run.aput(("ns",), "\0", {"v": "nul"})
    found = await run.asearch(("ns",))
    assert [(item.key, item.value) for item in found] == [("\0", {"v": "nul"}), ("a", {"v": "put"})]
    assert (await run.aget(("ns",), "a")).value == {"v": "put"}
    assert await run.alist_namespaces() == [("ns",)]


async def test_no_thread_known_is_refused(saver: Any) -> None:
    with pytest.raises(InvalidRequestError, match="for_run"):
        await FencedStore(saver).aput(("a",), "k", {"v": 1})


# A real StateGraph: the store inside nodes, and two parallel nodes racing on one key


class Tally(TypedDict, total=False):
    seen: Annotated[List[str], operator.add]


def racing_graph(saver: Any, store: FencedStore, conflicts: List[str]) -> Any:
    both_read = threading.Barrier(2, timeout=30)
    where = ("team", "notes")

    def writer(name: str) -> Any:
        def node(state: Tally, config: RunnableConfig) -> Dict[str, Any]:
            memory = get_store()
            item = memory.get(where, "log")
            both_read.wait()  # both read before either writes
            while True:
                names = [] if item is None else item.value["names"]
                try:
                    memory.put(
                        where,
                        "log",
                        {"names": names + [name]},
                        if_revision=0 if item is None else item.revision,
                    )
                    return {"seen": [name]}
                except MemoryConflictError as conflict:
                    conflicts.append(name)
                    item = conflict.current

        return node

    builder = StateGraph(Tally)
    builder.add_node("left", writer("left"))
    builder.add_node("right", writer("right"))
    builder.add_edge(START, "left")
    builder.add_edge(START, "right")
    builder.add_edge("left", END)
    builder.add_edge("right", END)
    return builder.compile(checkpointer=saver, store=store)


async def test_parallel_nodes_writing_one_key_lose_nothing(saver: Any) -> None:
    store = FencedStore(saver)
    conflicts: List[str] = []
    graph = racing_graph(saver, store, conflicts)
    thread_id = f"mem-{uuid4()}"
    config = {"configurable": {"thread_id": thread_id}}
    await asyncio.to_thread(graph.invoke, {"seen": []}, config)
    item = store.for_thread(thread_id).get(("team", "notes"), "log")
    assert item is not None
    assert sorted(item.value["names"]) == ["left", "right"]
    assert len(conflicts) == 1  # one put landed; the other was refused, re-read and landed


# Both languages read each other's memory


def typescript(url: str, token: str, thread_id: str) -> Dict[str, Any]:
    done = subprocess.run(
        [os.environ.get("FENCEGATE_NODE", "node"), str(SCRIPT), url, token, thread_id],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    read: Dict[str, Any] = json.loads(done.stdout)
    return read


async def test_memory_written_in_python_reads_and_updates_in_typescript(
    tokens: Any, saver: Any
) -> None:
    thread_id = f"mem-{uuid4()}"
    store = FencedStore(saver).for_thread(thread_id)
    store.put(("customer", "prefs"), "theme", {"writers": ["python"]})
    saver.release_thread(thread_id)  # the TypeScript worker acquires the thread next
    read = await asyncio.to_thread(typescript, tokens.url, tokens.worker, thread_id)
    assert read == {
        "value": {"writers": ["python"]},
        "revision": 1,
        "namespace": ["customer", "prefs"],
    }
    after: Optional[MemoryItem] = store.get(("customer", "prefs"), "theme")
    assert after is not None
    assert (after.value, after.revision) == ({"writers": ["python", "typescript"]}, 2)
