"""The fork of langgraph#8796, in two real processes: worker A runs a StateGraph with
durability="sync" and is frozen (SIGSTOP) inside its middle node; worker B claims the thread,
resumes it and finishes; A is thawed. A's run fails with StaleWriteOwnerError, B's terminal
checkpoint is still the tip, nothing of A's is stored after the claim, and verify is clean."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from uuid import uuid4

import pytest

import fencegate
from fencegate.langgraph import FencedCheckpointSaver

WORKER = Path(__file__).resolve().parent / "graph_worker.py"


def start(tokens, thread_id, name, api, workdir, mode):
    return subprocess.Popen(
        [
            sys.executable,
            str(WORKER),
            tokens.url,
            tokens.worker,
            thread_id,
            name,
            api,
            str(workdir),
            mode,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def ended(process, timeout=60):
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def wait_for(path, process, timeout=60):
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def all_records(client, scope):
    return {record.name: (record.revision, record.exists) for record in client.list_records(scope)}


@pytest.mark.parametrize("api", ["async", "sync"])
def test_a_thawed_worker_is_refused_and_the_successors_thread_stands(tokens, tenant, tmp_path, api):
    thread_id = f"thread-{uuid4()}"
    reader = fencegate.Client(tokens.url, tokens.worker)
    scope = FencedCheckpointSaver(client=reader).scope_for(thread_id)

    a = start(tokens, thread_id, "worker-a", api, tmp_path, "START")
    try:
        wait_for(tmp_path / "worker-a.inside", a)
        os.kill(a.pid, signal.SIGSTOP)
        (tmp_path / "go").write_text("go")

        b = start(tokens, thread_id, "worker-b", api, tmp_path, "RESUME")
        finished = ended(b)
        assert finished == {
            "outcome": "finished",
            "log": ["planned by worker-a", "thought by worker-b", "answered by worker-b"],
        }
        with FencedCheckpointSaver(client=reader) as saver:
            tip = saver.get_tuple({"configurable": {"thread_id": thread_id}})
        assert tip.checkpoint["channel_values"]["log"] == finished["log"]
        assert tip.metadata["step"] == 3
        before_thaw = all_records(reader, scope)
    finally:
        os.kill(a.pid, signal.SIGCONT)

    assert ended(a) == {
        "outcome": "refused",
        "error": "StaleWriteOwnerError",
        "code": "stale_fence",
    }
    assert all_records(reader, scope) == before_thaw
    with FencedCheckpointSaver(client=reader) as saver:
        after = saver.get_tuple({"configurable": {"thread_id": thread_id}})
    assert after.checkpoint["id"] == tip.checkpoint["id"]
    report = tenant.operator().verify()
    assert report.ok and report.violations == []
