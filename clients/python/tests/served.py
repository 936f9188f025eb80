"""A real ``fencegate serve`` for the tests: on a fresh SQLite file with a manual store clock
(moved by the admin-only test route), started from the repository's build."""

import contextlib
import json
import os
import re
import secrets
import subprocess
import tempfile
import threading
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, List

import pytest

ROOT = Path(__file__).resolve().parents[3]
BIN = ROOT / "bin" / "fencegate.js"
NODE = os.environ.get("FENCEGATE_NODE", "node")


@dataclass
class Server:
    url: str
    admin_token: str
    output: List[str]

    def advance_clock(self, ms: int) -> int:
        """Moves the store's clock (leases expire by store time)."""
        request = urllib.request.Request(
            self.url + "/v1/test/clock",
            data=json.dumps({"advanceMs": ms}).encode(),
            method="POST",
            headers={
                "authorization": f"Bearer {self.admin_token}",
                "content-type": "application/json",
            },
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(json.loads(response.read())["now"])


@contextlib.contextmanager
def serve(*extra: str) -> Iterator[Server]:
    """A ``fencegate serve`` on a fresh SQLite file with a manual store clock, ``extra`` its
    further flags (``--dispatch --targets FILE``), stopped on leaving."""
    if not (ROOT / "dist" / "cli" / "main.js").exists():
        pytest.fail("dist/ is missing: run `npm run build` in the repository first")
    admin = "adm_" + secrets.token_urlsafe(24)
    with tempfile.TemporaryDirectory(prefix="fencegate-py-") as work:
        env = {
            **os.environ,
            "FENCEGATE_ADMIN_TOKEN": admin,
            "FENCEGATE_TEST_CLOCK": "manual",
            "FENCEGATE_LOG_LEVEL": "warn",
        }
        child = subprocess.Popen(
            [NODE, str(BIN), "serve", "--store", f"sqlite:{work}/store.db", "--port", "0", *extra],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        output: List[str] = []
        url = None
        assert child.stdout is not None
        for line in child.stdout:
            output.append(line)
            found = re.search(r"fencegate listening on (http://\S+)", line)
            if found:
                url = found.group(1)
                break
        if url is None:
            child.wait()
            pytest.fail("fencegate serve did not start:\n" + "".join(output))
        # Keep draining its output so the server never blocks on a full pipe.
        drain = threading.Thread(target=lambda: output.extend(child.stdout or []), daemon=True)
        drain.start()
        try:
            yield Server(url=url, admin_token=admin, output=output)
        finally:
            child.terminate()
            child.wait(timeout=30)
