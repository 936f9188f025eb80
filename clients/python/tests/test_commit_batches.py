"""Commits together (``POST /v1/commits``): ``commit_many`` answers each item as its commit alone
(a replay of an earlier item or batch, an invalid item refused on its own); a lost batch reply is
answered by sending the same batch again, not by a lookup per commit; the ``AsyncClient``
coalesces concurrent ``commit`` calls into one request, counted at the proxy in front of the
server, and sends each alone when coalescing is off; ``coalesce_window_ms`` gathers the commits of
a millisecond, and is refused outside 0 to 1. A batch is split to stay within the body limit
(``max_body_bytes``, 1 MiB by default), its answers in the order asked; a batch the server refuses
whole (over its limit, invalid as a body, a server without the route) goes commit by commit; an
item whose outcome is unknown is sent again and, still unknown, settled alone."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple
from unittest import mock

import pytest
from fault_proxy import DROP_REPLY, UNKNOWN_ITEM, FaultProxy

import fencegate
from fencegate import CommitResult, Write
from fencegate.errors import InvalidRequestError, OutcomeUnknownError

if TYPE_CHECKING:  # for the fixture's type only: which conftest a run imports first varies
    from conftest import Tenant

MiB = 1024 * 1024
#: A value of 200 KiB: five commits of it fit one body of 1 MiB, six do not.
BIG = "x" * (200 * 1024)


def commits(scope: str, fence: int, tag: str, n: int, value: Any = None) -> List[Dict[str, Any]]:
    return [
        {
            "scope": scope,
            "fence": fence,
            "operation_id": f"{tag}-{i}",
            "writes": [Write(f"{tag}-{i}", 0, {"i": i} if value is None else value)],
        }
        for i in range(n)
    ]


def result(answer: object) -> CommitResult:
    assert isinstance(answer, CommitResult), answer
    return answer


def outcomes(answers: Sequence[object]) -> List[str]:
    return [
        answer.outcome if isinstance(answer, CommitResult) else type(answer).__name__
        for answer in answers
    ]


def routes(proxy: FaultProxy) -> List[str]:
    """The path of each request the proxy took, in order."""
    return [line.split(" ")[1] for line in proxy.seen]


def batches_sent(proxy: FaultProxy) -> List[Tuple[int, List[str]]]:
    """Each ``POST /v1/commits`` the proxy took: its body's length and the operationIds in it."""
    return [
        (len(body), [commit["operationId"] for commit in json.loads(body)["commits"]])
        for line, body in proxy.requests
        if line.split(" ")[1] == "/v1/commits"
    ]


def test_commit_many_answers_each_item_as_its_commit_alone(tenant: Tenant) -> None:
    client = fencegate.Client(tenant.server.url, tenant.worker_token)
    grant = client.acquire("py-batch/a", holder="w", ttl_ms=60_000)
    first, second = commits(grant.scope, grant.fence, "a", 2)
    stale = {**commits(grant.scope, grant.fence + 5, "s", 1)[0]}
    invalid = {**commits(grant.scope, grant.fence, "bad", 1)[0], "operation_id": ""}
    answers = client.commit_many([first, stale, first, invalid, second])
    assert outcomes(answers) == [
        "committed",
        "rejected",
        "committed",
        "InvalidRequestError",
        "committed",
    ]
    assert isinstance(answers[3], InvalidRequestError)
    error = result(answers[1]).error
    assert error is not None and error.code == "stale_fence"
    # The same commit again in the batch is a replay of the first; across batches too.
    assert (result(answers[0]).replayed, result(answers[2]).replayed) == (False, True)
    again = client.commit_many([second, stale])
    assert [result(a).replayed for a in again] == [True, True]


def test_a_lost_batch_reply_is_answered_by_the_same_batch_again(
    tenant: Tenant, proxy: FaultProxy
) -> None:
    client = fencegate.Client(proxy.url, tenant.worker_token)
    grant = client.acquire("py-batch/l", holder="w", ttl_ms=60_000)
    proxy.seen.clear()
    proxy.faults = [DROP_REPLY]
    answers = client.commit_many(commits(grant.scope, grant.fence, "l", 4))
    assert [(result(a).outcome, result(a).replayed) for a in answers] == [("committed", True)] * 4
    assert [line.split(" ")[:2] for line in proxy.seen] == [["POST", "/v1/commits"]] * 2


def test_the_async_client_coalesces_concurrent_commits(tenant: Tenant, proxy: FaultProxy) -> None:
    async def scenario(coalesce: bool, tag: str) -> List[object]:
        async with fencegate.AsyncClient(
            proxy.url, tenant.worker_token, coalesce_commits=coalesce
        ) as client:
            grant = await client.acquire(f"py-batch/{tag}", holder="w", ttl_ms=60_000)
            batch = commits(grant.scope, grant.fence, tag, 6)
            batch[2]["fence"] = grant.fence + 1
            proxy.seen.clear()
            return await asyncio.gather(
                *(client.commit(**commit) for commit in batch),
                client.commit(grant.scope, grant.fence, "", [Write("x", 0, 1)]),
                return_exceptions=True,
            )

    answers = asyncio.run(scenario(True, "c"))
    assert [line.split(" ")[:2] for line in proxy.seen] == [["POST", "/v1/commits"]]
    assert outcomes(answers) == ["committed"] * 2 + ["rejected"] + ["committed"] * 3 + [
        "InvalidRequestError"
    ]
    asyncio.run(scenario(False, "d"))
    assert routes(proxy) == ["/v1/commit"] * 7
    proxy.close()


# The coalescing window


@contextlib.contextmanager
def loop_clock_held() -> Iterator[None]:
    """Holds the running event loop's clock still: no timer comes due (a coalescing window stays
    open) however slow the machine, while the loop goes on running what is ready."""
    loop = asyncio.get_running_loop()
    with mock.patch.object(loop, "time", return_value=loop.time()):
        yield


async def loop_turns(n: int) -> None:
    """Lets the event loop run ``n`` turns."""
    for _ in range(n):
        await asyncio.sleep(0)


def commit_in_separate_turns(
    tenant: Tenant, proxy: FaultProxy, tag: str, **options: Any
) -> Tuple[List[str], List[CommitResult]]:
    """Two commits of one AsyncClient, the second called turns of the event loop after the
    first, with the loop's clock held meanwhile: the paths of what went out while it was held,
    and the answers."""

    async def scenario() -> Tuple[List[str], List[CommitResult]]:
        async with fencegate.AsyncClient(proxy.url, tenant.worker_token, **options) as client:
            grant = await client.acquire(f"py-batch/{tag}", holder="w", ttl_ms=60_000)
            first, second = commits(grant.scope, grant.fence, tag, 2)
            proxy.seen.clear()
            with loop_clock_held():
                one = asyncio.ensure_future(client.commit(**first))
                await loop_turns(5)
                two = asyncio.ensure_future(client.commit(**second))
                await loop_turns(5)
                while_held = routes(proxy)
            return while_held, list(await asyncio.gather(one, two))

    return asyncio.run(scenario())


def test_a_window_of_1_ms_sends_commits_of_separate_loop_turns_together(
    tenant: Tenant, proxy: FaultProxy
) -> None:
    while_held, answers = commit_in_separate_turns(tenant, proxy, "w1", coalesce_window_ms=1)
    # Nothing leaves while the window is open; then both in one batch.
    assert while_held == []
    assert routes(proxy) == ["/v1/commits"]
    assert [(a.outcome, a.operation_id) for a in answers] == [
        ("committed", "w1-0"),
        ("committed", "w1-1"),
    ]


def test_by_default_a_commit_waits_only_for_the_rest_of_its_loop_turn(
    tenant: Tenant, proxy: FaultProxy
) -> None:
    client = fencegate.AsyncClient(proxy.url, tenant.worker_token)
    assert (client.coalesce_commits, client.coalesce_window_ms) == (True, 0)
    # Commits of separate turns go alone, each over POST /v1/commit ...
    _, answers = commit_in_separate_turns(tenant, proxy, "w0")
    assert routes(proxy) == ["/v1/commit", "/v1/commit"]
    assert [a.outcome for a in answers] == ["committed"] * 2

    # ... and those of one turn together (see also the test of coalescing above).
    async def one_turn() -> List[CommitResult]:
        async with fencegate.AsyncClient(proxy.url, tenant.worker_token) as client:
            grant = await client.acquire("py-batch/t0", holder="w", ttl_ms=60_000)
            proxy.seen.clear()
            batch = commits(grant.scope, grant.fence, "t0", 3)
            return list(await asyncio.gather(*(client.commit(**c) for c in batch)))

    assert [a.outcome for a in asyncio.run(one_turn())] == ["committed"] * 3
    assert routes(proxy) == ["/v1/commits"]


def test_with_coalescing_off_each_commit_goes_alone_whatever_the_window(
    tenant: Tenant, proxy: FaultProxy
) -> None:
    async def scenario() -> List[CommitResult]:
        async with fencegate.AsyncClient(
            proxy.url, tenant.worker_token, coalesce_commits=False, coalesce_window_ms=1
        ) as client:
            grant = await client.acquire("py-batch/off", holder="w", ttl_ms=60_000)
            proxy.seen.clear()
            batch = commits(grant.scope, grant.fence, "off", 3)
            return list(await asyncio.gather(*(client.commit(**c) for c in batch)))

    assert [a.outcome for a in asyncio.run(scenario())] == ["committed"] * 3
    assert routes(proxy) == ["/v1/commit"] * 3


@pytest.mark.parametrize("window", [-1, -0.001, 1.001, 2, 1000, math.nan, math.inf])
def test_a_window_outside_0_to_1_ms_is_refused(window: float) -> None:
    with pytest.raises(ValueError, match="coalesce_window_ms must be 0 to 1"):
        fencegate.AsyncClient("http://127.0.0.1:9", "token", coalesce_window_ms=window)


@pytest.mark.parametrize("window", [0, 0.25, 1])
def test_a_window_of_0_to_1_ms_is_taken(window: float) -> None:
    client = fencegate.AsyncClient("http://127.0.0.1:9", "token", coalesce_window_ms=window)
    assert client.coalesce_window_ms == window


# The body limit


def test_a_batch_over_1_mib_is_split_into_requests_under_it_answered_in_order(
    tenant: Tenant, proxy: FaultProxy, connect: Callable[..., Any]
) -> None:
    client = connect(proxy.url, tenant.worker_token)
    assert fencegate.Client(proxy.url, tenant.worker_token).max_body_bytes == MiB
    grant = tenant.worker().acquire("py-batch/big", holder="w", ttl_ms=60_000)
    batch = commits(grant.scope, grant.fence, "big", 8, BIG)
    answers = client.commit_many(batch)
    ids = [f"big-{i}" for i in range(8)]
    assert [(result(a).outcome, result(a).operation_id) for a in answers] == [
        ("committed", i) for i in ids
    ]
    assert [result(a).records[0].name for a in answers] == ids
    sent = batches_sent(proxy)
    assert routes(proxy) == ["/v1/commits"] * 2
    assert sum(length for length, _ in sent) > MiB
    assert all(length <= MiB for length, _ in sent)
    assert [ids for _, batch_ids in sent for ids in batch_ids] == ids
    assert tenant.worker().get_record(grant.scope, "big-7").value == BIG


def test_coalesced_commits_over_1_mib_are_split_each_caller_answered_its_own(
    tenant: Tenant, proxy: FaultProxy
) -> None:
    async def scenario() -> List[CommitResult]:
        async with fencegate.AsyncClient(proxy.url, tenant.worker_token) as client:
            grant = await client.acquire("py-batch/bigc", holder="w", ttl_ms=60_000)
            proxy.seen.clear()
            batch = commits(grant.scope, grant.fence, "bigc", 10, BIG)
            return list(await asyncio.gather(*(client.commit(**c) for c in batch)))

    answers = asyncio.run(scenario())
    assert [(a.outcome, a.operation_id) for a in answers] == [
        ("committed", f"bigc-{i}") for i in range(10)
    ]
    sent = batches_sent(proxy)
    assert routes(proxy) == ["/v1/commits"] * 2
    assert all(length <= MiB for length, _ in sent)
    assert [ids for _, batch_ids in sent for ids in batch_ids] == [f"bigc-{i}" for i in range(10)]


def test_max_body_bytes_is_the_limit_batches_are_split_at(
    tenant: Tenant, proxy: FaultProxy, connect: Callable[..., Any]
) -> None:
    limit = 300_000
    client = connect(proxy.url, tenant.worker_token, max_body_bytes=limit)
    grant = tenant.worker().acquire("py-batch/lim", holder="w", ttl_ms=60_000)
    # About 100 KB each: two fit in 300,000 bytes, three do not.
    answers = client.commit_many(commits(grant.scope, grant.fence, "lim", 5, "y" * 100_000))
    assert [result(a).operation_id for a in answers] == [f"lim-{i}" for i in range(5)]
    assert outcomes(answers) == ["committed"] * 5
    sent = batches_sent(proxy)
    assert [ids for _, ids in sent] == [["lim-0", "lim-1"], ["lim-2", "lim-3"]]
    assert all(length <= limit for length, _ in sent)
    # The last one, alone in its group, goes over POST /v1/commit.
    assert routes(proxy) == ["/v1/commits", "/v1/commits", "/v1/commit"]


# A batch refused whole


def test_a_batch_the_server_refuses_as_too_large_goes_commit_by_commit(
    tenant: Tenant, proxy: FaultProxy, connect: Callable[..., Any]
) -> None:
    # A client told the server takes 4 MiB sends the batch whole; the server answers 413.
    client = connect(proxy.url, tenant.worker_token, max_body_bytes=4 * MiB)
    grant = tenant.worker().acquire("py-batch/413", holder="w", ttl_ms=60_000)
    answers = client.commit_many(commits(grant.scope, grant.fence, "tl", 6, BIG))
    assert [(result(a).outcome, result(a).operation_id) for a in answers] == [
        ("committed", f"tl-{i}") for i in range(6)
    ]
    assert [length > MiB for length, _ in batches_sent(proxy)] == [True]
    assert routes(proxy) == ["/v1/commits"] + ["/v1/commit"] * 6


def test_a_batch_the_server_refuses_as_invalid_goes_commit_by_commit(
    tenant: Tenant, proxy: FaultProxy, connect: Callable[..., Any]
) -> None:
    client = connect(proxy.url, tenant.worker_token)
    grant = tenant.worker().acquire("py-batch/400", holder="w", ttl_ms=60_000)
    batch = commits(grant.scope, grant.fence, "iv", 3)
    # An integer no JavaScript number holds makes the whole body invalid: nothing applies, and
    # each commit goes alone, so that only its own item is refused.
    batch[1]["writes"] = [Write("iv-1", 0, {"amount": 2**60})]
    answers = client.commit_many(batch)
    assert outcomes(answers) == ["committed", "InvalidRequestError", "committed"]
    assert isinstance(answers[1], InvalidRequestError)
    assert answers[1].details.get("field") == "writes[0].value.amount"
    assert routes(proxy) == ["/v1/commits"] + ["/v1/commit"] * 3
    assert tenant.worker().get_record(grant.scope, "iv-1").exists is False


def test_a_server_without_the_batch_route_gets_each_commit_alone(
    tenant: Tenant, proxy: FaultProxy, connect: Callable[..., Any]
) -> None:
    proxy.missing_route = "/v1/commits"
    client = connect(proxy.url, tenant.worker_token)
    grant = tenant.worker().acquire("py-batch/404", holder="w", ttl_ms=60_000)
    answers = client.commit_many(commits(grant.scope, grant.fence, "nr", 3))
    assert outcomes(answers) == ["committed"] * 3
    assert routes(proxy) == ["/v1/commits"] + ["/v1/commit"] * 3


# An item whose outcome is unknown


def unknown_item(
    tenant: Tenant,
    proxy: FaultProxy,
    connect: Callable[..., Any],
    tag: str,
    attempts_unknown: int,
    retries: int = 3,
    settle_unknown: bool = True,
) -> List[object]:
    """``commit_many`` of three commits, the second answered outcome_unknown in its item (its
    commit applied by the server) by the first ``attempts_unknown`` batches that carry it."""
    client = connect(proxy.url, tenant.worker_token, retries=retries)
    grant = tenant.worker().acquire(f"py-batch/{tag}", holder="w", ttl_ms=60_000)
    proxy.unknown_operation = f"{tag}-1"
    proxy.faults = [UNKNOWN_ITEM] * attempts_unknown
    answers: List[object] = client.commit_many(
        commits(grant.scope, grant.fence, tag, 3), settle_unknown=settle_unknown
    )
    return answers


def test_an_item_whose_outcome_is_unknown_is_sent_again_and_answered_its_stored_outcome(
    tenant: Tenant, proxy: FaultProxy, connect: Callable[..., Any]
) -> None:
    answers = unknown_item(tenant, proxy, connect, "u", attempts_unknown=1)
    assert [(result(a).outcome, result(a).replayed) for a in answers] == [
        ("committed", False),
        ("committed", True),  # applied by the first batch: the resend replays it
        ("committed", False),
    ]
    # The unknown item again, in a batch of its own; no lookup of the operation.
    assert [ids for _, ids in batches_sent(proxy)] == [["u-0", "u-1", "u-2"], ["u-1"]]
    assert routes(proxy) == ["/v1/commits"] * 2


def test_an_item_still_unknown_after_the_retries_is_settled_alone_by_abandon(
    tenant: Tenant, proxy: FaultProxy, connect: Callable[..., Any]
) -> None:
    answers = unknown_item(tenant, proxy, connect, "k", attempts_unknown=2, retries=1)
    assert [(result(a).outcome, result(a).operation_id) for a in answers] == [
        ("committed", "k-0"),
        ("committed", "k-1"),  # the outcome stored for it, as abandon_operation answers it
        ("committed", "k-2"),
    ]
    assert routes(proxy) == ["/v1/commits", "/v1/commits", "/v1/operations/k-1/abandon"]
    assert [ids for _, ids in batches_sent(proxy)] == [["k-0", "k-1", "k-2"], ["k-1"]]


def test_with_settle_unknown_false_an_item_still_unknown_is_its_outcome_unknown_error(
    tenant: Tenant, proxy: FaultProxy, connect: Callable[..., Any]
) -> None:
    answers = unknown_item(
        tenant, proxy, connect, "n", attempts_unknown=2, retries=1, settle_unknown=False
    )
    assert outcomes(answers) == ["committed", "OutcomeUnknownError", "committed"]
    unknown = answers[1]
    assert isinstance(unknown, OutcomeUnknownError)
    assert unknown.details == {"operationId": "n-1"}
    assert "abandon_operation('n-1')" in unknown.message
    assert routes(proxy) == ["/v1/commits"] * 2
    # Only the store knows: the commit did apply.
    stored: Optional[CommitResult] = tenant.worker().get_operation("n-1")
    assert stored is not None and stored.outcome == "committed"
