"""Commits together (``POST /v1/commits``): ``commit_many`` answers each item as its commit alone
(a replay of an earlier item or batch, an invalid item refused on its own); a lost batch reply is
answered by sending the same batch again, not by a lookup per commit; the ``AsyncClient``
coalesces concurrent ``commit`` calls into one request, counted at the proxy in front of the
server, and sends each alone when coalescing is off."""

import asyncio

import fencegate
from fencegate import Write
from fencegate.errors import InvalidRequestError
from fault_proxy import DROP_REPLY


def commits(scope: str, fence: int, tag: str, n: int):
    return [
        {
            "scope": scope,
            "fence": fence,
            "operation_id": f"{tag}-{i}",
            "writes": [Write(f"{tag}-{i}", 0, {"i": i})],
        }
        for i in range(n)
    ]


def test_commit_many_answers_each_item_as_its_commit_alone(tenant):
    client = fencegate.Client(tenant.server.url, tenant.worker_token)
    grant = client.acquire("py-batch/a", holder="w", ttl_ms=60_000)
    first, second = commits(grant.scope, grant.fence, "a", 2)
    stale = {**commits(grant.scope, grant.fence + 5, "s", 1)[0]}
    invalid = {**commits(grant.scope, grant.fence, "bad", 1)[0], "operation_id": ""}
    answers = client.commit_many([first, stale, first, invalid, second])
    assert [getattr(a, "outcome", type(a).__name__) for a in answers] == [
        "committed",
        "rejected",
        "committed",
        "InvalidRequestError",
        "committed",
    ]
    assert isinstance(answers[3], InvalidRequestError)
    assert answers[1].error.code == "stale_fence"
    # The same commit again in the batch is a replay of the first; across batches too.
    assert (answers[0].replayed, answers[2].replayed) == (False, True)
    again = client.commit_many([second, stale])
    assert [a.replayed for a in again] == [True, True]


def test_a_lost_batch_reply_is_answered_by_the_same_batch_again(tenant, proxy):
    client = fencegate.Client(proxy.url, tenant.worker_token)
    grant = client.acquire("py-batch/l", holder="w", ttl_ms=60_000)
    proxy.seen.clear()
    proxy.faults = [DROP_REPLY]
    answers = client.commit_many(commits(grant.scope, grant.fence, "l", 4))
    assert [(a.outcome, a.replayed) for a in answers] == [("committed", True)] * 4
    assert [line.split(" ")[:2] for line in proxy.seen] == [["POST", "/v1/commits"]] * 2


def test_the_async_client_coalesces_concurrent_commits(tenant, proxy):
    async def scenario(coalesce: bool, tag: str):
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
    outcomes = [getattr(a, "outcome", type(a).__name__) for a in answers]
    assert outcomes == ["committed"] * 2 + ["rejected"] + ["committed"] * 3 + [
        "InvalidRequestError"
    ]
    asyncio.run(scenario(False, "d"))
    assert [line.split(" ")[1] for line in proxy.seen] == ["/v1/commit"] * 7
    proxy.close()
