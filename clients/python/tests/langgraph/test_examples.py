"""examples/python_langgraph.py runs as its docstring says, against a real server, with a worker
token that holds the take-over right for ``langgraph/``."""

import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "python_langgraph.py"


def run_example(env):
    # -X dev reports what the example leaves open (a client's sockets) as a ResourceWarning.
    return subprocess.run(
        [sys.executable, "-X", "dev", str(EXAMPLE)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_langgraph_example_refuses_the_superseded_worker(tokens, tenant):
    env = {
        **os.environ,
        "FENCEGATE_URL": tokens.url,
        "FENCEGATE_TOKEN": tokens.worker,
        "FENCEGATE_THREAD": "example-thread",
        "PYTHONPATH": "",
    }
    done = run_example(env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ResourceWarning" not in done.stderr, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0] == "worker-a ran thread example-thread with fence 1"
    assert lines[1] == "worker-b took the thread over with fence 2: 8 messages"
    assert lines[2] == "worker-a was refused (stale_fence): it no longer owns the thread"
    assert lines[3] == "the thread ends with: worker-b replied"
    operator = tenant.operator()
    assert operator.get_scope("langgraph/example-thread").holder is None  # both released
    assert operator.verify().ok


def test_the_example_says_what_it_needs_without_a_token():
    env = {k: v for k, v in os.environ.items() if k != "FENCEGATE_TOKEN"}
    done = run_example(env)
    assert done.returncode == 64
    assert "FENCEGATE_TOKEN" in done.stdout
