"""A thread larger than one answer of the server: its channel values and pending writes pass the
server's byte budget (1 MiB by default), so the saver reads its blobs a few per request and
follows every page the budget cut short, and reads the checkpoint back whole."""

from uuid import uuid4

from lg_checkpoints import checkpoint, child_of, config, metadata

#: About 150 KB (200 KB if the saver stores it as base64): six of them pass the budget, three
#: fit one commit's 1 MiB body.
LARGE = "x" * 150_000


def test_a_checkpoint_larger_than_one_answer_reads_back_whole(make_saver):
    writer = make_saver()
    thread_id = str(uuid4())
    values = {channel: f"{channel}:{LARGE}" for channel in "abcdef"}
    first = writer.put(
        config(thread_id),
        checkpoint({c: values[c] for c in "abc"}),
        metadata(),
        {c: 1 for c in "abc"},
    )
    second = writer.put(
        child_of(first),
        checkpoint(values, {c: 1 for c in "abcdef"}),
        metadata(step=1),
        {"d": 1, "e": 1, "f": 1},
    )
    writes = [(f"ch{n}", f"{n}:{LARGE}") for n in range(6)]
    writer.put_writes(second, writes[:3], "task-1")
    writer.put_writes(second, writes[3:], "task-2")


    for reader in (make_saver(), writer):
        found = reader.get_tuple(config(thread_id))
        assert found.checkpoint["id"] == second["configurable"]["checkpoint_id"]
        assert found.checkpoint["channel_values"] == values
        assert sorted(found.pending_writes) == sorted(
            [("task-1", channel, value) for channel, value in writes[:3]]
            + [("task-2", channel, value) for channel, value in writes[3:]]
        )
        listed = list(reader.list(config(thread_id)))
        assert [t.checkpoint["id"] for t in listed] == [
            second["configurable"]["checkpoint_id"],
            first["configurable"]["checkpoint_id"],
        ]
