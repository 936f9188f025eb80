"""`fencegate serve --tenant-rate`: the blocking and the asyncio client wait past 429
rate_limited and send the same commit again; past their wait budget the call fails
RateLimitedError and the commit is not abandoned. One server with a rate for the module."""

import asyncio
import secrets
import time
from typing import Iterator, List

import pytest
from served import Server, serve

import fencegate

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
