"""LangGraph's published checkpointer conformance (langgraph-checkpoint-conformance, the base
capabilities put, put_writes, get_tuple, list and delete_thread), in tests of our own, each run
through the asynchronous and the synchronous half of the saver against a real server."""

from uuid import uuid4

import pytest
from langgraph.checkpoint.serde.types import ERROR, INTERRUPT

from lg_checkpoints import checkpoint, child_of, config, metadata
from lg_through import Through

pytestmark = [pytest.mark.asyncio, pytest.mark.parametrize("api", ["async", "sync"])]


@pytest.fixture
def it(saver, api):
    return Through(saver, api)


async def chain(it, thread_id, steps, **per_step):
    """``steps`` checkpoints on one thread, each the child of the one before; their ids."""
    ids, parent = [], config(thread_id)
    for step in range(steps):
        made = checkpoint()
        extra = {key: values[step] for key, values in per_step.items()}
        parent = await it.put(parent, made, metadata(step=step, **extra), {})
        ids.append(made["id"])
    return ids


# put


async def test_put_answers_the_config_of_the_stored_checkpoint(it):
    made = checkpoint({"k": "v"})
    stored = await it.put(config(), made, metadata(), {"k": 1})
    assert stored["configurable"]["checkpoint_id"] == made["id"]
    assert {"thread_id", "checkpoint_ns"} <= set(stored["configurable"])


async def test_put_round_trips_values_of_every_json_kind(it):
    values = {
        "text": "hello",
        "number": 42,
        "list": [1, 2, 3],
        "nested": {"deep": True},
        "none": None,
    }
    stored = await it.put(config(), checkpoint(values), metadata(), {k: 1 for k in values})
    found = await it.get_tuple(stored)
    assert found.checkpoint["channel_values"] == {k: v for k, v in values.items()}


async def test_put_round_trips_versions_and_versions_seen(it):
    seen = {"node1": {"a": 1, "b": 2}, "node2": {"a": 3}}
    made = checkpoint({"a": "x", "b": "y"}, {"a": 1, "b": 2}, versions_seen=seen)
    found = await it.get_tuple(await it.put(config(), made, metadata(), {"a": 1, "b": 2}))
    assert found.checkpoint["channel_versions"] == {"a": 1, "b": 2}
    assert found.checkpoint["versions_seen"] == seen


async def test_put_round_trips_metadata_with_custom_and_nested_keys(it):
    nested = {"profile": {"tags": ["a", "b"], "empty": {}, "none": []}, "score": 0.5}
    run_id = str(uuid4())
    md = metadata(source="input", step=3, user=nested, run_id=run_id, custom="x")
    found = await it.get_tuple(await it.put(config(), checkpoint(), md, {}))
    assert (found.metadata["source"], found.metadata["step"]) == ("input", 3)
    assert found.metadata["user"] == nested
    assert (found.metadata["run_id"], found.metadata["custom"]) == (run_id, "x")


async def test_put_keeps_root_and_child_namespaces_apart(it):
    thread_id = str(uuid4())
    root = await it.put(config(thread_id, ""), checkpoint({"x": "root"}), metadata(), {"x": 1})
    child = await it.put(
        config(thread_id, "child:abc"), checkpoint({"x": "child"}), metadata(), {"x": 1}
    )
    assert (await it.get_tuple(root)).config["configurable"]["checkpoint_ns"] == ""
    found = await it.get_tuple(child)
    assert found.config["configurable"]["checkpoint_ns"] == "child:abc"
    assert found.checkpoint["channel_values"] == {"x": "child"}


async def test_put_keeps_every_checkpoint_of_a_thread_and_threads_apart(it):
    first, second = str(uuid4()), str(uuid4())
    ids = await chain(it, first, 3)
    await it.put(config(second), checkpoint({"x": "other"}), metadata(), {"x": 1})
    for checkpoint_id in ids:
        assert (await it.get_tuple(config(first, checkpoint_id=checkpoint_id))).checkpoint[
            "id"
        ] == checkpoint_id
    assert (await it.get_tuple(config(second))).checkpoint["channel_values"] == {"x": "other"}


async def test_put_records_the_parent(it):
    thread_id = str(uuid4())
    first = await it.put(config(thread_id), checkpoint(), metadata(step=0), {})
    second = await it.put(child_of(first), checkpoint(), metadata(step=1), {})
    assert (await it.get_tuple(first)).parent_config is None
    parent = (await it.get_tuple(second)).parent_config
    assert parent["configurable"]["checkpoint_id"] == first["configurable"]["checkpoint_id"]


async def test_put_reads_unchanged_channels_from_their_earlier_version(it):
    thread_id = str(uuid4())
    one = await it.put(
        config(thread_id), checkpoint({"a": "v1", "b": "v2"}), metadata(), {"a": 1, "b": 1}
    )
    # only a changed; c is new; b is carried at version 1
    two = await it.put(
        child_of(one),
        checkpoint({"a": "v1b", "b": "v2", "c": "new"}, {"a": 2, "b": 1, "c": 1}),
        metadata(step=1),
        {"a": 2, "c": 1},
    )
    assert (await it.get_tuple(two)).checkpoint["channel_values"] == {
        "a": "v1b",
        "b": "v2",
        "c": "new",
    }
    assert (await it.get_tuple(one)).checkpoint["channel_values"] == {"a": "v1", "b": "v2"}


async def test_put_drops_a_channel_no_longer_versioned(it):
    thread_id = str(uuid4())
    one = await it.put(
        config(thread_id), checkpoint({"a": "v1", "b": "v2"}), metadata(), {"a": 1, "b": 1}
    )
    two = await it.put(child_of(one), checkpoint({"a": "v3"}, {"a": 2}), metadata(step=1), {"a": 2})
    assert (await it.get_tuple(two)).checkpoint["channel_values"] == {"a": "v3"}


# put_writes


async def test_put_writes_are_pending_writes_of_their_checkpoint(it):
    stored = await it.put(config(), checkpoint(), metadata(), {})
    task = str(uuid4())
    await it.put_writes(stored, [("ch1", "v1"), ("ch2", {"data": 123}), ("ch3", [1])], task, "a:b")
    found = await it.get_tuple(stored)
    assert sorted(found.pending_writes) == [
        (task, "ch1", "v1"),
        (task, "ch2", {"data": 123}),
        (task, "ch3", [1]),
    ]


async def test_put_writes_of_two_tasks_stay_separate(it):
    stored = await it.put(config(), checkpoint(), metadata(), {})
    one, two = str(uuid4()), str(uuid4())
    await it.put_writes(stored, [("ch", "from one")], one)
    await it.put_writes(stored, [("ch", "from two")], two)
    assert sorted((await it.get_tuple(stored)).pending_writes) == sorted(
        [(one, "ch", "from one"), (two, "ch", "from two")]
    )


async def test_put_writes_repeated_is_stored_once(it, make_saver, api):
    stored = await it.put(config(), checkpoint(), metadata(), {})
    task = str(uuid4())
    await it.put_writes(stored, [("ch", "val")], task)
    await it.put_writes(stored, [("ch", "val")], task)
    # a restarted worker (its saver closed, a new one) repeating the write stores nothing more
    await it.close()
    await Through(make_saver(), api).put_writes(stored, [("ch", "val")], task)
    assert (await it.get_tuple(stored)).pending_writes == [(task, "ch", "val")]


async def test_put_writes_keeps_error_and_interrupt_writes(it):
    stored = await it.put(config(), checkpoint(), metadata(), {})
    task = str(uuid4())
    await it.put_writes(stored, [(ERROR, "went wrong"), (INTERRUPT, {"reason": "human"})], task)
    assert sorted((await it.get_tuple(stored)).pending_writes, key=str) == sorted(
        [(task, ERROR, "went wrong"), (task, INTERRUPT, {"reason": "human"})], key=str
    )


async def test_put_writes_are_kept_per_namespace_and_per_checkpoint(it):
    thread_id = str(uuid4())
    root = await it.put(config(thread_id, ""), checkpoint(), metadata(), {})
    child = await it.put(config(thread_id, "child:1"), checkpoint(), metadata(), {})
    await it.put_writes(root, [("ch", "root")], str(uuid4()))
    await it.put_writes(child, [("ch", "child")], str(uuid4()))
    later = await it.put(child_of(root), checkpoint(), metadata(step=1), {})
    assert [w[2] for w in (await it.get_tuple(root)).pending_writes] == ["root"]
    assert [w[2] for w in (await it.get_tuple(child)).pending_writes] == ["child"]
    assert (await it.get_tuple(later)).pending_writes == []


# get_tuple


async def test_get_tuple_of_an_unknown_thread_or_checkpoint_is_none(it):
    assert await it.get_tuple(config()) is None
    stored = await it.put(config(), checkpoint(), metadata(), {})
    thread_id = stored["configurable"]["thread_id"]
    assert await it.get_tuple(config(thread_id, checkpoint_id=str(uuid4()))) is None


async def test_get_tuple_without_an_id_is_the_newest(it):
    thread_id = str(uuid4())
    ids = await chain(it, thread_id, 3)
    found = await it.get_tuple(config(thread_id))
    assert (found.checkpoint["id"], found.metadata["step"]) == (ids[-1], 2)


async def test_get_tuple_newest_follows_the_timestamp_not_the_id(it):
    thread_id = str(uuid4())
    older = await it.put(
        config(thread_id),
        checkpoint(checkpoint_id="z-older", ts="2026-01-01T00:00:00+00:00"),
        metadata(step=0),
        {},
    )
    await it.put(
        child_of(older),
        checkpoint(checkpoint_id="a-newer", ts="2026-01-01T00:00:01+00:00"),
        metadata(step=1),
        {},
    )
    assert (await it.get_tuple(config(thread_id))).checkpoint["id"] == "a-newer"


async def test_get_tuple_answers_the_full_checkpoint_and_its_config(it):
    made = checkpoint({"k": "v"})
    stored = await it.put(config(), made, metadata(source="input", step=-1), {"k": 1})
    found = await it.get_tuple(stored)
    assert found.config["configurable"] == {**stored["configurable"], "checkpoint_ns": ""}
    for key in ("id", "v", "ts", "channel_versions", "versions_seen"):
        assert found.checkpoint[key] == made[key]
    assert (found.metadata["source"], found.metadata["step"]) == ("input", -1)


# list


async def test_list_is_newest_first_and_only_the_thread(it):
    thread_id = str(uuid4())
    ids = await chain(it, thread_id, 4)
    assert await it.ids(thread_id) == list(reversed(ids))
    assert await it.ids(str(uuid4())) == []


async def test_list_follows_the_timestamp_not_the_id(it):
    thread_id = str(uuid4())
    older = await it.put(
        config(thread_id),
        checkpoint(checkpoint_id="z-older", ts="2026-01-01T00:00:00+00:00"),
        metadata(),
        {},
    )
    await it.put(
        child_of(older),
        checkpoint(checkpoint_id="a-newer", ts="2026-01-01T00:00:01+00:00"),
        metadata(step=1),
        {},
    )
    assert await it.ids(thread_id) == ["a-newer", "z-older"]
    before = await it.list(config(thread_id), before=config(thread_id, checkpoint_id="a-newer"))
    assert [t.checkpoint["id"] for t in before] == ["z-older"]


async def test_list_filters_by_namespace(it):
    thread_id = str(uuid4())
    for namespace in ("", "child:1", "child:2"):
        await it.put(config(thread_id, namespace), checkpoint(), metadata(), {})
    assert len(await it.ids(thread_id, "")) == 1
    assert len(await it.ids(thread_id, "child:1")) == 1
    assert len(await it.ids(thread_id, None)) == 3


async def test_list_filters_by_metadata_every_key_matching(it):
    thread_id = str(uuid4())
    await chain(it, thread_id, 4, source=["input", "loop", "input", "loop"], score=[1, 2, 3, 4])
    found = await it.list(config(thread_id), filter={"source": "input"})
    assert [t.metadata["step"] for t in found] == [2, 0]
    assert [
        t.metadata["step"]
        for t in await it.list(config(thread_id), filter={"source": "input", "score": 3})
    ] == [2]
    assert await it.list(config(thread_id), filter={"source": "update", "step": 99}) == []


async def test_list_pages_with_before_and_limit(it):
    thread_id = str(uuid4())
    ids = await chain(it, thread_id, 4)
    below_third = await it.list(config(thread_id), before=config(thread_id, checkpoint_id=ids[2]))
    assert [t.checkpoint["id"] for t in below_third] == [ids[1], ids[0]]
    assert len(await it.list(config(thread_id), limit=1)) == 1
    assert len(await it.list(config(thread_id), limit=2)) == 2
    one = await it.list(config(thread_id), before=config(thread_id, checkpoint_id=ids[3]), limit=1)
    assert [t.checkpoint["id"] for t in one] == [ids[2]]


async def test_list_carries_pending_writes(it):
    thread_id = str(uuid4())
    stored = await it.put(config(thread_id), checkpoint(), metadata(), {})
    task = str(uuid4())
    await it.put_writes(stored, [("ch", "val")], task)
    assert [t.pending_writes for t in await it.list(config(thread_id))] == [[(task, "ch", "val")]]


# delete_thread


async def test_delete_thread_removes_checkpoints_and_writes_of_every_namespace(it):
    thread_id, other = str(uuid4()), str(uuid4())
    for namespace in ("", "child:1"):
        stored = await it.put(config(thread_id, namespace), checkpoint(), metadata(), {})
        await it.put_writes(stored, [("ch", "val")], str(uuid4()))
    await it.put(config(other), checkpoint(), metadata(), {})
    await it.delete_thread(thread_id)
    for namespace in ("", "child:1"):
        assert await it.get_tuple(config(thread_id, namespace)) is None
    assert await it.ids(thread_id, None) == []
    assert await it.get_tuple(config(other)) is not None


async def test_delete_thread_of_an_unknown_thread_does_nothing(it):
    await it.delete_thread(str(uuid4()))


async def test_a_late_write_does_not_bring_a_deleted_thread_back(it):
    thread_id = str(uuid4())
    stored = await it.put(config(thread_id), checkpoint(), metadata(), {})
    await it.delete_thread(thread_id)
    await it.put(stored, checkpoint(), metadata(step=99), {})
    await it.put_writes(stored, [("ch", "late")], str(uuid4()))
    assert await it.get_tuple(config(thread_id)) is None
    assert await it.ids(thread_id, None) == []
