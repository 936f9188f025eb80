"""A Python worker frozen with SIGSTOP while a TypeScript worker takes the scope over: when it
wakes (SIGCONT) its commit is rejected stale_fence, and verify finds no violation."""

import json
import os
import signal
import subprocess
import sys

import pytest
from conftest import HERE, NODE, ROOT

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs POSIX signals")


def test_frozen_python_worker_is_fenced_out_by_a_typescript_worker(server, tenant):
    scope, name = "wf-frozen/memory", "summary"
    operator = tenant.operator()
    worker = subprocess.Popen(
        [sys.executable, str(HERE / "frozen_worker.py"), server.url, tenant.worker_token, scope,
         name, "from-python"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stdout is not None and worker.stdin is not None
        read = json.loads(worker.stdout.readline())
        assert read["event"] == "READ"
        os.kill(worker.pid, signal.SIGSTOP)
        # Its go-ahead is already waiting when it wakes; frozen, it can neither act nor renew.
        worker.stdin.write("commit\n")
        worker.stdin.flush()
        server.advance_clock(3_001)

        replacement = subprocess.run(
            [NODE, "--import", "tsx", str(ROOT / "test/python/takeover-worker.ts"), server.url,
             tenant.worker_token, scope, name, "from-typescript"],
            cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
        )
        taken = json.loads(replacement.stdout.strip().splitlines()[-1])
        assert taken["fence"] == read["fence"] + 1
        assert taken["result"]["outcome"] == "committed"

        os.kill(worker.pid, signal.SIGCONT)
        woke = json.loads(worker.stdout.readline())
        assert worker.wait(timeout=60) == 0
    finally:
        if worker.poll() is None:
            os.kill(worker.pid, signal.SIGCONT)
            worker.kill()

    assert woke["event"] == "REJECTED"
    assert woke["code"] == "stale_fence"
    assert woke["details"]["currentFence"] == read["fence"] + 1
    record = operator.get_record(scope, name)
    assert record.value == "from-typescript"
    assert operator.get_scope(scope).holder == "ts-worker"
    report = operator.verify()
    assert report.ok and report.violations == []
