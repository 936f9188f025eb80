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
            self.calls.append((name, kwargs))
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
    # One exchange: the newest checkpoint and its writes, and no blob (the values are known).
    assert [name for name, _ in client.calls] == ["read_records"]
    asked = client.calls[0][1]
    assert asked["records"] == []
    assert [page["prefix"].split("/")[0] for page in asked["pages"]] == ["cp", "wr"]
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


def test_against_a_server_without_reads_together_each_read_goes_on_its_own(tokens, proxy):
    writer = tokens.saver()
    thread_id = str(uuid4())
    first = writer.put(config(thread_id), checkpoint({"a": 1}), metadata(), {"a": 1})
    writer.put_writes(first, [("ch", "w")], "task")
    writer.close()
    proxy.missing_route = "/reads"  # a server older than POST /v1/scopes/:scope/reads
    reader = FencedCheckpointSaver(client=fencegate.Client(proxy.url, tokens.worker))
    for _ in range(2):  # the second read goes straight to the older reads
        found = reader.get_tuple(config(thread_id))
        assert found.checkpoint["channel_values"] == {"a": 1}
        assert found.pending_writes == [("task", "ch", "w")]
    tried = [line for line in proxy.seen if line.startswith("POST")]
    assert len(tried) == 1 and tried[0].endswith("/reads HTTP/1.1")
    reader.close()
