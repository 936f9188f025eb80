"""Reading back the checkpoint a saver wrote last: the store confirms it is still the newest in
one exchange and the values come from the saver's memory; a newer checkpoint of another writer,
a deleted thread or a changed value are read from the store as before."""

from uuid import uuid4

from lg_checkpoints import checkpoint, child_of, config, metadata

import fencegate
from fencegate.langgraph import FencedCheckpointSaver


class Recorded:
    """The real client, with a log of the methods the saver called on it."""

    def __init__(self, client):
        self._client = client
        self.calls = []

    def __getattr__(self, name):
        method = getattr(self._client, name)

        def recorded(*args, **kwargs):
            self.calls.append((name, args[1] if len(args) > 1 else kwargs.get("prefix")))
            return method(*args, **kwargs)

        return recorded


def recorded_saver(tokens):
    client = Recorded(fencegate.Client(tokens.url, tokens.worker))
    return FencedCheckpointSaver(client=client), client


def test_the_last_checkpoint_written_reads_without_its_blobs(tokens):
    saver, client = recorded_saver(tokens)
    thread_id = str(uuid4())
    first = saver.put(
        config(thread_id), checkpoint({"a": 1, "b": [2]}), metadata(), {"a": 1, "b": 1}
    )
    second = saver.put(
        child_of(first),
        checkpoint({"a": 3, "b": [2]}, {"a": 2, "b": 1}),
        metadata(step=1),
        {"a": 2},
    )
    saver.put_writes(second, [("ch", "w")], "task")
    client.calls.clear()
    found = saver.get_tuple(config(thread_id))
    assert found.checkpoint["id"] == second["configurable"]["checkpoint_id"]
    assert found.checkpoint["channel_values"] == {"a": 3, "b": [2]}
    assert found.pending_writes == [("task", "ch", "w")]
    assert [name for name, _ in client.calls] == ["list_records_page", "list_records_page"]
    # each read answers values of its own
    found.checkpoint["channel_values"]["b"].append(99)
    assert saver.get_tuple(config(thread_id)).checkpoint["channel_values"]["b"] == [2]
    saver.close()


def test_a_newer_checkpoint_of_another_writer_is_read_from_the_store(tokens):
    mine, _ = recorded_saver(tokens)
    thread_id = str(uuid4())
    stored = mine.put(config(thread_id), checkpoint({"a": "mine"}), metadata(), {"a": 1})
    mine.close()
    other = tokens.saver()
    newer = other.put(
        child_of(stored), checkpoint({"a": "theirs"}, {"a": 2}), metadata(step=1), {"a": 2}
    )
    other.close()
    found = mine.get_tuple(config(thread_id))
    assert found.checkpoint["id"] == newer["configurable"]["checkpoint_id"]
    assert found.checkpoint["channel_values"] == {"a": "theirs"}


def test_a_deleted_thread_is_not_answered_from_memory(saver):
    thread_id = str(uuid4())
    saver.put(config(thread_id), checkpoint({"a": 1}), metadata(), {"a": 1})
    saver.delete_thread(thread_id)
    assert saver.get_tuple(config(thread_id)) is None


def test_a_thread_deleted_by_another_saver_is_not_answered_from_memory(saver, tokens):
    thread_id = str(uuid4())
    saver.put(config(thread_id), checkpoint({"a": 1}), metadata(), {"a": 1})
    tokens.saver().delete_thread(thread_id)
    assert saver.get_tuple(config(thread_id)) is None
