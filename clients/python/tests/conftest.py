"""A real `fencegate serve` for the tests: started once per session on a fresh SQLite file with a
manual store clock (moved by the admin-only test route), and a fresh tenant per test.

``connect`` gives a test a client of each kind in turn (the blocking ``Client``, and the
``AsyncClient`` driven from a background event loop), so one test body checks that both behave
the same."""

import asyncio
import os
import secrets
import sys
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))

from fault_proxy import FaultProxy  # noqa: E402
from served import Server, serve  # noqa: E402

import fencegate  # noqa: E402

NODE = os.environ.get("FENCEGATE_NODE", "node")


@dataclass
class Tenant:
    name: str
    worker_token: str
    operator_token: str
    server: Server
    #: Makes the clients of worker() and operator(); a blocking Client when None.
    connect: Optional[Callable[..., Any]] = None

    def worker(self) -> Any:
        return self._client(self.worker_token)

    def operator(self) -> Any:
        return self._client(self.operator_token)

    def through(self, connect: Callable[..., Any]) -> "Tenant":
        """The same tenant, whose worker() and operator() are clients of another kind."""
        return replace(self, connect=connect)

    def _client(self, token: str) -> Any:
        if self.connect is None:
            return fencegate.Client(self.server.url, token)
        return self.connect(self.server.url, token)


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    with serve() as started:
        yield started


@pytest.fixture
def proxy(server: Server) -> Iterator[FaultProxy]:
    """A FaultProxy (fault_proxy.py) in front of the server."""
    proxy = FaultProxy(server.url)
    yield proxy
    proxy.close()


@pytest.fixture
def admin(server: Server) -> fencegate.Client:
    return fencegate.Client(server.url, server.admin_token)


@pytest.fixture
def tenant(server: Server, admin: fencegate.Client) -> Tenant:
    name = "py-" + secrets.token_hex(6)
    worker = admin.create_token(tenant=name, role="worker", label="pytest worker")
    operator = admin.create_token(tenant=name, role="operator", label="pytest operator")
    return Tenant(name, worker["token"], operator["token"], server)


def skip_without_route(server: Server, method: str, path: str, route: str = "") -> None:
    """Skips a test that needs a route this server does not have yet (404 without a token)."""
    request = urllib.request.Request(
        server.url + path,
        data=b"{}" if method != "GET" else None,
        method=method,
        headers={"content-type": "application/json"},
    )
    try:
        urllib.request.urlopen(request, timeout=10).close()
    except urllib.error.HTTPError as error:
        if error.code == 404:
            pytest.skip(f"this server has no {method} {route or path} route yet")


@pytest.fixture
def abandon_route(server: Server) -> None:
    skip_without_route(server, "POST", "/v1/operations/probe/abandon", "/v1/operations/:id/abandon")


class EventLoopThread:
    """An event loop running in a thread of its own, for driving AsyncClient from a test."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coroutine: Any, timeout: float = 60) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


class AsyncClientFromThread:
    """An AsyncClient whose calls a synchronous test can make: each one runs on the loop thread."""

    def __init__(self, client: "fencegate.AsyncClient", loop: EventLoopThread) -> None:
        self.client = client
        self._loop = loop

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.client, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._loop.run(method(*args, **kwargs))

        return call


@pytest.fixture(scope="session")
def event_loop_thread() -> Iterator[EventLoopThread]:
    loop = EventLoopThread()
    yield loop
    loop.close()


@pytest.fixture(params=["sync", "async"])
def connect(request: Any, event_loop_thread: EventLoopThread) -> Iterator[Callable[..., Any]]:
    """``connect(url, token, **options)``: a Client, or an AsyncClient called from this thread."""
    opened: List[fencegate.AsyncClient] = []

    def make(url: str, token: str, **options: Any) -> Any:
        if request.param == "sync":
            return fencegate.Client(url, token, **options)
        client = fencegate.AsyncClient(url, token, **options)
        opened.append(client)
        return AsyncClientFromThread(client, event_loop_thread)

    yield make
    for client in opened:
        event_loop_thread.run(client.aclose())
