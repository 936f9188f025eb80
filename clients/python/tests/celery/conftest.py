"""Real Celery workers on the real Redis for the fenced-task tests.

Every test gets a key prefix of its own (broker queue, unacked index, result backend, marks) on
the Redis at ``FENCEGATE_TEST_REDIS_URL`` (default ``redis://127.0.0.1:6379``; database 13 unless
the URL names one), deleted after it.
"""

import os
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Iterator, List
from urllib.parse import urlsplit

import pytest

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parents[1]


def redis_url() -> str:
    url = os.environ.get("FENCEGATE_TEST_REDIS_URL") or "redis://127.0.0.1:6379"
    return url if urlsplit(url).path.strip("/") else url.rstrip("/") + "/13"


def worker_token(admin, tenant_name: str) -> str:
    """A worker token with the take-over right over the task scopes (``celery/``)."""
    made = admin.create_token(
        tenant=tenant_name, role="worker", label="celery worker", may_take_over=["celery/"]
    )
    return made["token"]


class Workers:
    """Worker processes of one test, and the environment they and the test share."""

    def __init__(self, env: Dict[str, str], logs: Path) -> None:
        self.env = env
        self.logs = logs
        self.processes: List[subprocess.Popen] = []

    def start(self, name: str, timeout: float = 30.0, **env: str) -> None:
        """Starts a worker process (with ``env`` added to the test's) and waits until it
        consumes."""
        log = self.logs / f"{name}.log"
        with open(log, "w") as out:
            child = subprocess.Popen(
                [sys.executable, str(HERE / "worker.py"), f"{name}@{self.env['FG_CELERY_PREFIX']}"],
                env={**self.env, **env},
                cwd=str(HERE),
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.processes.append(child)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if " ready." in log.read_text():
                return
            if child.poll() is not None:
                break
            time.sleep(0.05)
        pytest.fail(f"worker {name} did not start:\n{log.read_text()}")

    def output(self) -> str:
        return "".join(path.read_text() for path in sorted(self.logs.glob("*.log")))

    def stop(self) -> None:
        for child in self.processes:
            child.terminate()
        for child in self.processes:
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


class Environment(dict):
    """The workers' environment; it holds a token, so a failing test's report never prints it."""

    def __repr__(self) -> str:
        return f"Environment({len(self)} variables, FENCEGATE_URL={self.get('FENCEGATE_URL')!r})"


#: The policy the tasks module's fenced_effect pins its scopes to (so the jobs ledger has them).
TASK_POLICY = "celery-tasks-v1"


@pytest.fixture
def celery_env(server, admin, tenant, tmp_path) -> Dict[str, str]:
    tenant.operator().register_policy(TASK_POLICY)
    prefix = "fgtest-" + secrets.token_hex(4) + ":"
    return Environment(
        os.environ,
        FENCEGATE_URL=server.url,
        FENCEGATE_TOKEN=worker_token(admin, tenant.name),
        FG_CELERY_PREFIX=prefix,
        FG_CELERY_POLICY=TASK_POLICY,
        FG_CELERY_REDIS=redis_url(),
        PYTHONPATH=os.pathsep.join([str(PACKAGE), str(HERE)]),
        PYTHONDONTWRITEBYTECODE="1",
    )


@pytest.fixture
def tasks(celery_env, monkeypatch):
    """The tasks module, imported in this process with the test's environment."""
    for name, value in celery_env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.syspath_prepend(str(HERE))
    sys.modules.pop("tasks", None)
    import tasks as module  # noqa: WPS433  configured from the environment just set

    yield module
    # Each test imports the module afresh; its signal handler must not outlive it.
    module.task_postrun.disconnect(module.record_state)
    module.app.close()
    sys.modules.pop("tasks", None)
    for found in module.marks.scan_iter(match=celery_env["FG_CELERY_PREFIX"] + "*"):
        module.marks.delete(found)


@pytest.fixture
def workers(celery_env, tasks, tmp_path) -> Iterator[Workers]:
    group = Workers(celery_env, tmp_path)
    try:
        yield group
    finally:
        group.stop()


@pytest.fixture
def free_port() -> int:
    """A local port nothing listens on: a fencegate that cannot be reached."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
