"""`fencegate serve --tenant-rate`: the blocking and the asyncio client wait past 429
rate_limited and send the same commit again; past their wait budget the call fails
RateLimitedError and the commit is not abandoned. One server with a rate for the module.

A 429 rate_limited whose body says no ``details.retryAfterMs`` is waited for as its standard
``Retry-After`` header says (seconds, or an HTTP date), within the same budget: against a tiny
local server that answers 429 with only the header, then 200."""

import asyncio
import json
import secrets
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import pytest
from served import Server, serve

import fencegate
from fencegate._rate_limit import MAX_WAIT_S, MIN_WAIT_S, rate_limit_pause
from fencegate._wire import Reply

RATE = 4  # a token every 250 ms: four quick commits still meet an empty bucket under load
BURST = 2


@pytest.fixture(scope="module")
def limited() -> Iterator[Server]:
    with serve("--tenant-rate", str(RATE), "--tenant-burst", str(BURST)) as running:
        yield running


def refill() -> None:
    """Until the tenant's bucket is full again."""
    time.sleep(BURST / RATE + 0.02)


def worker_token(server: Server) -> str:
    admin = fencegate.Client(server.url, server.admin_token)
    created = admin.create_token(tenant="py-" + secrets.token_hex(6), role="worker", label="rate")
    token: str = created["token"]
    return token


def test_blocking_client_commits_past_429s(limited: Server) -> None:
    client = fencegate.Client(limited.url, worker_token(limited))
    grants = [client.acquire(f"rl/{n}", "w", ttl_ms=60_000) for n in range(3)]
    results = [
        client.commit(
            g.scope,
            g.fence,
            f"rl-sync-{n}",
            writes=[{"name": "doc", "expectRevision": 0, "value": n}],
        )
        for n, g in enumerate(grants)
    ]
    assert [r.outcome for r in results] == ["committed"] * 3


def test_async_client_commits_past_429s_coalesced(limited: Server) -> None:
    token = worker_token(limited)

    async def run() -> List[str]:
        client = fencegate.AsyncClient(limited.url, token)
        try:
            grant = await client.acquire("rl/async", "w", ttl_ms=60_000)
            results = await asyncio.gather(
                *(
                    client.commit(
                        grant.scope,
                        grant.fence,
                        f"rl-async-{n}",
                        writes=[{"name": f"r{n}", "expectRevision": 0, "value": n}],
                    )
                    for n in range(6)
                )
            )
            return [r.outcome for r in results]
        finally:
            await client.aclose()

    assert asyncio.run(run()) == ["committed"] * 6


def test_past_the_wait_budget_a_commit_fails_rate_limited_and_is_not_abandoned(
    limited: Server,
) -> None:
    token = worker_token(limited)
    patient = fencegate.Client(limited.url, token)
    grant = patient.acquire("rl/budget", "w", ttl_ms=60_000)
    refill()
    impatient = fencegate.Client(limited.url, token, rate_limit_wait=0)
    refused = []
    for n in range(4):
        try:
            impatient.commit(
                grant.scope,
                grant.fence,
                f"rl-budget-{n}",
                writes=[{"name": f"b{n}", "expectRevision": 0, "value": n}],
            )
        except fencegate.errors.RateLimitedError as error:
            assert "nothing was changed" in error.message
            refused.append(n)
    assert refused
    refill()
    for n in refused:
        assert patient.get_operation(f"rl-budget-{n}") is None
        answer = patient.commit(
            grant.scope,
            grant.fence,
            f"rl-budget-{n}",
            writes=[{"name": f"b{n}", "expectRevision": 0, "value": n}],
        )
        assert answer.outcome == "committed"


# Retry-After, against a server that answers 429 with only the header


class RateLimitingServer:
    """Answers its first request ``429 rate_limited`` with ``retry_after`` as its Retry-After
    header and ``details`` as the error's details (None: none), or with a gateway's page and no
    fencegate body (``fencegate_body=False``); every later one ``200 {"ok": true}``."""

    def __init__(
        self,
        retry_after: Optional[str],
        details: Optional[Dict[str, Any]],
        fencegate_body: bool = True,
    ) -> None:
        self.requests: List[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.requests.append(self.path)
                if len(owner.requests) > 1:
                    self._answer(200, {"ok": True}, None)
                elif not fencegate_body:
                    self._answer(429, None, retry_after)
                else:
                    error: Dict[str, Any] = {"code": "rate_limited", "message": "slow down"}
                    if details is not None:
                        error["details"] = details
                    self._answer(429, {"error": error}, retry_after)

            def _answer(
                self, status: int, body: Optional[Dict[str, Any]], after: Optional[str]
            ) -> None:
                raw = b"<h1>Too Many Requests</h1>" if body is None else json.dumps(body).encode()
                kind = "text/html" if body is None else "application/json; charset=utf-8"
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(raw)))
                if after is not None:
                    self.send_header("retry-after", after)
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def healthz(kind: str, url: str, rate_limit_wait: float) -> Dict[str, Any]:
    """``healthz`` with a client of ``kind`` (sync or async), waiting ``rate_limit_wait`` in all."""
    if kind == "sync":
        return fencegate.Client(url, "token", rate_limit_wait=rate_limit_wait).healthz()

    async def call() -> Dict[str, Any]:
        async with fencegate.AsyncClient(url, "token", rate_limit_wait=rate_limit_wait) as client:
            return await client.healthz()

    return asyncio.run(call())


def seconds(n: int) -> Callable[[], str]:
    return lambda: str(n)


def http_date(offset_s: float) -> Callable[[], str]:
    """Retry-After as an HTTP date ``offset_s`` seconds from when the test runs."""
    return lambda: formatdate(time.time() + offset_s, usegmt=True)


# (Retry-After, the error's details, the wait budget, whether the call is answered): the budget
# tells the waits apart without timing them. A wait the header makes longer than the budget is
# not waited, and the 429 is the answer; one that fits is waited, and the request sent again.
# Without the header's word, the client waits 1 s.
RETRY_AFTER_CASES: Dict[
    str, Tuple[Callable[[], Optional[str]], Optional[Dict[str, Any]], float, bool]
] = {
    "seconds, within the budget": (seconds(0), {}, 0.5, True),
    "seconds, past the budget": (seconds(30), {}, 5.0, False),
    "an HTTP date passed": (http_date(-60), {}, 0.5, True),
    "an HTTP date past the budget": (http_date(30), {}, 5.0, False),
    "details.retryAfterMs first": (seconds(30), {"retryAfterMs": 0}, 5.0, True),
    "retryAfterMs null": (seconds(0), {"retryAfterMs": None}, 0.5, True),
    "no details at all": (seconds(0), None, 0.5, True),
    "unreadable: 1 s": (lambda: "soon", {}, 0.5, False),
    "absent: 1 s": (lambda: None, {}, 0.5, False),
}


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("case", list(RETRY_AFTER_CASES))
def test_a_429_without_retry_after_ms_waits_as_its_retry_after_header_says(
    kind: str, case: str
) -> None:
    header, details, budget, answered = RETRY_AFTER_CASES[case]
    server = RateLimitingServer(header(), details)
    try:
        if answered:
            assert healthz(kind, server.url, budget) == {"ok": True}
            assert server.requests == ["/healthz", "/healthz"]
        else:
            with pytest.raises(fencegate.errors.RateLimitedError) as refused:
                healthz(kind, server.url, budget)
            assert refused.value.http_status == 429
            assert server.requests == ["/healthz"]
    finally:
        server.close()


def rate_limited(retry_after: Optional[str], fencegates: bool = True) -> Reply:
    """A 429 with this Retry-After: fencegate's rate_limited, or (``fencegates=False``) a
    proxy's page."""
    if not fencegates:
        return Reply(429, "<h1>Too Many Requests</h1>", "text/html", retry_after=retry_after)
    body = {"error": {"code": "rate_limited", "message": "slow down", "details": {}}}
    return Reply(429, json.dumps(body), "application/json", retry_after=retry_after)


def test_a_retry_after_is_waited_at_most_10_s_and_a_bare_429_only_with_one() -> None:
    pause = rate_limit_pause(rate_limited("3600"), 0.0, 60.0)
    assert pause is not None and MAX_WAIT_S <= pause <= MAX_WAIT_S + 0.05
    far = formatdate(time.time() + 3600, usegmt=True)
    pause = rate_limit_pause(rate_limited(far), 0.0, 60.0)
    assert pause is not None and MAX_WAIT_S <= pause <= MAX_WAIT_S + 0.05
    pause = rate_limit_pause(rate_limited("2"), 0.0, 60.0)
    assert pause is not None and 2 <= pause <= 2.05
    # Within the budget left: 2 s more after 59 s waited is past 60 s.
    assert rate_limit_pause(rate_limited("2"), 59.0, 60.0) is None
    # A 429 that is not fencegate's (a proxy's or a gateway's page) is waited as its header says,
    # and not at all without one.
    pause = rate_limit_pause(rate_limited("1", fencegates=False), 0.0, 60.0)
    assert pause is not None and 1 <= pause <= 1.05
    assert rate_limit_pause(rate_limited(None, fencegates=False), 0.0, 60.0) is None
    assert rate_limit_pause(rate_limited("soon", fencegates=False), 0.0, 60.0) is None


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_bare_429_past_the_budget_is_rate_limited_nothing_changed(kind: str) -> None:
    # A gateway's 429 page, no fencegate body: past the wait budget it is the call's answer,
    # as the TypeScript client reports it (rate_limited, details.status 429), not an internal error.
    server = RateLimitingServer("30", None, fencegate_body=False)
    try:
        with pytest.raises(fencegate.errors.RateLimitedError) as refused:
            healthz(kind, server.url, 5.0)
        assert refused.value.details == {"status": 429}
        assert server.requests == ["/healthz"]
    finally:
        server.close()


def test_an_answer_asking_for_no_wait_still_waits_the_shortest_wait() -> None:
    # Retry-After 0, a date already past, retryAfterMs 0: never sent again at once, so a broken
    # proxy cannot make the client spin.
    past = formatdate(time.time() - 60, usegmt=True)
    for reply in (rate_limited("0"), rate_limited(past), rate_limited("0", fencegates=False)):
        pause = rate_limit_pause(reply, 0.0, 60.0)
        assert pause is not None and MIN_WAIT_S <= pause <= 2 * MIN_WAIT_S


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_wait_budget_or_a_body_limit_out_of_range_is_refused_when_the_client_is_made(
    kind: str,
) -> None:
    make = fencegate.Client if kind == "sync" else fencegate.AsyncClient
    for budget in (float("nan"), -1.0, float("inf")):
        with pytest.raises(ValueError, match="rate_limit_wait"):
            make("http://127.0.0.1:1", "t", rate_limit_wait=budget)
    for limit in (0, -1, 1023, 2048.5, True, 65 * 1024 * 1024):
        with pytest.raises(ValueError, match="max_body_bytes"):
            make("http://127.0.0.1:1", "t", max_body_bytes=limit)
    make("http://127.0.0.1:1", "t", rate_limit_wait=0.0, max_body_bytes=1024)
