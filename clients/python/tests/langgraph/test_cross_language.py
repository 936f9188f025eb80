"""One record layout for both savers: a thread the TypeScript saver wrote reads in Python, and a
thread the Python saver wrote (then continued by TypeScript) reads in TypeScript."""

import json
import os
import subprocess
from pathlib import Path
from uuid import uuid4

from lg_checkpoints import checkpoint, config, metadata

SCRIPT = Path(__file__).resolve().parent / "ts_thread.js"
ROOT = Path(__file__).resolve().parents[4]


def typescript(tokens, thread_id, mode):
    done = subprocess.run(
        [
            os.environ.get("FENCEGATE_NODE", "node"),
            str(SCRIPT),
            tokens.url,
            tokens.worker,
            thread_id,
            mode,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_thread_written_in_typescript_reads_in_python(tokens, saver):
    thread_id = f"ts-{uuid4()}"
    written = typescript(tokens, thread_id, "write")
    tip = saver.get_tuple(config(thread_id))
    assert tip.checkpoint["id"] == written["id"]
    assert tip.checkpoint["channel_values"] == {"messages": ["from typescript"]}
    assert tip.metadata["step"] == 1
    assert tip.pending_writes == [("ts-task", "note", {"said": "typescript"})]


def test_a_thread_written_in_python_reads_and_continues_in_typescript(tokens, saver):
    thread_id = f"py-{uuid4()}"
    made = checkpoint({"messages": ["from python"]}, {"messages": 1})
    saver.put(config(thread_id), made, metadata(step=0), {"messages": 1})
    saver.close()  # gives the thread up, so the TypeScript worker may acquire it
    continued = typescript(tokens, thread_id, "write")
    read = typescript(tokens, thread_id, "read")
    assert read["id"] == continued["id"]
    assert read["parent"] == made["id"]
    assert read["values"] == {"messages": ["from python", "from typescript"]}
    assert read["writes"] == [["ts-task", "note", {"said": "typescript"}]]
