"""examples/python_worker.py runs as the README says, against a real server."""

import os
import subprocess
import sys

from conftest import ROOT

EXAMPLE = ROOT / "examples" / "python_worker.py"


def run_example(server, tenant, workflow):
    env = {
        **os.environ,
        "FENCEGATE_URL": server.url,
        "FENCEGATE_TOKEN": tenant.worker_token,
        "FENCEGATE_WORKFLOW": workflow,
        "PYTHONPATH": "",
    }
    return subprocess.run([sys.executable, str(EXAMPLE)], env=env, capture_output=True,
                          text=True, timeout=60)


def test_the_python_worker_example_commits_and_queues_its_intent(server, tenant):
    first = run_example(server, tenant, "wf-example")
    second = run_example(server, tenant, "wf-example")

    assert first.returncode == 0, first.stdout + first.stderr
    assert "committed revision 1 of wf-example/memory" in first.stdout
    assert second.returncode == 0, second.stdout + second.stderr
    assert "committed revision 2 of wf-example/memory" in second.stdout
    operator = tenant.operator()
    memory = operator.get_record("wf-example/memory", "memory")
    assert memory.value["notes"] == [
        "note 1 from the python worker",
        "note 2 from the python worker",
    ]
    intents = operator.list_intents(scope="wf-example/memory").items
    assert sorted(i["status"] for i in intents) == ["pending", "pending"]
    assert operator.get_scope("wf-example/memory").holder is None  # released at the end
    assert operator.verify().ok


def test_the_example_says_what_it_needs_without_a_token(server, tenant):
    env = {k: v for k, v in os.environ.items() if k != "FENCEGATE_TOKEN"}
    done = subprocess.run([sys.executable, str(EXAMPLE)], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 64
    assert "FENCEGATE_TOKEN" in done.stdout
