"""The 15 clauses of LangGraph's proposed write_ownership capability (langgraph-ai/langgraph
PR 8894, for the fork of langgraph#8796), one test each, in our words, through the asynchronous
and the synchronous half. Reads go through the saver, never through a claimed writer."""

from uuid import uuid4

import pytest
from lg_checkpoints import checkpoint, config, metadata
from lg_through import Through

from fencegate import FencegateError
from fencegate.langgraph import StaleWriteOwnerError

pytestmark = [pytest.mark.asyncio, pytest.mark.parametrize("api", ["async", "sync"])]


@pytest.fixture
def it(saver, api):
    return Through(saver, api)


async def put(writer, thread_id, parent=None, step=0):
    base = config(thread_id) if parent is None else config(thread_id, checkpoint_id=parent)
    return await writer.put(base, checkpoint(), metadata(step=step), {})


async def refused(write):
    """The write raises the recognisable refusal (the marker the suite reads), not any error."""
    with pytest.raises(StaleWriteOwnerError) as caught:
        await write
    assert caught.value.is_stale_write_owner_error is True
    assert isinstance(caught.value, FencegateError)
    assert caught.value.code in ("stale_fence", "not_holder", "lease_expired", "authority_revoked")
    return caught.value


async def superseded(it):
    """A thread, a writer that wrote its first checkpoint, and the claim that superseded it."""
    thread_id = str(uuid4())
    stale = await it.claim(thread_id)
    stored = await put(stale, thread_id)
    current = await it.claim(thread_id)
    return thread_id, stale, stored, current


async def writes_at(it, thread_id, checkpoint_id):
    found = await it.get_tuple(config(thread_id, checkpoint_id=checkpoint_id))
    return [] if found is None else list(found.pending_writes)


async def test_1_a_claim_answers_a_writer(it):
    writer = await it.claim(str(uuid4()))
    for method in ("put", "aput", "put_writes", "aput_writes"):
        assert callable(getattr(writer.saver, method))


async def test_2_the_current_owner_puts_and_its_checkpoint_is_the_tip(it):
    thread_id = str(uuid4())
    owner = await it.claim(thread_id)
    stored = await put(owner, thread_id)
    assert await it.tip(thread_id) == stored["configurable"]["checkpoint_id"]


async def test_3_the_current_owners_pending_write_is_stored(it):
    thread_id = str(uuid4())
    owner = await it.claim(thread_id)
    stored = await put(owner, thread_id)
    await owner.put_writes(stored, [("ch", "owned")], str(uuid4()))
    assert [
        w[2] for w in await writes_at(it, thread_id, stored["configurable"]["checkpoint_id"])
    ] == ["owned"]


async def test_4_a_superseded_owners_put_is_refused(it):
    thread_id, stale, _, _ = await superseded(it)
    error = await refused(put(stale, thread_id, step=1))
    assert error.code == "stale_fence" and error.thread_id == thread_id


async def test_5_a_superseded_owners_put_stores_nothing(it):
    thread_id, stale, stored, _ = await superseded(it)
    await refused(put(stale, thread_id, step=1))
    assert await it.ids(thread_id) == [stored["configurable"]["checkpoint_id"]]


async def test_6_a_superseded_owner_cannot_fork_the_chain(it):
    thread_id = str(uuid4())
    a = await it.claim(thread_id)
    c1 = (await put(a, thread_id))["configurable"]["checkpoint_id"]
    b = await it.claim(thread_id)
    c2 = (await put(b, thread_id, parent=c1, step=1))["configurable"]["checkpoint_id"]
    # A still believes c1 is its tip and writes its own child of it, as a thawed worker does.
    await refused(put(a, thread_id, parent=c1, step=1))
    assert await it.tip(thread_id) == c2
    assert sorted(await it.ids(thread_id)) == sorted([c1, c2])


async def test_7_a_superseded_owners_put_writes_is_refused(it):
    _, stale, stored, _ = await superseded(it)
    await refused(stale.put_writes(stored, [("ch", "stale")], str(uuid4())))


async def test_8_a_superseded_owners_fresh_write_stores_nothing(it):
    thread_id, stale, stored, _ = await superseded(it)
    await refused(stale.put_writes(stored, [("ch", "stale")], str(uuid4())))
    assert await writes_at(it, thread_id, stored["configurable"]["checkpoint_id"]) == []


async def test_9_on_the_same_task_the_current_owners_value_survives(it):
    thread_id, stale, stored, current = await superseded(it)
    task = str(uuid4())
    await current.put_writes(stored, [("ch", "current")], task)
    await refused(stale.put_writes(stored, [("ch", "stale")], task))
    assert [
        w[2] for w in await writes_at(it, thread_id, stored["configurable"]["checkpoint_id"])
    ] == ["current"]


@pytest.mark.parametrize("channel", ["__resume__", "__error__", "__interrupt__", "__scheduled__"])
async def test_10_on_a_special_channel_the_current_owners_value_survives(it, channel):
    thread_id, stale, stored, current = await superseded(it)
    task = str(uuid4())
    await current.put_writes(stored, [(channel, "current")], task)
    await refused(stale.put_writes(stored, [(channel, "stale")], task))
    found = await writes_at(it, thread_id, stored["configurable"]["checkpoint_id"])
    assert [w[2] for w in found if w[1] == channel] == ["current"]


async def test_11_a_superseded_owner_stays_refused(it):
    thread_id, stale, stored, _ = await superseded(it)
    first = stored["configurable"]["checkpoint_id"]
    await refused(put(stale, thread_id, step=1))
    await refused(put(stale, thread_id, step=2))
    await refused(stale.put_writes(config(thread_id, checkpoint_id=first), [("ch", "x")], "t"))
    assert await it.ids(thread_id) == [first]


async def test_12_ownership_is_per_thread(it):
    one, two = str(uuid4()), str(uuid4())
    owner = await it.claim(one)
    await it.claim(two)
    stored = await put(owner, one, step=1)
    assert await it.tip(one) == stored["configurable"]["checkpoint_id"]


async def test_13_the_new_owner_writes_after_taking_over(it):
    thread_id = str(uuid4())
    old = await it.claim(thread_id)
    c1 = (await put(old, thread_id))["configurable"]["checkpoint_id"]
    new = await it.claim(thread_id)
    c2 = await put(new, thread_id, parent=c1, step=1)
    await new.put_writes(c2, [("ch", "recovered")], str(uuid4()))
    assert await it.tip(thread_id) == c2["configurable"]["checkpoint_id"]
    assert [w[2] for w in await writes_at(it, thread_id, c2["configurable"]["checkpoint_id"])] == [
        "recovered"
    ]


async def test_14_the_current_owners_repeated_write_is_absorbed_not_refused(it, api):
    thread_id = str(uuid4())
    owner = await it.claim(thread_id)
    stored = await put(owner, thread_id)
    task = str(uuid4())
    await owner.put_writes(stored, [("ch", "v")], task)
    await owner.put_writes(stored, [("ch", "v")], task)
    await owner.put_writes(stored, [("__resume__", "answer")], task)
    await owner.put_writes(stored, [("__resume__", "answer")], task)
    if api == "async":
        await owner.saver.acheck_write_ownership()
    else:
        owner.saver.check_write_ownership()
    found = await writes_at(it, thread_id, stored["configurable"]["checkpoint_id"])
    assert sorted(w[2] for w in found) == ["answer", "v"]


async def test_15_reads_need_no_ownership(it, make_saver, api):
    thread_id = str(uuid4())
    owner = await it.claim(thread_id)
    checkpoint_id = (await put(owner, thread_id))["configurable"]["checkpoint_id"]
    bystander = Through(make_saver(), api)
    assert await bystander.tip(thread_id) == checkpoint_id
    assert await bystander.ids(thread_id) == [checkpoint_id]
    # and reading took nothing away from the owner
    await put(owner, thread_id, parent=checkpoint_id, step=1)


async def test_the_barrier_tells_a_superseded_owner_it_lost(it, api):
    thread_id = str(uuid4())
    stale = await it.claim(thread_id)
    await it.claim(thread_id)
    if api == "async":
        await refused(stale.saver.acheck_write_ownership())
    else:
        with pytest.raises(StaleWriteOwnerError):
            stale.saver.check_write_ownership()
